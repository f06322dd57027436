import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../src/app.js';
import { aggregateMismatches, boundaryViolations, type Operation } from '../tooling/invariants.js';
import { gql, ROUTES, startCluster, type Cluster, type Route } from './support/harness.js';

const SIGNAL = `mutation ($input: SignalInput!) { signal(input: $input) { signalId forwarded cohortsAttributed } }`;
const LEAVE = `mutation ($userId: UInt64!) { leaveCommunityLayer(userId: $userId) { status } }`;
const REJOIN = `mutation ($userId: UInt64!) { rejoinCommunityLayer(userId: $userId) { status } }`;

/**
 * Instances 0 and 1 keep their caches in sync over LISTEN/NOTIFY; instance 2 never hears of a
 * leave, so every signal it takes for a LEFT user relies on the database guard alone.
 */
const startThreeInstances = (route: Route = 'direct') => startCluster([{}, {}, { membershipSync: false }], route);

async function perform(apps: App[], kind: Operation['kind'], userId: string, instance: number, cohorts = 0): Promise<Operation> {
  const start = performance.now();
  const app = apps[instance]!;
  const response =
    kind === 'signal'
      ? await gql(app, SIGNAL, {
          input: {
            userId,
            itemId: `item-${Math.floor(Math.random() ** 3 * 20)}`,
            kind: 'VIEW',
            context: { cohortIds: Array.from({ length: cohorts }, (_, i) => `cohort-${(Number(userId) + i) % 5}`) },
          },
        })
      : await gql(app, kind === 'leave' ? LEAVE : REJOIN, { userId });
  const end = performance.now();
  const ok = response.status === 200 && !response.errors;
  const result = kind === 'signal' && ok ? response.data!.signal : {};
  return { kind, userId, instance, start, end, ok, ...result };
}

/** Random leaves, rejoins and signals from many concurrent clients across all instances. */
async function hammer(apps: App[], options: { users: number; clients: number; operationsPerClient: number }): Promise<Operation[]> {
  const history: Operation[] = [];
  await Promise.all(
    Array.from({ length: options.clients }, async () => {
      for (let i = 0; i < options.operationsPerClient; i++) {
        const userId = String(1_000 + Math.floor(Math.random() * options.users));
        const roll = Math.random();
        const kind = roll < 0.12 ? 'leave' : roll < 0.22 ? 'rejoin' : 'signal';
        const instance = Math.floor(Math.random() * apps.length);
        history.push(await perform(apps, kind, userId, instance, Math.floor(Math.random() * 3)));
      }
    }),
  );
  return history;
}

// Directly and through a transaction-pooling PgBouncer: the guard's locks and snapshots must hold on both.
describe.each(ROUTES)('the boundary under concurrency, via %s', (route) => {
  let cluster: Cluster;

  beforeAll(async () => {
    cluster = await startThreeInstances(route);
  });

  afterAll(() => cluster?.stop());

  it('holds I1, I2 and I3 over the whole recorded history of a random concurrent workload', async () => {
    const history = await hammer(cluster.apps, { users: 12, clients: 24, operationsPerClient: 60 });
    expect(history.every((op) => op.ok)).toBe(true);
    const signals = history.filter((op) => op.kind === 'signal');
    // The workload must exercise both sides of the gate, or the checks below prove little.
    expect(signals.some((op) => op.forwarded)).toBe(true);
    expect(signals.some((op) => !op.forwarded)).toBe(true);
    expect(await boundaryViolations(cluster.db, history)).toEqual([]);
    expect(await aggregateMismatches(cluster.db)).toEqual([]);
  });

  it('a signal sent after the leave returned is gated even by an instance whose cache never heard of it', async () => {
    const userId = '4242';
    const history = [await perform(cluster.apps, 'leave', userId, 0)];
    for (let i = 0; i < 5; i++) history.push(await perform(cluster.apps, 'signal', userId, 2, 2));
    expect(cluster.apps[2]!.services.membershipCache.cache.isLeft(userId)).toBe(false);
    expect(history.slice(1).map((op) => op.forwarded)).toEqual([false, false, false, false, false]);
    expect(await boundaryViolations(cluster.db, history)).toEqual([]);
  });
});

describe('the checks are strong enough to catch a missing database guard', () => {
  let cluster: Cluster | undefined;

  afterEach(() => cluster?.stop());

  it('reports I2 violations once ingest_signals stops reading the membership status', async () => {
    cluster = await startThreeInstances();
    const { rows } = await cluster.db.query(`SELECT pg_get_functiondef('ingest_signals'::regproc) AS def`);
    const guarded = rows[0].def as string;
    const unguarded = guarded.replace(`(i.open AND m.status IS DISTINCT FROM 'LEFT')`, 'i.open');
    expect(unguarded).not.toBe(guarded);
    await cluster.db.query(unguarded);

    const history = [await perform(cluster.apps, 'leave', '77', 0), await perform(cluster.apps, 'signal', '77', 2)];
    history.push(...(await hammer(cluster.apps, { users: 6, clients: 8, operationsPerClient: 20 })));
    const violations = await boundaryViolations(cluster.db, history);
    expect(violations.some((violation) => violation.startsWith('I2'))).toBe(true);
  });
});
