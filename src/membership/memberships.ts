import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import type { MembershipSync } from './cache/membership-sync.js';
import { changeMany, type BulkMembershipChange, type MembershipChangeRefusal } from './bulk-changes.js';
import type { Consent } from './consent.js';
import {
  countLeaves,
  findLeaveConsent,
  findMembership,
  hasLeftFor,
  leave,
  listLeaveEpisodes,
  rejoin,
  type LeaveEpisode,
  type LeavePage,
  type Membership,
  type MembershipWrite,
} from './membership.store.js';

export type { LeaveEpisode, LeavePage, Membership } from './membership.store.js';
export type { Consent } from './consent.js';
export {
  MAX_BULK_MEMBERSHIP_CHANGES,
  refusal,
  type BulkMembershipChange,
  type MembershipChangeOutcome,
  type MembershipChangeRefusal,
  type MembershipChangeResult,
} from './bulk-changes.js';
export type { MembershipState } from './membership-states.store.js';

export type MembershipAction = 'leave' | 'rejoin';

/** The membership capability's use cases: one user's state and leaves, and leaving and rejoining. */
export class Memberships {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly cache: MembershipSync,
    /** Each leave and rejoin asked for, and whether it changed the status (the metric). */
    private readonly onChange: (action: MembershipAction, changed: boolean) => void,
  ) {}

  /** A user never seen is ACTIVE with no version. */
  find(userId: string): Promise<Membership> {
    return findMembership(this.db, userId);
  }

  /** The page's leaves, oldest first. */
  leaves(userId: string, page: LeavePage): Promise<LeaveEpisode[]> {
    return listLeaveEpisodes(this.db, userId, page);
  }

  /** Why the leave at `leftAtNs` happened (its receipt says it); null where nothing was recorded. */
  leaveConsent(userId: string, leftAtNs: string): Promise<Consent | null> {
    return findLeaveConsent(this.db, userId, leftAtNs);
  }

  leaveCount(userId: string): Promise<number> {
    return countLeaves(this.db, userId);
  }

  /** Leaving while LEFT changes nothing: the boundary never moves. Answers once this instance's cache has it. */
  async leave(userId: string, consent: Consent): Promise<Membership> {
    return this.readYourWrite('leave', await leave(this.db, userId, consent));
  }

  /** Rejoining while ACTIVE changes nothing. Answers once this instance's cache has it. */
  async rejoin(userId: string, consent: Consent): Promise<Membership> {
    return this.readYourWrite('rejoin', await rejoin(this.db, userId, consent));
  }

  /** Each user left as by `leave`, one transaction per lock bucket; answers per user in input order. */
  leaveMany(userIds: readonly string[], consent: Consent): Promise<BulkMembershipChange> {
    return changeMany(this.db, this.cache, 'leave', userIds, consent, new Map(), (changed) => this.onChange('leave', changed));
  }

  /** Each user rejoined as by `rejoin`, but those in `refused` (reported in place) or whose purge runs. */
  rejoinMany(
    userIds: readonly string[],
    consent: Consent,
    refused: ReadonlyMap<string, MembershipChangeRefusal> = new Map(),
  ): Promise<BulkMembershipChange> {
    return changeMany(this.db, this.cache, 'rejoin', userIds, consent, refused, (changed) => this.onChange('rejoin', changed));
  }

  /**
   * A request carried Global Privacy Control (`Sec-GPC: 1`) for this user: an ACTIVE user leaves
   * with reason GLOBAL_PRIVACY_CONTROL, once: a user whose history holds such a leave already chose
   * to rejoin after it, and that choice stands (so a rejoin from a GPC browser is not undone by its
   * next request). True when this call left. Costs nothing for a user the cache knows as LEFT.
   */
  async honorGlobalPrivacyControl(userId: string): Promise<boolean> {
    if (this.cache.cache.isLeft(userId) || (await hasLeftFor(this.db, userId, 'GLOBAL_PRIVACY_CONTROL'))) return false;
    const change = await leave(this.db, userId, { reason: 'GLOBAL_PRIVACY_CONTROL', reasonText: null, policyVersion: null });
    await this.readYourWrite('leave', change);
    return change.changed;
  }

  /**
   * Answers once this instance's cache reflects the write, so the caller's next signal here takes
   * the fast path it expects (right after a rejoin, a stale LEFT would otherwise hold it back).
   * Other instances catch up within the notification delay; until then they err on the side of LEFT.
   */
  private async readYourWrite(action: MembershipAction, change: MembershipWrite): Promise<Membership> {
    this.onChange(action, change.changed);
    const { version } = change.membership;
    if (version !== null) await this.cache.caughtUp(BigInt(version));
    return change.membership;
  }
}
