import type { Viewer } from './authenticate.js';

/**
 * Who may do what, in one place. Fields name a rule; the scope-auth plugin evaluates it before the
 * resolver runs, so a denied request writes nothing.
 *
 * | operation                                   | allowed                                   |
 * |---------------------------------------------|-------------------------------------------|
 * | communityLayerStatus(Changed), leave, rejoin | the user themselves, or community:admin   |
 * | signal, signals, validateSignal             | the user themselves, or signals:write     |
 * | communityItemAggregate, cohortItemAggregate | any authenticated caller                  |
 * | communityContributions                      | community:admin                           |
 */
export interface AuthScopes {
  authenticated: boolean;
  admin: boolean;
  signalWriter: boolean;
  /** Every listed user id is the caller's own. */
  self: readonly string[];
}

export const rules = {
  actOnMembership: (userId: string | null) => ({ $any: { admin: true, self: userId === null ? [] : [userId] } }),
  sendSignals: (userIds: readonly string[]) => ({ $any: { signalWriter: true, self: userIds } }),
  readAggregates: { authenticated: true },
  readContributions: { admin: true },
} as const;

export function scopeLoaders(viewer: Viewer | null, scopeNames: { admin: string; signalWriter: string }) {
  return {
    authenticated: viewer !== null,
    admin: viewer?.scopes.has(scopeNames.admin) ?? false,
    signalWriter: viewer?.scopes.has(scopeNames.signalWriter) ?? false,
    self: (userIds: readonly string[]) => viewer !== null && userIds.length > 0 && userIds.every((id) => id === viewer.userId),
  };
}

/** The user a membership operation is about: the argument, else the caller. */
export function targetUser(userId: string | null | undefined, viewer: Viewer | null): string | null {
  return userId ?? viewer?.userId ?? null;
}
