// Issue 37's flood case: its rows' labels, the flooder's budget and the servers' settings (refusal-cost.ts and profile-flood.ts share them).

export const COUNTS = [1, 4] as const;
const suffix = (n: number) => `${n} process${n > 1 ? 'es' : ''}`;
export const P99 = (n: number) => `22. fair share: other users' p99 with one credential flooding at 10× its budget, ${suffix(n)}`;
export const ADMITTED = (n: number) => `22. fair share: flooder admitted vs its budget, ${suffix(n)}`;
export const FLOOR = (n: number) =>
  `22. fair share: other users' p99 with the same flood refused by bare HTTP servers (the floor), ${suffix(n)}`;
export const CPU = '22. fair share: server CPU per request, limits on vs off';

/**
 * The flooder's budget: a fifth of the other users' load (STEADY_PER_SEC), as a budget should be
 * sized (docs/operations.md, "Fair share"). At 100 a second, as much as all the others together,
 * what it was allowed doubled the writes and their p99 rose 1.7–2.4× from that alone.
 */
export const BUDGET = { capacity: 40, rate: 20 };
export const MEMBERSHIP = { changes: 60, windowSec: 60 };
export const ENVIRONMENT = {
  SIGNAL_QUEUE_MAX: '20000',
  FAIR_SHARE_USER_CAPACITY: String(BUDGET.capacity),
  FAIR_SHARE_USER_RATE: String(BUDGET.rate),
  FAIR_SHARE_MEMBERSHIP_CHANGES: String(MEMBERSHIP.changes),
  FAIR_SHARE_MEMBERSHIP_WINDOW_SECONDS: String(MEMBERSHIP.windowSec),
  FAIR_SHARE_INSTANCES: '4',
};
/** The other users' steady load: single signals of many users, well under capacity. */
export const STEADY_PER_SEC = 100;

/** Each flood runs this long before others' latencies count: its caller's burst (a full bucket) is spent first. */
export const FLOOD_WARMUP_SEC = 1;
