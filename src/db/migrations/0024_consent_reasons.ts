import { sql, type Kysely } from 'kysely';
import type { Compatibility } from './compatibility.js';
import { applySqlFiles } from './sql-files.js';

/**
 * expand: nullable columns, a type, and new four-argument forms of the boundary functions beside
 * the one-argument forms earlier builds call, which keep their signature, their grants and what they
 * do (they now record no reason). Replacing the old form by one with DEFAULTs would drop it: its
 * grant would be gone until migrate re-grants, and an earlier build would fail meanwhile.
 */
export const compatibility: Compatibility = 'expand';

/**
 * Why, from where, under which policy (docs/api.md, "Reasons"): each leave and rejoin records its
 * reason, a bounded free text and the policy version on the leave history (the leave's and the
 * rejoin's) and on its change-feed event. NULL where nothing was recorded: changes from before this
 * migration, from an earlier build, or written in SQL. The bounds match src/membership/consent.ts.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TYPE consent_reason AS ENUM ('USER_REQUEST', 'ADMIN', 'GLOBAL_PRIVACY_CONTROL', 'CONSENT_PLATFORM');
    ALTER TABLE leave_episode
      ADD COLUMN left_reason consent_reason,
      ADD COLUMN left_reason_text text CHECK (char_length(left_reason_text) <= 500),
      ADD COLUMN left_policy_version text CHECK (char_length(left_policy_version) <= 64),
      ADD COLUMN rejoined_reason consent_reason,
      ADD COLUMN rejoined_reason_text text CHECK (char_length(rejoined_reason_text) <= 500),
      ADD COLUMN rejoined_policy_version text CHECK (char_length(rejoined_policy_version) <= 64);
    ALTER TABLE membership_event
      ADD COLUMN reason consent_reason,
      ADD COLUMN reason_text text CHECK (char_length(reason_text) <= 500),
      ADD COLUMN policy_version text CHECK (char_length(policy_version) <= 64);
  `.execute(db);
  await applySqlFiles(db, [
    ['membership_event_from_membership', 3],
    ['leave_community_layer', 5],
    ['rejoin_community_layer', 5],
  ]);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    DROP FUNCTION leave_community_layer(u64, consent_reason, text, text);
    DROP FUNCTION rejoin_community_layer(u64, consent_reason, text, text);
  `.execute(db);
  await applySqlFiles(db, [
    ['membership_event_from_membership', 2],
    ['leave_community_layer', 4],
    ['rejoin_community_layer', 4],
  ]);
  await sql`
    ALTER TABLE membership_event DROP COLUMN reason, DROP COLUMN reason_text, DROP COLUMN policy_version;
    ALTER TABLE leave_episode DROP COLUMN left_reason, DROP COLUMN left_reason_text, DROP COLUMN left_policy_version,
      DROP COLUMN rejoined_reason, DROP COLUMN rejoined_reason_text, DROP COLUMN rejoined_policy_version;
    DROP TYPE consent_reason;
  `.execute(db);
}
