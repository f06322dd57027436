import { sql, type Kysely } from 'kysely';
import type { Compatibility } from './compatibility.js';
import { applySqlFiles } from './sql-files.js';

/** expand: A new table and triggers. */
export const compatibility: Compatibility = 'expand';

/**
 * The change feed's outbox: one row per membership change and purge, written by triggers in the
 * change's own transaction, ordered by `position` (a membership_clock version, so positions commit
 * in order). Downstream readers page it by position; the webhook dispatcher enqueues from it.
 * Changes made before this migration are not in it (their history stays in leave_episode).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TYPE membership_event_kind AS ENUM ('LEFT', 'REJOINED', 'PURGE_REQUESTED', 'PURGE_FINISHED');
    CREATE TABLE membership_event (
      position bigint PRIMARY KEY,
      kind membership_event_kind NOT NULL,
      user_id u64 NOT NULL,
      -- LEFT: the boundary; REJOINED: the closed leave's; purge events: the purge's boundary.
      left_at_ns bigint,
      rejoined_at_ns bigint,
      purge_id bigint,
      recorded_at timestamptz NOT NULL DEFAULT now()
    );
  `.execute(db);
  await applySqlFiles(db, [
    ['membership_event_from_membership', 1],
    ['membership_event_from_purge', 1],
  ]);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    DROP TRIGGER membership_event_from_purge ON community_purge;
    DROP TRIGGER membership_event_from_membership ON community_membership;
    DROP FUNCTION membership_event_from_purge, membership_event_from_membership;
    DROP TABLE membership_event;
    DROP TYPE membership_event_kind;
  `.execute(db);
}
