import { badUserInput } from '../graphql/errors.js';
import type { Viewer } from '../auth/claims.js';

/**
 * Who may do what, in one place. Fields name a rule; the scope-auth plugin evaluates it before the
 * resolver runs, so a denied request writes nothing. A service caller (a token without a user id)
 * is never "the user themselves": it acts through its scopes only, and must name the user.
 *
 * | operation                                   | allowed                                   |
 * |---------------------------------------------|-------------------------------------------|
 * | communityLayerStatus(Changed), leave, rejoin | the user themselves, or community:admin   |
 * | signal, signals, validateSignal             | the user themselves, or signals:write     |
 * | communityItemAggregate, cohortItemAggregate | any authenticated caller                  |
 * | communityContributions                      | the user themselves, or community:admin   |
 * | purgeCommunityContributions, communityPurges, communityPurgeProgress | the user themselves, or community:admin |
 * | verifyCommunityAggregates, webhooks (all)   | community:admin                           |
 * | leave/rejoinCommunityLayerMany              | community:admin                           |
 * | communityMembershipChanges(Page)            | community:feed, service token only        |
 * | downstream processors (register, list, retire) | community:admin                         |
 * | acknowledgeCommunityPurge                   | community:purge-ack, service token only   |
 */
export interface AuthScopes {
  authenticated: boolean;
  admin: boolean;
  signalWriter: boolean;
  feedReader: boolean;
  purgeAcknowledger: boolean;
  /** A service caller: a token without a user id (a user token is refused whatever its scopes). */
  service: boolean;
  /** Every listed user id is the caller's own. */
  self: readonly string[];
}

export const rules = {
  actOnMembership: (userId: string | null) => ({ $any: { admin: true, self: userId === null ? [] : [userId] } }),
  sendSignals: (userIds: readonly string[]) => ({ $any: { signalWriter: true, self: userIds } }),
  readAggregates: { authenticated: true },
  readContributions: (userId: string) => ({ $any: { admin: true, self: [userId] } }),
  verifyAggregates: { admin: true },
  changeMemberships: { admin: true },
  // The feed carries every user's changes: for back-end services, never a user's token.
  readFeed: { $all: { feedReader: true, service: true } },
  acknowledgePurge: { purgeAcknowledger: true },
} as const;

export function scopeLoaders(
  viewer: Viewer | null,
  scopeNames: { admin: string; signalWriter: string; feedReader: string; purgeAcknowledger: string },
) {
  return {
    authenticated: viewer !== null,
    admin: viewer?.scopes.has(scopeNames.admin) ?? false,
    signalWriter: viewer?.scopes.has(scopeNames.signalWriter) ?? false,
    feedReader: viewer?.scopes.has(scopeNames.feedReader) ?? false,
    purgeAcknowledger: viewer?.scopes.has(scopeNames.purgeAcknowledger) ?? false,
    service: viewer !== null && viewer.userId == null,
    self: (userIds: readonly string[]) => viewer?.userId != null && userIds.length > 0 && userIds.every((id) => id === viewer.userId),
  };
}

/** The user a membership operation is about: the argument, else the caller (null for a service caller). */
export function targetUser(userId: string | null | undefined, viewer: Viewer | null): string | null {
  return userId ?? viewer?.userId ?? null;
}

/** As `targetUser`, once authorized: a service caller that named nobody gets BAD_USER_INPUT. */
export function requireTargetUser(userId: string | null | undefined, viewer: Viewer | null): string {
  const target = targetUser(userId, viewer);
  if (target === null) throw badUserInput('userId is required for service callers', 'userId');
  return target;
}
