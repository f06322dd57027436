import { describe, expect, it } from 'vitest';
import { aggregateMismatches, boundaryViolations, type Operation } from '../tooling/invariants.js';
import { bulkOn, historiesOf, rejoinOn, type Episode } from './support/bulk-membership-requests.js';
import { eventually, ROUTES, type Route, useCluster, type Cluster } from './support/harness.js';
import { signalOn, signalsOn } from './support/recorded-operations.js';

// Issue 50 item 4: one leaveCommunityLayerMany of 5,000 users (1,000 through PgBouncer) on
// instance 0, while single signals of those users and single rejoins of some of them reach both
// instances. Instance 1 never hears of a leave (no LISTEN), so its signals rely on the database
// guard alone.

/** The users of one run, all ACTIVE with a forwarded signal before the bulk leave; their roles in the race. */
function population(count: number) {
  const users = Array.from({ length: count }, (_, i) => String(300_000 + i));
  /** Rejoined one at a time while the bulk leave runs: before or after it reached them. */
  const racingRejoins = users.filter((_, i) => i % 50 === 7);
  /** Rejoined after the bulk leave returned. */
  const laterRejoins = users.filter((_, i) => i % 100 === 13);
  /** Never rejoined: LEFT for good once the bulk leave returned. */
  const stayingOut = users.filter((user) => !racingRejoins.includes(user) && !laterRejoins.includes(user));
  return { users, racingRejoins, laterRejoins, stayingOut };
}
const SIGNAL_CLIENTS = 8;
const REJOIN_CLIENTS = 2;
// The caller's budget is not what this test is about: 5,000 leaves and the signals are one admin's.
const UNBOUND_ADMIN = { FAIR_SHARE_ADMIN_CAPACITY: '100000000', FAIR_SHARE_ADMIN_RATE: '100000000' };

const pick = (users: string[]) => users[Math.floor(Math.random() * users.length)]!;
const signalOf = (userId: string) => ({
  userId,
  itemId: `item-${Number(userId) % 17}`,
  kind: 'VIEW',
  context: { cohortIds: Number(userId) % 3 === 0 ? [`cohort-${Number(userId) % 5}`] : [] },
});

// Through PgBouncer, a smaller call (still every lock bucket): each bucket's transaction lands on
// whatever server session the pooler gives it, with the signals' and rejoins' transactions between.
const USERS_BY_ROUTE: Record<Route, number> = { direct: 5_000, pgbouncer: 1_000 };

describe.each(ROUTES)('a bulk leave racing single signals and single rejoins on two instances, via %s', (route) => {
  const { users, racingRejoins, laterRejoins, stayingOut } = population(USERS_BY_ROUTE[route]);
  let cluster: Cluster;
  useCluster([{}, { membershipSync: false }], (started) => (cluster = started), route, UNBOUND_ADMIN);

  it('holds I1, I2 and I3 over the whole history, and every user has exactly the history its answers imply', async () => {
    const { apps } = cluster;
    const history: Operation[] = [];
    // Every user ACTIVE with a forwarded signal before the bulk leave.
    for (let i = 0; i < users.length; i += 1_000) {
      const instance = (i / 1_000) % 2;
      history.push(...(await signalsOn(apps[instance]!, users.slice(i, i + 1_000).map(signalOf), instance)));
    }
    expect(history.every((op) => op.forwarded)).toBe(true);

    // Signal clients run from before the bulk leave is sent until after it returned, so they span it.
    let bulkReturned = false;
    const running = new Set<number>();
    const signalClients = Array.from({ length: SIGNAL_CLIENTS }, async (_, client) => {
      const instance = client % 2;
      const during: Operation[] = [];
      while (!bulkReturned) {
        during.push(await signalOn(apps[instance]!, signalOf(pick(users)), instance));
        running.add(client);
      }
      // Sent after the bulk leave returned, for users nobody rejoins: the gate must hold every one back.
      const after: Operation[] = [];
      for (let i = 0; i < 10; i++) after.push(await signalOn(apps[instance]!, signalOf(pick(stayingOut)), instance));
      return { during, after };
    });
    await eventually(() => running.size === SIGNAL_CLIENTS, 60_000);

    const bulk = bulkOn(apps[0]!, 'leave', users, 0).finally(() => (bulkReturned = true));
    const rejoined = new Map<string, Episode | null>();
    const rejoinClients = Array.from({ length: REJOIN_CLIENTS }, async (_, client) => {
      for (let i = client; i < racingRejoins.length; i += REJOIN_CLIENTS) {
        const { operation, newest } = await rejoinOn(apps[i % 2]!, racingRejoins[i]!, i % 2);
        history.push(operation);
        rejoined.set(operation.userId, newest);
      }
    });
    const { answer, operations } = await bulk;
    history.push(...operations);
    await Promise.all(rejoinClients);
    const signalled = await Promise.all(signalClients);
    history.push(...signalled.flatMap(({ during, after }) => [...during, ...after]));
    expect(signalled.flatMap(({ after }) => after).every((op) => op.ok && !op.forwarded)).toBe(true);

    // Rejoined after the bulk leave returned; a signal then on the same instance is forwarded again.
    for (const [i, userId] of laterRejoins.entries()) {
      const { operation, newest } = await rejoinOn(apps[i % 2]!, userId, i % 2);
      history.push(operation);
      rejoined.set(userId, newest);
      const signal = await signalOn(apps[i % 2]!, signalOf(userId), i % 2);
      expect(signal.forwarded).toBe(true);
      history.push(signal);
    }

    expect(history.every((op) => op.ok)).toBe(true);
    expect(answer).toMatchObject({ changed: users.length, unchanged: 0, refused: 0 });
    expect(answer.results.map((result) => result.userId)).toEqual(users);
    expect(answer.results.every((result) => result.outcome === 'CHANGED' && result.membership && !result.refusal)).toBe(true);
    for (const userId of laterRejoins) expect(rejoined.get(userId)?.rejoinedAtNs).toBeTruthy();

    // Each user: the one leave the bulk call made, closed exactly when their rejoin says it closed it.
    const histories = await historiesOf(cluster.db, users);
    const differences: string[] = [];
    for (const result of answer.results) {
      const actual = histories.get(result.userId)!;
      const rejoin = rejoined.get(result.userId) ?? null;
      const closedBy = rejoin?.rejoinedAtNs ? rejoin : null;
      const leftAtNs = actual.episodes[0]?.leftAtNs;
      const expected = {
        episodes: [{ leftAtNs, rejoinedAtNs: closedBy?.rejoinedAtNs ?? null }],
        events: closedBy ? ['LEFT', 'REJOINED'] : ['LEFT'],
        status: closedBy ? 'ACTIVE' : 'LEFT',
      };
      const leaveMatches = result.membership?.leftAtNs == null || result.membership.leftAtNs === leftAtNs;
      const rejoinMatches = closedBy === null || closedBy.leftAtNs === leftAtNs;
      if (JSON.stringify(actual) !== JSON.stringify(expected) || !leaveMatches || !rejoinMatches)
        differences.push(`user ${result.userId}: ${JSON.stringify(actual)}, answers ${JSON.stringify({ result, rejoin })}`);
    }
    expect(differences).toEqual([]);

    expect(await boundaryViolations(cluster.db, history)).toEqual([]);
    expect(await aggregateMismatches(cluster.db)).toEqual([]);
  }, 300_000);
});
