import type { FairShare } from '../budgets/fair-share.js';
import type { FairShareConfig } from '../budgets/fair-share-config.js';
import { membershipChangesOf } from '../budgets/principal.js';
import { isU64 } from '../ids/u64.js';
import { MAX_BULK_MEMBERSHIP_CHANGES } from '../membership/memberships.js';

/** Users' limits asked at once: each a round trip to the shared bucket store for a user not seen lately. */
export const REJOIN_LIMIT_CONCURRENCY = 16;

/**
 * Each user of a bulk rejoin spends one point of their own rejoin limit, as a single rejoin does
 * (`takeOneLeased`, exact across instances); the users whose limit is spent, to be refused in place.
 * One list per bulk field of the operation (aliases count, as they run). Nothing is taken for a list
 * the resolver will refuse whole (malformed, repeated or too many ids).
 */
export async function spentRejoinLimits(fairShare: FairShare, budgets: FairShareConfig, lists: readonly unknown[][]): Promise<Set<string>> {
  const spent = new Set<string>();
  const pending = lists.filter(admissible).flat() as string[];
  const worker = async (): Promise<void> => {
    for (let userId = pending.pop(); userId !== undefined; userId = pending.pop()) {
      const limit = membershipChangesOf(userId, budgets);
      if (!(await fairShare.takeOneLeased(limit.key, limit.budget)).admitted) spent.add(userId);
    }
  };
  await Promise.all(Array.from({ length: Math.min(REJOIN_LIMIT_CONCURRENCY, pending.length) }, worker));
  return spent;
}

function admissible(userIds: readonly unknown[]): boolean {
  const wellFormed = userIds.every((userId) => typeof userId === 'string' && isU64(userId));
  return wellFormed && userIds.length <= MAX_BULK_MEMBERSHIP_CHANGES && new Set(userIds).size === userIds.length;
}
