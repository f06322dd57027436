import { randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { startServerProcesses } from '../bench/processes.js';
import { mintToken } from '../src/auth/tokens.js';
import { startTemporaryPostgres } from '../src/db/temporary-postgres.js';
import { startPgBouncer } from '../test/support/pgbouncer.js';

/**
 * `npm run cluster -- --instances 4 [--pgbouncer]`: N server processes (src/main.ts) on one
 * embedded PostgreSQL, each on its own port; with --pgbouncer their pools go through a PgBouncer in
 * transaction mode (LISTEN and migrations straight to PostgreSQL). Ctrl-C stops everything.
 */
const { values } = parseArgs({ options: { instances: { type: 'string', default: '2' }, pgbouncer: { type: 'boolean', default: false } } });
const instances = Number(values.instances);
if (!Number.isInteger(instances) || instances < 1 || instances > 64) throw new Error('--instances must be an integer from 1 to 64');

const LIMITS = { statement_timeout: '15s', lock_timeout: '5s', idle_in_transaction_session_timeout: '15s' };
const database = await startTemporaryPostgres('community_layer');
if (values.pgbouncer) {
  // A transaction pooler passes no session settings: the role carries the limits (DB_SESSION_LIMITS=server),
  // set before PgBouncer opens its first server session.
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  for (const [setting, value] of Object.entries(LIMITS)) await client.query(`ALTER ROLE CURRENT_USER SET ${setting} = '${value}'`);
  await client.end();
}
const pgbouncer = values.pgbouncer ? await startPgBouncer(database.url) : null;
const secret = randomBytes(32).toString('base64url');
const environment: Record<string, string> = pgbouncer
  ? { DATABASE_URL: pgbouncer.pooled(database.url), DATABASE_LISTEN_URL: database.url, DB_SESSION_LIMITS: 'server', AUTH_JWT_SECRET: secret }
  : { DATABASE_URL: database.url, AUTH_JWT_SECRET: secret };
const stopAll = async () => {
  await processes?.stop();
  await pgbouncer?.stop();
  await database.stop();
};
let processes: Awaited<ReturnType<typeof startServerProcesses>> | undefined;
try {
  processes = await startServerProcesses({ count: instances, entry: 'src/main.ts', environment, echo: (text) => process.stderr.write(text) });
} catch (error) {
  await stopAll();
  throw error;
}
const token = await mintToken(secret, { sub: '1', scope: 'community:admin signals:write', expiresIn: '12h' });
console.log(
  [
    `${instances} server processes on one PostgreSQL${pgbouncer ? ' (pools through PgBouncer, transaction mode)' : ''}:`,
    ...processes.urls.map((url) => `  ${url}`),
    `DATABASE_URL=${environment.DATABASE_URL}`,
    `admin token: ${token}`,
    'Ctrl-C stops them.',
  ].join('\n'),
);
process.once('SIGINT', () => void stopAll().then(() => process.exit(0)));
process.once('SIGTERM', () => void stopAll().then(() => process.exit(0)));
