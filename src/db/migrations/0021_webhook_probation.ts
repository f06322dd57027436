import { sql, type Kysely } from 'kysely';
import type { Compatibility } from './compatibility.js';

/** expand: A column with a default (endpoints an older build adds start on probation). */
export const compatibility: Compatibility = 'expand';

/**
 * Webhook endpoints remember how many attempts in a row they answered 2xx within WEBHOOK_SLOW_MS
 * (counted up to 1000, the most WEBHOOK_PROBATION_SUCCESSES can ask): below the setting an
 * endpoint is on probation and its attempts share the slow lane (src/webhooks/slow-lane.ts). A
 * failure or a slow attempt sets it back to 0; one success does not lift the probation.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    ALTER TABLE webhook_endpoint ADD COLUMN fast_successes int NOT NULL DEFAULT 0 CHECK (fast_successes BETWEEN 0 AND 1000);
    -- Endpoints from before this migration that are not failing keep the trust they had: no probation.
    UPDATE webhook_endpoint SET fast_successes = 1000 WHERE failing_since IS NULL AND disabled_at IS NULL;
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE webhook_endpoint DROP COLUMN fast_successes`.execute(db);
}
