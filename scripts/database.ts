import { rm, writeFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { startScriptDatabase } from './script-database.js';

/**
 * `tsx scripts/database.ts --write-env FILE [--pgbouncer | --role-limits] [--two-roles]`: a real PostgreSQL (the embedded one, on
 * loopback) and optionally a PgBouncer in transaction mode before it, for checks that run the
 * production build, the image or the manifest against a database. Once both are up, FILE gets
 * `DATABASE_URL=…` and `DATABASE_LISTEN_URL=…` lines (and `DB_SESSION_LIMITS=server` behind
 * PgBouncer); `--role-limits`: the role carries the session limits, for a PgBouncer of the caller's;
 * `--two-roles`: those URLs log in as an app role granted nothing yet, and `OWNER_DATABASE_URL=…` as
 * the database's owner, which migrates and grants. Runs until SIGTERM or SIGINT, then removes everything.
 */
const { values } = parseArgs({
  options: {
    'write-env': { type: 'string' },
    pgbouncer: { type: 'boolean', default: false },
    'role-limits': { type: 'boolean', default: false },
    'two-roles': { type: 'boolean', default: false },
  },
});
const envFile = values['write-env'];
if (!envFile) throw new Error('usage: tsx scripts/database.ts --write-env FILE [--pgbouncer]');

const { environment, stop: stopDatabase } = await startScriptDatabase({
  pgbouncer: values.pgbouncer,
  roleLimits: values['role-limits'],
  twoRoles: values['two-roles'],
});
const lines = Object.entries(environment).map(([name, value]) => `${name}=${value}`);
await writeFile(envFile, `${lines.join('\n')}\n`, { mode: 0o600 });

const stop = async () => {
  await stopDatabase();
  await rm(envFile, { force: true });
  process.exit(0);
};
process.once('SIGTERM', () => void stop());
process.once('SIGINT', () => void stop());
