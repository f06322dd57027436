import type { MembershipRow, MembershipStatus } from '../../db/schema.js';

/**
 * The membership store (this folder) is the one owner of the membership tables
 * (community_membership, leave_episode, membership_clock): every query on them is in this folder,
 * the boundary functions they call live in src/db/sql/. This file holds the records it returns.
 */

export interface Membership {
  userId: string;
  status: MembershipStatus;
  /** The current boundary (ns since the epoch, decimal); null while ACTIVE. */
  leftAtNs: string | null;
  /** The membership version of this state; null for a user who never left. */
  version: string | null;
}

export interface LeaveEpisode {
  leftAtNs: string;
  rejoinedAtNs: string | null;
  /** Signals the gate held back from this leave until the next one (decimal: a count can outgrow 2^53). */
  gatedSignals: string;
}

export interface MembershipWrite {
  membership: Membership;
  /** False when the call found the user already in the requested state. */
  changed: boolean;
}

export function toMembership(userId: string, row: MembershipRow | undefined): Membership {
  // A user with no row never left: ACTIVE.
  if (!row) return { userId, status: 'ACTIVE', leftAtNs: null, version: null };
  return { userId, status: row.status, leftAtNs: row.left_at_ns, version: row.version };
}

export function toLeaveEpisode(row: { left_at_ns: string; rejoined_at_ns: string | null; gated_signals: string | null }): LeaveEpisode {
  return { leftAtNs: row.left_at_ns, rejoinedAtNs: row.rejoined_at_ns, gatedSignals: row.gated_signals ?? '0' };
}
