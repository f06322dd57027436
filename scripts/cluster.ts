import { randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import { startServerProcesses } from '../bench/processes.js';
import { mintToken } from '../src/auth/tokens.js';
import { startScriptDatabase } from './script-database.js';

/**
 * `npm run cluster -- --instances 4 [--pgbouncer]`: N server processes (src/main.ts) on one
 * embedded PostgreSQL, each on its own port; with --pgbouncer their pools go through a PgBouncer in
 * transaction mode (LISTEN and migrations straight to PostgreSQL). Ctrl-C stops everything.
 */
const { values } = parseArgs({ options: { instances: { type: 'string', default: '2' }, pgbouncer: { type: 'boolean', default: false } } });
const instances = Number(values.instances);
if (!Number.isInteger(instances) || instances < 1 || instances > 64) throw new Error('--instances must be an integer from 1 to 64');

const { environment: databaseEnvironment, stop: stopDatabase } = await startScriptDatabase({ pgbouncer: values.pgbouncer });
const secret = randomBytes(32).toString('base64url');
const environment: Record<string, string> = { ...databaseEnvironment, AUTH_JWT_SECRET: secret };
const stopAll = async () => {
  await processes?.stop();
  await stopDatabase();
};
let processes: Awaited<ReturnType<typeof startServerProcesses>> | undefined;
try {
  processes = await startServerProcesses({
    count: instances,
    entry: 'src/main.ts',
    environment,
    echo: (text) => process.stderr.write(text),
  });
} catch (error) {
  await stopAll();
  throw error;
}
const token = await mintToken(secret, { sub: '1', scope: 'community:admin signals:write', expiresIn: '12h' });
console.log(
  [
    `${instances} server processes on one PostgreSQL${values.pgbouncer ? ' (pools through PgBouncer, transaction mode)' : ''}:`,
    ...processes.urls.map((url) => `  ${url}`),
    `DATABASE_URL=${environment.DATABASE_URL}`,
    `admin token: ${token}`,
    'Ctrl-C stops them.',
  ].join('\n'),
);
process.once('SIGINT', () => void stopAll().then(() => process.exit(0)));
process.once('SIGTERM', () => void stopAll().then(() => process.exit(0)));
