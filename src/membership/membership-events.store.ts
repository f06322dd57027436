import type { Kysely } from 'kysely';
import type { Database, MembershipEventKind } from '../db/schema.js';
import { toConsent, type Consent } from './consent.js';

/** Membership store: the change feed's events (written by triggers, read here only). */

export interface MembershipEvent {
  /** The cursor and the event's id: positions only grow, and commit in order. */
  position: string;
  kind: MembershipEventKind;
  userId: string;
  /** LEFT: the boundary; REJOINED: the closed leave's; purge events: the purge's boundary. */
  leftAtNs: string | null;
  rejoinedAtNs: string | null;
  purgeId: string | null;
  recordedAt: Date;
  /** LEFT and REJOINED: why; null where nothing was recorded. */
  consent: Consent | null;
}

/**
 * The events for a statement of another capability (the webhook stores: dispatch pages, replays,
 * deliveries to attempt), which joins them as a subquery instead of naming this table. PostgreSQL
 * pulls a plain subquery up into the statement, so the plan is the one the table itself would get.
 */
export function membershipEvents(db: Kysely<Database>) {
  return db
    .selectFrom('membership_event')
    .select([
      'position',
      'kind',
      'user_id',
      'left_at_ns',
      'rejoined_at_ns',
      'purge_id',
      'recorded_at',
      'reason',
      'reason_text',
      'policy_version',
    ]);
}

/** Up to `limit` events after `after`, in position order. */
export async function listMembershipEvents(db: Kysely<Database>, after: bigint, limit: number): Promise<MembershipEvent[]> {
  const rows = await membershipEvents(db).where('position', '>', after.toString()).orderBy('position').limit(limit).execute();
  return rows.map((row) => ({
    position: row.position,
    kind: row.kind,
    userId: row.user_id,
    leftAtNs: row.left_at_ns,
    rejoinedAtNs: row.rejoined_at_ns,
    purgeId: row.purge_id,
    recordedAt: row.recorded_at,
    consent: toConsent(row.reason, row.reason_text, row.policy_version),
  }));
}
