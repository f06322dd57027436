import type pg from 'pg';
import { describe, expect, it } from 'vitest';
import type { App } from '../src/app.js';
import { aggregateMismatches } from '../tooling/invariants.js';
import { aggregates, HISTORY, LEAVE, type Outcomes, REJOIN, send, sendMany, storedRows } from './support/event-id-signals.js';
import { type Cluster, eventually, gql, sqlClient, startApp, useCluster } from './support/harness.js';

describe('signals with event ids', () => {
  let a: App;
  let b: App;
  let db: pg.Client;
  let databaseUrl: string;
  useCluster([{}, {}], (cluster: Cluster) => {
    [a, b] = cluster.apps as [App, App];
    db = cluster.db;
    databaseUrl = cluster.databaseUrl;
  });

  it('the same eventId from 16 concurrent clients on two instances is stored and counted once, and all get one signalId', async () => {
    const rounds = 3;
    for (let round = 0; round < rounds; round++) {
      const input = { userId: '300', itemId: 'race', kind: 'LIKE', context: { cohortIds: ['c1', 'c2'] }, eventId: `race-${round}` };
      const outcomes = await Promise.all(Array.from({ length: 16 }, (_, client) => send(client % 2 === 0 ? a : b, input)));
      expect(new Set(outcomes.map((outcome) => outcome.signalId)).size).toBe(1);
      expect(outcomes.filter((outcome) => !outcome.duplicate)).toHaveLength(1);
      for (const outcome of outcomes) expect(outcome).toMatchObject({ status: 'ACTIVE', forwarded: true, cohortsAttributed: 2 });
    }
    const rows = await storedRows(db, '300');
    expect(rows.map((row) => row.event_id)).toEqual(['race-0', 'race-1', 'race-2']);
    expect(await aggregates(a, 'race')).toEqual({
      community: { signalCount: rounds, weightSum: 5 * rounds },
      c1: { signalCount: rounds, weightSum: 5 * rounds },
      c2: { signalCount: rounds, weightSum: 5 * rounds },
    });
    expect(await aggregateMismatches(db)).toEqual([]);
  });

  it.each(['COMMIT', 'ROLLBACK'] as const)(
    'a duplicate racing an uncommitted insert of its key waits for it, then answers by its outcome (%s)',
    async (end) => {
      const userId = end === 'COMMIT' ? '301' : '302';
      const itemId = `wait-${end}`;
      // Another writer holds the key in an open transaction, exactly as a second instance would.
      const other = await sqlClient(databaseUrl);
      try {
        await other.query('BEGIN');
        const { rows } = await other.query(
          `SELECT r_signal_id::text AS id
             FROM ingest_signals($1::text[], $2::text[], '{LIKE}', '{5000000}', '{NULL}', '{NULL}', '{true}', '{1}', '{c1}', '{wait}')`,
          [[userId], [itemId]],
        );
        const heldId: string = rows[0].id;
        const racing = send(b, { userId, itemId, kind: 'LIKE', context: { cohortIds: ['c1'] }, eventId: 'wait' });
        await eventually(async () => {
          const waiting = await db.query(
            `SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND wait_event = 'transactionid' AND query LIKE '%ingest_signals%'`,
          );
          return waiting.rowCount === 1;
        });
        await other.query(end);
        const outcome = await racing;
        if (end === 'COMMIT') {
          expect(outcome).toEqual({ signalId: heldId, status: 'ACTIVE', forwarded: true, cohortsAttributed: 1, duplicate: true });
        } else {
          expect(outcome).toMatchObject({ status: 'ACTIVE', forwarded: true, cohortsAttributed: 1, duplicate: false });
          expect(outcome.signalId).not.toBe(heldId);
        }
        expect((await storedRows(db, userId)).map((row) => row.id)).toEqual([outcome.signalId]);
        expect(await aggregates(a, itemId)).toMatchObject({ community: { signalCount: 1 }, c1: { signalCount: 1 } });
        expect(await aggregateMismatches(db)).toEqual([]);
      } finally {
        await other.end();
      }
    },
  );

  it('a duplicate after a leave is still the original forwarded signal, on any instance and after a restart; nothing moves', async () => {
    const input = { userId: '303', itemId: 'left', kind: 'SHARE', context: { cohortIds: ['c1', 'c2'] }, eventId: 'before-leave' };
    const original = await send(a, input);
    expect(original).toMatchObject({ status: 'ACTIVE', forwarded: true, cohortsAttributed: 2, duplicate: false });
    const before = await aggregates(a, 'left');

    await gql(a, LEAVE, { userId: '303' });
    await eventually(() => b.services.membershipCache.cache.isLeft('303'));
    const restarted = await startApp(databaseUrl);
    try {
      for (const app of [a, b, restarted]) {
        expect(await send(app, input)).toEqual({ ...original, duplicate: true });
      }
      // A fresh signal is gated as usual, while its duplicate still is not.
      expect(await send(a, { ...input, eventId: 'after-leave' })).toMatchObject({ forwarded: false, duplicate: false });
    } finally {
      await restarted.stop();
    }
    expect(await aggregates(b, 'left')).toEqual(before);
    expect((await gql(a, HISTORY, { userId: '303' })).data!.communityLayerStatus.history).toEqual([{ gatedSignals: 1 }]);
    expect((await storedRows(db, '303')).map((row) => [row.event_id, row.forwarded])).toEqual([
      ['before-leave', true],
      ['after-leave', false],
    ]);
    expect(await aggregateMismatches(db)).toEqual([]);
  });

  it('a gated signal stays gated when its duplicate arrives after a rejoin', async () => {
    await gql(a, LEAVE, { userId: '304' });
    const input = { userId: '304', itemId: 'gated', kind: 'LIKE', context: { cohortIds: ['c1'] }, eventId: 'while-left' };
    const original = await send(a, input);
    expect(original).toMatchObject({ status: 'LEFT', forwarded: false, cohortsAttributed: 0 });
    await gql(a, REJOIN, { userId: '304' });
    expect(await send(b, input)).toEqual({ ...original, duplicate: true });
    expect(await aggregates(a, 'gated')).toMatchObject({ community: { signalCount: 0 }, c1: { signalCount: 0 } });
    expect((await gql(a, HISTORY, { userId: '304' })).data!.communityLayerStatus.history).toEqual([{ gatedSignals: 1 }]);
  });

  it('keeps an eventId of 1 and of 128 characters exactly as sent', async () => {
    for (const eventId of ['x', 'é'.repeat(128)]) {
      const first = await send(a, { userId: '307', itemId: 'lengths', kind: 'VIEW', eventId });
      expect(await send(b, { userId: '307', itemId: 'lengths', kind: 'VIEW', eventId })).toEqual({ ...first, duplicate: true });
    }
    expect((await storedRows(db, '307')).map((row) => row.event_id)).toEqual(['x', 'é'.repeat(128)]);
  });

  it('a batch with duplicates of itself and of earlier signals: the first occurrence wins, each is counted once', async () => {
    const earlier = await send(a, { userId: '305', itemId: 'batch', kind: 'VIEW', context: { cohortIds: ['c1'] }, eventId: 'e1' });
    const signal = (eventId: string | undefined, itemId: string, cohortIds: string[], userId = '305') => ({
      userId,
      itemId,
      kind: 'VIEW',
      context: { cohortIds },
      ...(eventId === undefined ? {} : { eventId }),
    });
    const outcomes = await sendMany(b, [
      signal('e1', 'batch', ['c2']), // earlier signal: its outcome, not this payload's
      signal('e2', 'batch', ['c1', 'c2']),
      signal('e2', 'batch-other', []), // duplicate of the one before it
      signal(undefined, 'batch', []),
      signal(undefined, 'batch', []), // no event id: as before, always a new signal
      signal('e3', 'batch', ['c2']),
      signal('e2', 'batch', ['c1']),
      signal('e1', 'batch', []),
      signal('e2', 'batch', ['c2'], '306'), // event ids are per user
    ]);
    const [e1, e2, e2again, none1, none2, e3, e2third, e1again, otherUser] = outcomes as Outcomes<9>;
    expect(e1).toEqual({ ...earlier, duplicate: true });
    expect(e1again).toEqual(e1);
    expect(e2).toMatchObject({ forwarded: true, cohortsAttributed: 2, duplicate: false });
    expect(e2again).toEqual({ ...e2, duplicate: true });
    expect(e2third).toEqual({ ...e2, duplicate: true });
    for (const fresh of [none1, none2, e3, otherUser]) expect(fresh.duplicate).toBe(false);
    const distinct = new Set([earlier, e2, none1, none2, e3, otherUser].map((outcome) => outcome.signalId));
    expect(distinct.size).toBe(6);

    expect((await storedRows(db, '305')).map((row) => row.id).sort()).toEqual(
      [earlier, e2, none1, none2, e3].map((outcome) => outcome.signalId).sort(),
    );
    expect(await aggregates(a, 'batch')).toEqual({
      community: { signalCount: 6, weightSum: 6 },
      c1: { signalCount: 2, weightSum: 2 },
      c2: { signalCount: 3, weightSum: 3 },
    });
    expect(await aggregates(a, 'batch-other')).toMatchObject({ community: { signalCount: 0 } });

    // The whole batch again, as a client retry would send it: only the signals without an id are new.
    const retried = await sendMany(a, [signal('e1', 'batch', []), signal('e2', 'batch', []), signal(undefined, 'batch', [])]);
    expect(retried.map((outcome) => outcome.duplicate)).toEqual([true, true, false]);
    expect(retried.slice(0, 2).map((outcome) => outcome.signalId)).toEqual([earlier.signalId, e2.signalId]);
    expect((await aggregates(a, 'batch')).community.signalCount).toBe(7);
    expect(await aggregateMismatches(db)).toEqual([]);
  });
});
