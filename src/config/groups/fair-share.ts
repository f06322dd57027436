import { z } from 'zod';
import { count, flag, group, setting } from '../setting.js';

/** One budget: a bucket of `capacity` points refilled at `rate` points a second. */
export interface Budget {
  capacity: number;
  rate: number;
}

const points = (fallback: number) => count(1, 100_000_000).default(fallback);

/** `name=capacity/rate` pairs, comma-separated: larger (or smaller) budgets for named services. */
const serviceBudgets = z
  .string()
  .default('')
  .transform((value, ctx) => {
    const budgets = new Map<string, Budget>();
    for (const entry of value
      .split(',')
      .map((part) => part.trim())
      .filter(Boolean)) {
      const at = entry.lastIndexOf('=');
      const [capacity, rate] = entry
        .slice(at + 1)
        .split('/')
        .map(Number);
      if (at < 1 || !Number.isInteger(capacity) || !Number.isInteger(rate) || capacity! < 1 || rate! < 1) {
        ctx.addIssue({ code: 'custom', message: `"${entry}": write name=capacity/rate, e.g. feed-reader=50000/10000` });
        continue;
      }
      budgets.set(entry.slice(0, at), { capacity: capacity!, rate: rate! });
    }
    return budgets;
  });

/**
 * Fair share (src/budgets, docs/operations.md "Fair share"): each principal's budget, spent by each
 * operation's cost, cluster-wide; membership changes have a limit of their own per user.
 */
export const fairShare = group({
  enabled: setting('FAIR_SHARE', flag.default(true), '`false`: no budgets at all (no 429 `RATE_LIMITED`, no `RateLimit` headers)'),
  userCapacity: setting(
    'FAIR_SHARE_USER_CAPACITY',
    points(2_000),
    'points a user (a token with a user id) may spend at once: the bucket size',
  ),
  userRate: setting('FAIR_SHARE_USER_RATE', points(200), "points a second refilled into a user's bucket"),
  serviceCapacity: setting(
    'FAIR_SHARE_SERVICE_CAPACITY',
    points(20_000),
    'bucket size of a service (a token without a user id, named by its `sub`)',
  ),
  serviceRate: setting('FAIR_SHARE_SERVICE_RATE', points(5_000), "points a second refilled into a service's bucket"),
  services: setting(
    'FAIR_SHARE_SERVICES',
    serviceBudgets,
    'budgets of named services, `sub=capacity/rate` comma-separated (e.g. `ingest@clients=200000/50000`)',
    'none',
  ),
  adminCapacity: setting(
    'FAIR_SHARE_ADMIN_CAPACITY',
    points(100_000),
    'bucket size of a `community:admin` caller (trusted operators and their tools: the budget stops a runaway script, not a person)',
  ),
  adminRate: setting('FAIR_SHARE_ADMIN_RATE', points(20_000), "points a second refilled into an admin's bucket"),
  anonymousCapacity: setting('FAIR_SHARE_ANONYMOUS_CAPACITY', points(2_000), 'bucket size of unauthenticated requests, per client address'),
  anonymousRate: setting('FAIR_SHARE_ANONYMOUS_RATE', points(200), "points a second refilled into an address's bucket"),
  anonymousIpv4Prefix: setting(
    'FAIR_SHARE_ANONYMOUS_IPV4_PREFIX',
    count(0, 32).default(32),
    'unauthenticated IPv4 callers share one bucket per network of this prefix length (32: per address)',
  ),
  anonymousIpv6Prefix: setting(
    'FAIR_SHARE_ANONYMOUS_IPV6_PREFIX',
    count(0, 128).default(64),
    'unauthenticated IPv6 callers share one bucket per network of this prefix length (64: the /64 one subscriber is given)',
  ),
  membershipChanges: setting(
    'FAIR_SHARE_MEMBERSHIP_CHANGES',
    count(1, 1_000_000).default(60),
    'rejoins one user may make within FAIR_SHARE_MEMBERSHIP_WINDOW_SECONDS (whoever asks); leaves are never limited',
  ),
  membershipWindowSeconds: setting(
    'FAIR_SHARE_MEMBERSHIP_WINDOW_SECONDS',
    count(1, 86_400).default(60),
    'the window of FAIR_SHARE_MEMBERSHIP_CHANGES (the bucket refills over it)',
  ),
  instances: setting(
    'FAIR_SHARE_INSTANCES',
    count(1, 1000).default(4),
    'instances expected at most: while PostgreSQL is unreachable each enforces 1/this of every budget',
  ),
  syncMs: setting(
    'FAIR_SHARE_SYNC_MS',
    count(1, 10_000).default(10),
    'how long an instance gathers lease requests before asking PostgreSQL for all of them at once',
  ),
});
