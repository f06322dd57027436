import { parseArgs } from 'node:util';
import { kubeSecrets, secretsYaml } from './kube-secret-objects.js';
import { answerStandardOptions } from './command-line.js';
import { failInOneLine } from './one-line-failure.js';

const USAGE = `usage: node dist/src/cli/kube-secrets.js --listen-url postgres://APP:PASSWORD@HOST:5432/DB
                                          [--owner-url postgres://OWNER:PASSWORD@HOST:5432/DB] [--pooler HOST:PORT]

Prints the three Secrets deploy/kubernetes/community-layer.yaml needs, with fresh keys, as YAML:
  community-layer            DATABASE_URL (the --listen-url's role and database through PgBouncer),
                             DATABASE_LISTEN_URL (--listen-url itself: straight to the primary),
                             AUTH_JWT_SECRET (32 random bytes), RECEIPT_SIGNING_KEY (a new P-256 JWK)
  community-layer-pgbouncer  userlist.txt for that role
  community-layer-migrate    the migrate Job's DATABASE_URL and DATABASE_LISTEN_URL (--owner-url) and
                             DATABASE_APP_ROLE (the --listen-url's role, which migrate grants)
  --listen-url URL   the app role's session connection straight to the primary (never the pooler)
  --owner-url URL    the owner's, same database (docs/operations.md, "Roles and grants"); omitted:
                     the Job migrates as the app role, which then owns everything (not least privilege)
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
        'owner-url': { type: 'string' },
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
  process.stdout.write(
    secretsYaml(await kubeSecrets({ listenUrl: values['listen-url'], ownerUrl: values['owner-url'], pooler: values.pooler })),
  );
} catch (error) {
  fail(error instanceof Error ? error.message : String(error));
}
