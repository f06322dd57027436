import { parseArgs } from 'node:util';
import { kubeSecrets, secretsYaml } from './kube-secret-objects.js';
import { answerStandardOptions } from './command-line.js';
import { failInOneLine } from './one-line-failure.js';

const USAGE = `usage: node dist/src/cli/kube-secrets.js --listen-url postgres://ROLE:PASSWORD@HOST:5432/DB [--pooler HOST:PORT]

Prints the two Secrets deploy/kubernetes/community-layer.yaml needs, with fresh keys, as YAML:
  community-layer            DATABASE_URL (the --listen-url's role and database through PgBouncer),
                             DATABASE_LISTEN_URL (--listen-url itself: straight to the primary),
                             AUTH_JWT_SECRET (32 random bytes), RECEIPT_SIGNING_KEY (a new P-256 JWK)
  community-layer-pgbouncer  userlist.txt for that role
  --listen-url URL   a session connection straight to the primary (never the pooler)
  --pooler HOST:PORT PgBouncer's Service (default community-layer-pgbouncer:6432)
  --version          the version and commit
  -h, --help         this text
Apply once: ... | kubectl apply -f -   (run it again only to rotate every key at once).`;

answerStandardOptions(USAGE);
failInOneLine('kube-secrets', null);

function fail(message: string): never {
  console.error(`${message}\n\n${USAGE}`);
  process.exit(2);
}

function parse() {
  try {
    return parseArgs({
      options: {
        'listen-url': { type: 'string' },
        pooler: { type: 'string', default: 'community-layer-pgbouncer:6432' },
      },
    }).values;
  } catch (error) {
    return fail(error instanceof Error ? error.message : String(error));
  }
}

const values = parse();
if (!values['listen-url']) fail('--listen-url is required');
try {
  process.stdout.write(secretsYaml(await kubeSecrets({ listenUrl: values['listen-url'], pooler: values.pooler })));
} catch (error) {
  fail(error instanceof Error ? error.message : String(error));
}
