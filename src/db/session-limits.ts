import { sql, type Kysely } from 'kysely';
import type { Config } from '../config/config.js';
import type { Database } from './schema.js';

export class SessionLimitsError extends Error {
  override name = 'SessionLimitsError';
}

const LIMITS = [
  ['statement_timeout', 'statementTimeoutMs', 'DB_STATEMENT_TIMEOUT_MS'],
  ['lock_timeout', 'lockTimeoutMs', 'DB_LOCK_TIMEOUT_MS'],
  ['idle_in_transaction_session_timeout', 'idleInTransactionTimeoutMs', 'DB_IDLE_IN_TRANSACTION_TIMEOUT_MS'],
] as const;

/**
 * Start-up check that the pooled sessions run with the configured limits. Behind a transaction
 * pooler the app cannot set them (no startup parameters, and a session SET would leak to other
 * clients), so the role must carry them; this refuses to start, with the statements to run, when
 * it does not, rather than run without a statement timeout.
 */
export async function checkSessionLimits(db: Kysely<Database>, limits: Config['database']): Promise<void> {
  let row: Record<string, string>;
  try {
    const { rows } = await sql<Record<string, string>>`SELECT
      current_setting('statement_timeout') AS statement_timeout,
      current_setting('lock_timeout') AS lock_timeout,
      current_setting('idle_in_transaction_session_timeout') AS idle_in_transaction_session_timeout,
      current_user AS role`.execute(db);
    row = rows[0]!;
  } catch (error) {
    if (error instanceof Error && /unsupported startup parameter/.test(error.message)) {
      throw new SessionLimitsError(
        `DATABASE_URL refused the session limits as startup parameters (${error.message}); a transaction pooler such as ` +
          'PgBouncer does. Set DB_SESSION_LIMITS=server and give the role the limits (ALTER ROLE … SET statement_timeout …).',
      );
    }
    throw error;
  }
  if (limits.sessionLimits === 'startup') return;
  const wrong = LIMITS.filter(([setting, key]) => toMs(row[setting]!) !== limits[key]);
  if (wrong.length === 0) return;
  const role = row.role!;
  throw new SessionLimitsError(
    `DB_SESSION_LIMITS=server, but the database sessions run with ${wrong.map(([setting, key, variable]) => `${setting} = ${row[setting]} (${variable} = ${limits[key]})`).join(', ')}. ` +
      `Run: ${wrong.map(([setting, key]) => `ALTER ROLE "${role}" SET ${setting} = '${limits[key]}ms';`).join(' ')} ` +
      '(new server connections pick it up; reconnect the pooler: RECONNECT in its admin console).',
  );
}

/** PostgreSQL's display of a time setting ("15s", "500ms", "1min", "0") in milliseconds. */
function toMs(value: string): number {
  const match = /^(\d+)(ms|s|min|h|d)?$/.exec(value.trim());
  if (!match) return Number.NaN;
  const unit = { ms: 1, s: 1000, min: 60_000, h: 3_600_000, d: 86_400_000 }[match[2] ?? 'ms']!;
  return Number(match[1]) * unit;
}
