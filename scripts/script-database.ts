import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { loadConfig } from '../src/config/config.js';
import type { EmbeddedDatabase } from '../tooling/postgres/embedded.js';
import { startTemporaryPostgres } from '../tooling/postgres/temporary-postgres.js';
import { startPgBouncer, type PgBouncer } from '../tooling/pgbouncer.js';

export interface ScriptDatabase {
  database: EmbeddedDatabase;
  pgbouncer: PgBouncer | null;
  /**
   * What a server on it is given: the URLs, and DB_SESSION_LIMITS=server behind PgBouncer; with
   * `twoRoles`, the app role's, and OWNER_DATABASE_URL, the owner's (what migrate is given).
   */
  environment: Record<string, string>;
  stop(): Promise<void>;
}

/**
 * The database of `npm run cluster` and of the production checks: an embedded PostgreSQL in a
 * temporary folder and, with `pgbouncer`, a PgBouncer in transaction mode before it (LISTEN and
 * migrations straight to PostgreSQL). A transaction pooler passes no session settings, so the role
 * carries the limits, set before PgBouncer opens a server session: the configured defaults, which
 * start-up then finds (a restated copy here would drift from them). `roleLimits` alone: the same, for a
 * PgBouncer the caller runs itself (the manifest check runs the PgBouncer image). `twoRoles`: the
 * roles of docs/operations.md ("Roles and grants"), an owner of the database and an app role with
 * nothing granted yet (migrate grants it), neither a superuser; the limits go on the app role.
 */
export async function startScriptDatabase(options: {
  pgbouncer: boolean;
  roleLimits?: boolean;
  twoRoles?: boolean;
}): Promise<ScriptDatabase> {
  const database = await startTemporaryPostgres('community_layer');
  const roles = options.twoRoles ? await createRoles(database.url) : null;
  const appUrl = roles?.app ?? database.url;
  if (options.pgbouncer || options.roleLimits) {
    const { statementTimeoutMs, lockTimeoutMs, idleInTransactionTimeoutMs } = loadConfig({}).database;
    const limits = {
      statement_timeout: statementTimeoutMs,
      lock_timeout: lockTimeoutMs,
      idle_in_transaction_session_timeout: idleInTransactionTimeoutMs,
    };
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    const role = client.escapeIdentifier(new URL(appUrl).username);
    for (const [setting, ms] of Object.entries(limits)) await client.query(`ALTER ROLE ${role} SET ${setting} = '${ms}ms'`);
    await client.end();
  }
  const pgbouncer = options.pgbouncer ? await startPgBouncer(appUrl) : null;
  const owner: Record<string, string> = roles ? { OWNER_DATABASE_URL: roles.owner } : {};
  return {
    database,
    pgbouncer,
    environment: pgbouncer
      ? { DATABASE_URL: pgbouncer.pooled(appUrl), DATABASE_LISTEN_URL: appUrl, DB_SESSION_LIMITS: 'server', ...owner }
      : { DATABASE_URL: appUrl, DATABASE_LISTEN_URL: appUrl, ...owner },
    stop: async () => {
      await pgbouncer?.stop();
      await database.stop();
    },
  };
}

/** `community_layer_owner` owns the database; `community_layer_app` may log in, and CONNECT only once granted. */
async function createRoles(superuserUrl: string): Promise<{ owner: string; app: string }> {
  const client = new pg.Client({ connectionString: superuserUrl });
  await client.connect();
  const urls: Record<string, string> = {};
  try {
    for (const role of ['community_layer_owner', 'community_layer_app']) {
      const password = randomBytes(18).toString('base64url');
      await client.query(`CREATE ROLE ${role} LOGIN PASSWORD ${client.escapeLiteral(password)}`);
      const url = new URL(superuserUrl);
      url.username = role;
      url.password = password;
      urls[role] = url.href;
    }
    await client.query('ALTER DATABASE community_layer OWNER TO community_layer_owner');
    await client.query('REVOKE ALL ON DATABASE community_layer FROM PUBLIC');
  } finally {
    await client.end();
  }
  return { owner: urls['community_layer_owner']!, app: urls['community_layer_app']! };
}
