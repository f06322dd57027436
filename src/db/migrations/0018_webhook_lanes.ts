import { sql, type Kysely } from 'kysely';
import type { Compatibility } from './compatibility.js';

/** expand: Nullable columns. */
export const compatibility: Compatibility = 'expand';

/**
 * Webhook endpoints remember since when they have failed (disabled after WEBHOOK_DISABLE_AFTER_MS)
 * and how far the dispatcher had come when they were disabled (enabling one replays the events
 * dispatched in between, for which no delivery was created).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    ALTER TABLE webhook_endpoint ADD COLUMN failing_since timestamptz, ADD COLUMN disabled_position bigint;
    -- Endpoints disabled before this migration replay from the cursor of now.
    UPDATE webhook_endpoint SET disabled_position = (SELECT position FROM webhook_dispatch) WHERE disabled_at IS NOT NULL;
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE webhook_endpoint DROP COLUMN failing_since, DROP COLUMN disabled_position`.execute(db);
}
