import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { startEmbeddedPostgres } from '../src/db/embedded.js';
import { startPgBouncer } from '../test/support/pgbouncer.js';

/**
 * `tsx scripts/database.ts --write-env FILE [--pgbouncer]`: a real PostgreSQL (the embedded one, on
 * loopback) and optionally a PgBouncer in transaction mode before it, for checks that run the
 * production build, the image or the manifest against a database. Once both are up, FILE gets
 * `DATABASE_URL=…` and `DATABASE_LISTEN_URL=…` lines (and `DB_SESSION_LIMITS=server` behind
 * PgBouncer); runs until SIGTERM or SIGINT, then removes everything.
 */
const { values } = parseArgs({ options: { 'write-env': { type: 'string' }, pgbouncer: { type: 'boolean', default: false } } });
const envFile = values['write-env'];
if (!envFile) throw new Error('usage: tsx scripts/database.ts --write-env FILE [--pgbouncer]');

// The role carries the session limits, as a transaction pooler needs (DB_SESSION_LIMITS=server).
const LIMITS = { statement_timeout: '15s', lock_timeout: '5s', idle_in_transaction_session_timeout: '15s' };
const parent = await mkdtemp(path.join(tmpdir(), 'community-layer-database-'));
await chmod(parent, 0o755);
const database = await startEmbeddedPostgres({ dataDir: path.join(parent, 'pg'), database: 'community_layer', persistent: false, log: () => undefined });
if (values.pgbouncer) {
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  for (const [setting, value] of Object.entries(LIMITS)) await client.query(`ALTER ROLE CURRENT_USER SET ${setting} = '${value}'`);
  await client.end();
}
const pgbouncer = values.pgbouncer ? await startPgBouncer(database.url) : null;
const lines = pgbouncer
  ? [`DATABASE_URL=${pgbouncer.pooled(database.url)}`, `DATABASE_LISTEN_URL=${database.url}`, 'DB_SESSION_LIMITS=server']
  : [`DATABASE_URL=${database.url}`, `DATABASE_LISTEN_URL=${database.url}`];
await writeFile(envFile, `${lines.join('\n')}\n`, { mode: 0o600 });

const stop = async () => {
  await pgbouncer?.stop();
  await database.stop();
  await rm(parent, { recursive: true, force: true });
  await rm(envFile, { force: true });
  process.exit(0);
};
process.once('SIGTERM', () => void stop());
process.once('SIGINT', () => void stop());
