import type pg from 'pg';
import { describe, expect, it } from 'vitest';
import type { App } from '../src/app.js';
import { DEFAULT_WEIGHTS } from '../src/signals/signal-kind.js';
import { aggregateMismatches } from '../tooling/invariants.js';
import { gql, type Cluster, useCluster, rowCounts } from './support/harness.js';

const SIGNAL = `mutation ($input: SignalInput!) { signal(input: $input) { signalId status forwarded cohortsAttributed } }`;
const SIGNALS = `mutation ($inputs: [SignalInput!]!) { signals(inputs: $inputs) { signalId status forwarded cohortsAttributed } }`;
const LEAVE = `mutation ($userId: UInt64!) { leaveCommunityLayer(userId: $userId) { leftAtNs } }`;
const REJOIN = `mutation ($userId: UInt64!) { rejoinCommunityLayer(userId: $userId) { status } }`;
const HISTORY = `query ($userId: UInt64!) { communityLayerStatus(userId: $userId) { history { leftAtNs rejoinedAtNs gatedSignals } } }`;
const COMMUNITY = `query ($itemId: ID!) { communityItemAggregate(itemId: $itemId) { itemId signalCount weightSum } }`;
const COHORT = `query ($cohortId: ID!, $itemId: ID!) { cohortItemAggregate(cohortId: $cohortId, itemId: $itemId) { itemId signalCount weightSum } }`;
const CONTRIBUTIONS = `query ($userId: UInt64!, $first: Int, $after: String) {
  communityContributions(userId: $userId, first: $first, after: $after) {
    edges { cursor node { signalId target cohortId itemId weight atNs } }
    pageInfo { hasNextPage endCursor }
  }
}`;

let app: App;
let db: pg.Client;
useCluster(
  [{}],
  (cluster) =>
    ({
      db,
      apps: [app],
    } = cluster as Cluster & { apps: [App] }),
);

async function send(input: Record<string, unknown>) {
  const response = await gql(app, SIGNAL, { input });
  expect(response.errors).toBeUndefined();
  return response.data!.signal;
}

describe('signal', () => {
  it('an ACTIVE user reaches the community and every distinct cohort, with ledger entries on the database clock', async () => {
    const { rows: clock } = await db.query('SELECT now_ns()::text AS ns');
    const result = await send({
      userId: '100',
      itemId: 'item-a',
      kind: 'LIKE',
      context: { cohortIds: ['c1', 'c2', 'c1'], surface: 'feed' },
    });
    expect(result).toMatchObject({ status: 'ACTIVE', forwarded: true, cohortsAttributed: 2 });

    expect((await gql(app, COMMUNITY, { itemId: 'item-a' })).data!.communityItemAggregate).toEqual({
      itemId: 'item-a',
      signalCount: 1,
      weightSum: DEFAULT_WEIGHTS.LIKE,
    });
    expect((await gql(app, COHORT, { cohortId: 'c2', itemId: 'item-a' })).data!.cohortItemAggregate.signalCount).toBe(1);

    const edges = (await gql(app, CONTRIBUTIONS, { userId: '100' })).data!.communityContributions.edges;
    expect(edges.map((e: any) => e.node.target).sort()).toEqual(['c1', 'c2', 'community']);
    for (const { node } of edges) {
      expect(node).toMatchObject({ signalId: result.signalId, itemId: 'item-a', weight: DEFAULT_WEIGHTS.LIKE });
      expect(BigInt(node.atNs)).toBeGreaterThanOrEqual(BigInt(clock[0].ns));
    }
    const { rows } = await db.query('SELECT kind, surface, cohort_ids, forwarded FROM signal WHERE id = $1', [result.signalId]);
    expect(rows).toEqual([{ kind: 'LIKE', surface: 'feed', cohort_ids: ['c1', 'c2'], forwarded: true }]);
  });

  it('uses the default weight per kind and keeps an explicit one', async () => {
    for (const [kind, weight] of Object.entries(DEFAULT_WEIGHTS)) {
      await send({ userId: '101', itemId: `w-${kind}`, kind });
      expect((await gql(app, COMMUNITY, { itemId: `w-${kind}` })).data!.communityItemAggregate.weightSum).toBe(weight);
    }
    await send({ userId: '101', itemId: 'w-explicit', kind: 'VIEW', weight: -0.125 });
    expect((await gql(app, COMMUNITY, { itemId: 'w-explicit' })).data!.communityItemAggregate.weightSum).toBe(-0.125);
  });

  it('a LEFT user: stored, reaches nothing, counted in gatedSignals; after rejoin forwarded again', async () => {
    const before = (await gql(app, COMMUNITY, { itemId: 'item-g' })).data!.communityItemAggregate;
    await gql(app, LEAVE, { userId: '102' });
    const gated = await send({ userId: '102', itemId: 'item-g', kind: 'VIEW', context: { cohortIds: ['c1'] } });
    expect(gated).toMatchObject({ status: 'LEFT', forwarded: false, cohortsAttributed: 0 });
    await send({ userId: '102', itemId: 'item-g', kind: 'CLICK' });

    const { rows } = await db.query('SELECT forwarded, cohort_ids FROM signal WHERE id = $1', [gated.signalId]);
    expect(rows).toEqual([{ forwarded: false, cohort_ids: ['c1'] }]);
    expect((await gql(app, COMMUNITY, { itemId: 'item-g' })).data!.communityItemAggregate).toEqual(before);
    expect((await gql(app, COHORT, { cohortId: 'c1', itemId: 'item-g' })).data!.cohortItemAggregate.signalCount).toBe(0);
    expect((await gql(app, CONTRIBUTIONS, { userId: '102' })).data!.communityContributions.edges).toEqual([]);
    expect((await gql(app, HISTORY, { userId: '102' })).data!.communityLayerStatus.history[0].gatedSignals).toBe(2);

    await gql(app, REJOIN, { userId: '102' });
    const forwarded = await send({ userId: '102', itemId: 'item-g', kind: 'VIEW' });
    expect(forwarded).toMatchObject({ status: 'ACTIVE', forwarded: true });
    expect((await gql(app, COMMUNITY, { itemId: 'item-g' })).data!.communityItemAggregate.signalCount).toBe(before.signalCount + 1);
    const history = (await gql(app, HISTORY, { userId: '102' })).data!.communityLayerStatus.history;
    expect(history).toHaveLength(1);
    expect(history[0].gatedSignals).toBe(2);
  });

  it('the boundary is ingest time: a far-future or far-past occurredAt changes nothing', async () => {
    await gql(app, LEAVE, { userId: '103' });
    const past = await send({ userId: '103', itemId: 'item-t', kind: 'VIEW', occurredAt: '1999-01-01T00:00:00Z' });
    expect(past.forwarded).toBe(false);
    await gql(app, REJOIN, { userId: '103' });
    const future = await send({ userId: '103', itemId: 'item-t', kind: 'VIEW', occurredAt: '2999-01-01T00:00:00.123456Z' });
    expect(future.forwarded).toBe(true);
    const { rows } = await db.query('SELECT occurred_at FROM signal WHERE id = $1', [future.signalId]);
    expect(rows[0].occurred_at.toISOString()).toBe('2999-01-01T00:00:00.123Z');
  });

  it('signals: a batch goes through the same gate per signal in one call', async () => {
    await gql(app, LEAVE, { userId: '104' });
    const inputs = ['104', '105', '104', '105'].map((userId, i) => ({
      userId,
      itemId: `b-${i}`,
      kind: 'VIEW',
      context: { cohortIds: ['c9'] },
    }));
    const { data, errors } = await gql(app, SIGNALS, { inputs });
    expect(errors).toBeUndefined();
    expect(data!.signals.map((r: any) => [r.status, r.forwarded, r.cohortsAttributed])).toEqual([
      ['LEFT', false, 0],
      ['ACTIVE', true, 1],
      ['LEFT', false, 0],
      ['ACTIVE', true, 1],
    ]);
    expect(new Set(data!.signals.map((r: any) => r.signalId)).size).toBe(4);
  });

  it('pages the contributions ledger oldest first, community before cohorts', async () => {
    for (let i = 0; i < 5; i++) await send({ userId: '106', itemId: `p-${i}`, kind: 'VIEW', context: { cohortIds: ['zeta', 'alpha'] } });
    const seen: string[] = [];
    let after: string | null = null;
    for (;;) {
      const page: any = (await gql(app, CONTRIBUTIONS, { userId: '106', first: 2, after })).data!.communityContributions;
      seen.push(...page.edges.map((e: any) => `${e.node.itemId}/${e.node.target}`));
      if (!page.pageInfo.hasNextPage) break;
      after = page.pageInfo.endCursor;
    }
    expect(seen).toEqual([0, 1, 2, 3, 4].flatMap((i) => [`p-${i}/community`, `p-${i}/alpha`, `p-${i}/zeta`]));
  });

  it('keeps every aggregate equal to the ledger (I3)', async () => {
    expect(await aggregateMismatches(db)).toEqual([]);
  });
});

describe('signal validation writes nothing', () => {
  const valid = { userId: '200', itemId: 'item-v', kind: 'VIEW' };
  const cases: [string, Record<string, unknown>, string][] = [
    ['weight above 1e6', { ...valid, weight: 1_000_001 }, 'weight'],
    ['weight below -1e6', { ...valid, weight: -1e7 }, 'weight'],
    ['empty itemId', { ...valid, itemId: '' }, 'itemId'],
    ['itemId of 129 characters', { ...valid, itemId: 'x'.repeat(129) }, 'itemId'],
    ['itemId with a NUL', { ...valid, itemId: 'a\u0000b' }, 'itemId'],
    ['empty cohort id', { ...valid, context: { cohortIds: ['ok', ''] } }, 'cohortIds'],
    ['cohort id of 129 characters', { ...valid, context: { cohortIds: ['y'.repeat(129)] } }, 'cohortIds'],
    ['33 cohorts', { ...valid, context: { cohortIds: Array.from({ length: 33 }, (_, i) => `c${i}`) } }, 'cohortIds'],
    ['surface with a NUL', { ...valid, context: { surface: '\u0000' } }, 'surface'],
    ['unknown kind', { ...valid, kind: 'POKE' }, 'kind'],
    ['bad occurredAt', { ...valid, occurredAt: 'yesterday' }, 'occurredAt'],
    ['occurredAt without zone', { ...valid, occurredAt: '2026-01-01T00:00:00' }, 'occurredAt'],
    ['bad userId', { ...valid, userId: '-5' }, 'userId'],
    ['weight as a string', { ...valid, weight: '1' }, 'weight'],
    ['missing itemId', { userId: '200', kind: 'VIEW' }, 'itemId'],
    ['empty eventId', { ...valid, eventId: '' }, 'eventId'],
    ['eventId of 129 characters', { ...valid, eventId: 'e'.repeat(129) }, 'eventId'],
    ['eventId with a newline', { ...valid, eventId: 'a\nb' }, 'eventId'],
    ['eventId as a number', { ...valid, eventId: 7 }, 'eventId'],
  ];

  it.each(cases)('%s', async (_label, input, field) => {
    const before = await rowCounts(db);
    const single = await gql(app, SIGNAL, { input });
    expect(single.status).toBeLessThan(500);
    expect(single.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect(single.errors?.[0]?.message).toContain(field);
    const batch = await gql(app, SIGNALS, { inputs: [valid, input] });
    expect(batch.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect(await rowCounts(db)).toBe(before);
  });

  it('more than 1000 signals in one call (over the per-request budget before the per-call maximum)', async () => {
    const before = await rowCounts(db);
    const response = await gql(app, SIGNALS, { inputs: Array.from({ length: 1001 }, () => valid) });
    expect(response.errors?.[0]?.extensions).toMatchObject({ code: 'REQUEST_BUDGET_EXCEEDED', requested: 1001, limit: 1000 });
    expect(await rowCounts(db)).toBe(before);
  });

  it('a cursor that was never issued', async () => {
    for (const forged of ['["99999999999999999999","1",""]', '["1","1"]', '{"atNs":"1"}', 'not json']) {
      const response = await gql(app, CONTRIBUTIONS, { userId: '1', after: Buffer.from(forged).toString('base64url') });
      expect(response.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', argument: 'after' });
    }
  });
});
