import { parseArgs } from 'node:util';
import { SCOPES } from '../auth/authenticate.js';
import { mintToken, resolveAuthKey } from '../auth/tokens.js';
import { isU64 } from '../ids/u64.js';
import { readConfigOrExit } from './read-config.js';
import { answerStandardOptions } from './command-line.js';
import { failInOneLine } from './one-line-failure.js';

const USAGE = `usage: npm run token -- (--sub <UInt64 user id> | --service <client id>) [--scope "<scopes>"] [--expires 12h]
   or: node dist/src/cli/token.js …

Mints a token signed with AUTH_JWT_SECRET (or, in development, the generated secret in .data/).
  --sub ID          a user's token: sub is the user's UInt64 id; the user acts for themselves
  --service NAME    a service caller's token: sub is NAME, a client id that is not a UInt64
                    (e.g. billing-backend); it acts only within its scopes, naming the user each
                    call is for. Needs --scope.
  --scope "A B"     space-separated scopes: ${SCOPES.signalWriter} (send signals for any user),
                    ${SCOPES.admin} (any user's membership and ledger),
                    ${SCOPES.purgeAcknowledger} (with --service: acknowledge purges as that processor)
  --expires SPAN    lifetime, e.g. 30m, 12h (default), 7d
  --version         the version and commit
  -h, --help        this text
With a public key or an identity provider configured, tokens come from whoever holds the private key.`;

answerStandardOptions(USAGE);
failInOneLine('token', null);

function fail(message: string): never {
  console.error(`${message}\n\n${USAGE}`);
  process.exit(2);
}

function parse() {
  try {
    return parseArgs({
      options: {
        sub: { type: 'string' },
        service: { type: 'string' },
        scope: { type: 'string' },
        expires: { type: 'string', default: '12h' },
      },
    }).values;
  } catch (error) {
    return fail(error instanceof Error ? error.message : String(error));
  }
}

const values = parse();
if ((values.sub === undefined) === (values.service === undefined)) fail('give exactly one of --sub and --service');
if (values.sub !== undefined && !isU64(values.sub)) fail(`--sub must be a UInt64 user id, not "${values.sub}"`);
if (values.service !== undefined) {
  // A UInt64 sub would make the caller that user (src/auth/claims.ts); an empty one is no caller.
  if (!values.service.trim() || isU64(values.service)) fail(`--service must name a client, not a UInt64 user id ("${values.service}")`);
  if (!values.scope?.trim()) fail('a service token needs --scope: a service caller can do only what its scopes allow');
}
// Minting needs no database: production's demand for DATABASE_URL is not this tool's.
const config = readConfigOrExit({ database: false });
const key = await resolveAuthKey(config.auth, config.database.embeddedDataDir);
if (key.kind !== 'secret') {
  console.error('A public key or an identity provider is configured: tokens come from the identity provider that holds the private key');
  process.exit(2);
}
try {
  console.log(
    await mintToken(key.secret, {
      sub: values.sub ?? values.service!,
      expiresIn: values.expires,
      ...(values.scope ? { scope: values.scope } : {}),
      ...(config.auth.issuer ? { issuer: config.auth.issuer } : {}),
      ...(config.auth.audience ? { audience: config.auth.audience } : {}),
    }),
  );
} catch (error) {
  // jose rejects a malformed --expires span.
  fail(error instanceof Error ? error.message : String(error));
}
