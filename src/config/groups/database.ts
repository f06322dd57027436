import { z } from 'zod';
import { count, flag, group, milliseconds, optional, postgresUrl, setting } from '../setting.js';

/**
 * The database, and the session limits of every pooled connection with how long a request may wait
 * for one. `sessionLimits`: `startup` sends the limits as startup parameters of each connection;
 * `server` means the server already applies them (ALTER ROLE … SET, for a transaction pooler that
 * refuses such parameters) and start-up checks that it does.
 */
export const database = group(
  {
    url: setting(
      'DATABASE_URL',
      optional(postgresUrl),
      'PostgreSQL to use (may be a transaction pooler); several hosts (`h1:5432,h2:5432`) with `target_session_attrs=read-write` follow the primary; unset starts the embedded one (development and tests only: required in production)',
    ),
    listenUrl: setting(
      'DATABASE_LISTEN_URL',
      optional(postgresUrl),
      'session connection straight to the primary, for LISTEN and migrations (never a transaction pooler; may list several hosts like `DATABASE_URL`)',
      '`DATABASE_URL`',
    ),
    requireSynchronousCommit: setting(
      'DATABASE_REQUIRE_SYNCHRONOUS_COMMIT',
      flag.default(false),
      '`true`: refuse to start (and report not ready) while the primary can lose acknowledged commits on failover (no synchronous standby, or `synchronous_commit` off/local)',
    ),
    embeddedDataDir: setting(
      'EMBEDDED_PG_DIR',
      z.string().min(1).default('.data/postgres'),
      'data folder of the embedded PostgreSQL (as root, a link to a folder `postgres` can reach when it cannot reach this one)',
    ),
    migrateOnStart: setting(
      'MIGRATE_ON_START',
      optional(flag),
      '`true`: an instance applies pending migrations at start (over `DATABASE_LISTEN_URL`); `false`: it refuses to start on a schema behind its own (run `migrate` first). Either way it refuses a newer schema',
      'on unless production',
    ),
    appRole: setting(
      'DATABASE_APP_ROLE',
      optional(z.string().min(1)),
      '`migrate` grants this role exactly what the running service needs (as `--grant-to`; docs/operations.md, "Roles and grants"); unset: no grants',
    ),
    poolMax: setting(
      'DB_POOL_MAX',
      count(2, 200).default(10),
      'pool size per instance (the listener and the purge worker use one more connection each)',
    ),
    acquireTimeoutMs: setting(
      'DB_ACQUIRE_TIMEOUT_MS',
      milliseconds.default(2_000),
      'longest wait for a pooled connection (and to open one) before a 503',
    ),
    statementTimeoutMs: setting('DB_STATEMENT_TIMEOUT_MS', milliseconds.default(5_000), '`statement_timeout` of every pooled connection'),
    queryTimeoutMs: setting(
      'DB_QUERY_TIMEOUT_MS',
      optional(milliseconds),
      'client-side deadline of one statement, then 503: backs up `statement_timeout`, which a server that stopped answering never reports; must exceed it',
      '`DB_STATEMENT_TIMEOUT_MS` + 1000',
    ),
    exportStatementTimeoutMs: setting(
      'DB_EXPORT_STATEMENT_TIMEOUT_MS',
      milliseconds.default(600_000),
      "`statement_timeout` of a user export's statements: a user's signals stream in one COPY, paced by the download; past it the export is cut off",
    ),
    lockTimeoutMs: setting('DB_LOCK_TIMEOUT_MS', milliseconds.default(5_000), '`lock_timeout` of every pooled connection'),
    idleInTransactionTimeoutMs: setting(
      'DB_IDLE_IN_TRANSACTION_TIMEOUT_MS',
      milliseconds.default(15_000),
      '`idle_in_transaction_session_timeout` of every pooled connection',
    ),
    sessionLimits: setting(
      'DB_SESSION_LIMITS',
      z.enum(['startup', 'server']).default('startup'),
      '`startup`: the app sends those three limits as startup parameters; `server`: the role carries them (behind a transaction pooler) and start-up checks they match',
    ),
  },
  (settings) =>
    settings
      .superRefine((database, ctx) => {
        if (database.listenUrl && !database.url) {
          ctx.addIssue({
            code: 'custom',
            path: ['listenUrl'],
            message: 'set only together with DATABASE_URL (the embedded database needs neither)',
          });
        }
        if (database.queryTimeoutMs !== undefined && database.queryTimeoutMs <= database.statementTimeoutMs) {
          ctx.addIssue({
            code: 'custom',
            path: ['queryTimeoutMs'],
            message: 'must exceed DB_STATEMENT_TIMEOUT_MS (the server cancels first; the client deadline backs it up)',
          });
        }
      })
      .transform((database) => ({ ...database, queryTimeoutMs: database.queryTimeoutMs ?? database.statementTimeoutMs + 1_000 })),
);

export function databaseInProduction(settings: z.output<typeof database.schema>, ctx: z.RefinementCtx): void {
  if (!settings.url) {
    ctx.addIssue({
      code: 'custom',
      path: ['database', 'url'],
      message: 'required in production (without it the service would start an embedded development database)',
    });
  }
}
