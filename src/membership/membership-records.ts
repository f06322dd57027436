import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import { countLeaves, findMembership, leave, listLeaveEpisodes, rejoin, type LeaveEpisode, type LeavePage, type Membership, type MembershipWrite } from './membership.store.js';

export type { LeaveEpisode, LeavePage, Membership, MembershipWrite } from './membership.store.js';
export type { MembershipState } from './membership-states.store.js';

/** Membership records as resolvers reach them: one user's state and leaves, and the two writes. */
export class MembershipRecords {
  constructor(private readonly db: Kysely<Database>) {}

  /** A user never seen is ACTIVE with no version. */
  find(userId: string): Promise<Membership> {
    return findMembership(this.db, userId);
  }

  /** The page's leaves, oldest first. */
  leaves(userId: string, page: LeavePage): Promise<LeaveEpisode[]> {
    return listLeaveEpisodes(this.db, userId, page);
  }

  leaveCount(userId: string): Promise<number> {
    return countLeaves(this.db, userId);
  }

  /** Leaving while LEFT changes nothing (`changed: false`): the boundary never moves. */
  leave(userId: string): Promise<MembershipWrite> {
    return leave(this.db, userId);
  }

  rejoin(userId: string): Promise<MembershipWrite> {
    return rejoin(this.db, userId);
  }
}
