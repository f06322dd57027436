import type { Viewer } from '../auth/claims.js';
import type { Budget } from '../config/groups/fair-share.js';
import { addressGroup } from './address-group.js';
import type { FairShareConfig } from './fair-share-config.js';

export type BudgetClass = 'user' | 'service' | 'admin' | 'anonymous';

/** Who spends a budget: its bucket's key, its class (for defaults and metrics), and the budget. */
export interface Principal {
  key: string;
  class: BudgetClass;
  budget: Budget;
}

/**
 * The caller a request is charged to: an admin by its subject; a user by its user id (the token's
 * `sub` by default); a service (a token without a user id) by its subject, which for client
 * credentials is the client id; an unauthenticated request by its network (its IPv4 address, its
 * IPv6 /64 by default: addressGroup).
 */
export function principalOf(viewer: Viewer | null, address: string, config: FairShareConfig): Principal {
  if (viewer === null)
    return { key: `anonymous:${addressGroup(address, config.anonymousPrefixes)}`, class: 'anonymous', budget: config.anonymous };
  if (viewer.scopes.has(config.adminScope))
    return { key: `admin:${viewer.subject ?? viewer.userId}`, class: 'admin', budget: config.admin };
  if (viewer.userId !== null) return { key: `user:${viewer.userId}`, class: 'user', budget: config.user };
  const name = viewer.subject ?? '';
  return { key: `service:${name}`, class: 'service', budget: config.services.get(name) ?? config.service };
}

/**
 * principalOf with each verified token's principal kept as long as its viewer (the authenticator
 * caches viewers): the door and the charge ask it for every request.
 */
export function principalCache(config: FairShareConfig): (viewer: Viewer | null, address: string) => Principal {
  const known = new WeakMap<Viewer, Principal>();
  return (viewer, address) => {
    if (viewer === null) return principalOf(null, address, config);
    let principal = known.get(viewer);
    if (!principal) known.set(viewer, (principal = principalOf(viewer, address, config)));
    return principal;
  };
}

/** One user's membership changes, whoever makes them: a budget of its own. */
export function membershipChangesOf(userId: string, config: FairShareConfig): Principal {
  return { key: `membership:${userId}`, class: 'user', budget: config.membership };
}

/**
 * How long each family of buckets may sit idle before it is forgotten: long enough to refill from
 * the deepest debt it can hold (one bucket below zero) to full, after which it is the same as a new
 * one. Seconds, for every class's largest budget; an anonymous network's is 20 s by default.
 */
export function forgetAfterSeconds(config: FairShareConfig): Array<{ prefix: string; idleSeconds: number }> {
  const refill = (...budgets: Budget[]) =>
    Math.max(1, Math.ceil(Math.max(...budgets.map((budget) => (2 * budget.capacity) / budget.rate))));
  return [
    { prefix: 'anonymous:', idleSeconds: refill(config.anonymous) },
    { prefix: 'user:', idleSeconds: refill(config.user) },
    { prefix: 'admin:', idleSeconds: refill(config.admin) },
    { prefix: 'service:', idleSeconds: refill(config.service, ...config.services.values()) },
    { prefix: 'membership:', idleSeconds: refill(config.membership) },
  ];
}
