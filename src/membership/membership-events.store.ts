import type { Kysely } from 'kysely';
import type { Database, MembershipEventKind } from '../db/schema.js';

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
}

/** Up to `limit` events after `after`, in position order. */
export async function listMembershipEvents(db: Kysely<Database>, after: bigint, limit: number): Promise<MembershipEvent[]> {
  const rows = await db
    .selectFrom('membership_event')
    .selectAll()
    .where('position', '>', after.toString())
    .orderBy('position')
    .limit(limit)
    .execute();
  return rows.map((row) => ({
    position: row.position,
    kind: row.kind,
    userId: row.user_id,
    leftAtNs: row.left_at_ns,
    rejoinedAtNs: row.rejoined_at_ns,
    purgeId: row.purge_id,
    recordedAt: row.recorded_at,
  }));
}
