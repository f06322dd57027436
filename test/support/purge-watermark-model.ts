import fc from 'fast-check';
import type pg from 'pg';
import { expect } from 'vitest';
import type { App } from '../../src/app.js';
import { aggregateMismatches } from '../../tooling/invariants.js';
import { gql } from './harness.js';

/**
 * The purge watermark's model (test/purge-watermark.model.test.ts): the steps of a history, the
 * fixed histories always run, and each step done against the database and checked against what the
 * model knows: which signals each purge must take, in order.
 */

/** The app, a plain session, and one whose database clock (now_ns) runs an hour ahead. */
export interface Sessions {
  app: App;
  db: pg.Client;
  ahead: pg.Client;
}

export type Step =
  | { t: 'send'; n: number; cohorts: number }
  | { t: 'leave'; ahead: boolean }
  | { t: 'rejoin' }
  | { t: 'erase' }
  | { t: 'purge' }
  | { t: 'chunk'; size: number; crash: boolean };

export const stepArb: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.record({ t: fc.constant('send' as const), n: fc.integer({ min: 1, max: 6 }), cohorts: fc.integer({ min: 0, max: 2 }) }),
  },
  { weight: 2, arbitrary: fc.record({ t: fc.constant('leave' as const), ahead: fc.boolean() }) },
  { weight: 1, arbitrary: fc.constant({ t: 'rejoin' as const }) },
  { weight: 1, arbitrary: fc.constant({ t: 'erase' as const }) },
  { weight: 2, arbitrary: fc.constant({ t: 'purge' as const }) },
  { weight: 4, arbitrary: fc.record({ t: fc.constant('chunk' as const), size: fc.integer({ min: 1, max: 3 }), crash: fc.boolean() }) },
);

const send = (n: number, cohorts = 1): Step => ({ t: 'send', n, cohorts });
const chunk = (size: number, crash = false): Step => ({ t: 'chunk', size, crash });
const leave = (ahead = false): Step => ({ t: 'leave', ahead });
/**
 * Always run: a chunk ending inside a call's nanosecond, a crashed chunk, a refused rejoin, a
 * purge that finds nothing, signals after a rejoin below no watermark, a re-purge after a later
 * leave, and a second rejoin, leave and purge.
 */
export const EXAMPLE: Step[] = [
  send(5, 2),
  leave(),
  send(2),
  { t: 'purge' },
  chunk(2),
  chunk(2, true),
  { t: 'rejoin' },
  chunk(3),
  { t: 'purge' },
  { t: 'rejoin' },
  send(4),
  leave(),
  { t: 'purge' },
  chunk(1),
  leave(),
  chunk(3),
  chunk(1),
  { t: 'rejoin' },
  send(3, 0),
  leave(),
  { t: 'purge' },
  chunk(3),
];
/**
 * Always run too: a purge bounded by a leave the clock later steps back from, then a rejoin, the
 * membership row erased (refused while LEFT) and signals whose only fence is the leave history.
 */
export const CLOCK_STEPPED_BACK: Step[] = [
  send(2),
  leave(true),
  { t: 'erase' },
  { t: 'purge' },
  chunk(4),
  { t: 'rejoin' },
  { t: 'erase' },
  send(3, 1),
  { t: 'erase' },
  send(1),
];

export interface Model {
  user: string;
  left: boolean;
  /** Forwarded signals (id → cohort entries), and the ones purged. */
  forwarded: Map<string, number>;
  purged: Set<string>;
  /** The running purge's signals still to take, in (at_ns, id) order; null when none runs. */
  pending: string[] | null;
  sent: number;
}

export async function step({ app, db, ahead }: Sessions, model: Model, s: Step): Promise<void> {
  const { user } = model;
  if (s.t === 'send') {
    const inputs = Array.from({ length: s.n }, (_, i) => ({
      userId: user,
      // Items of this history only, so a failure shows in the history that caused it.
      itemId: `wm-${user}-${i % 3}`,
      kind: 'LIKE',
      weight: i + 1,
      context: { cohortIds: ['c1', 'c2'].slice(0, s.cohorts) },
    }));
    const response = await gql<{ signals: { signalId: string; forwarded: boolean }[] }>(
      app,
      `mutation ($inputs: [SignalInput!]!) { signals(inputs: $inputs) { signalId forwarded } }`,
      { inputs },
    );
    expect(response.errors).toBeUndefined();
    for (const signal of response.data!.signals) {
      expect(signal.forwarded).toBe(!model.left);
      if (signal.forwarded) model.forwarded.set(signal.signalId, s.cohorts);
    }
    model.sent += s.n;
  } else if (s.t === 'leave') {
    if (s.ahead) await ahead.query('SELECT leave_community_layer($1)', [user]);
    else expect((await gql(app, `mutation { leaveCommunityLayer(userId: "${user}") { status } }`)).errors).toBeUndefined();
    model.left = true;
  } else if (s.t === 'erase') {
    const erase = db.query('DELETE FROM community_membership WHERE user_id = $1', [user]);
    if (model.left) await expect(erase).rejects.toMatchObject({ code: '23000' });
    else await erase;
  } else if (s.t === 'rejoin') {
    const response = await gql(app, `mutation { rejoinCommunityLayer(userId: "${user}") { status } }`);
    if (model.pending) {
      expect(response.errors?.[0]?.extensions?.code).toBe('PURGE_IN_PROGRESS');
    } else {
      expect(response.errors).toBeUndefined();
      model.left = false;
    }
  } else if (s.t === 'purge') {
    const request = db.query(`SELECT * FROM request_community_purge($1)`, [user]);
    if (!model.left) {
      await expect(request).rejects.toMatchObject({ code: 'CLP01' });
    } else {
      const { rows } = await request;
      expect(rows[0].created).toBe(model.pending === null);
      if (model.pending === null) {
        // Ordered by the bigint column: a text output column named id would put '100' before '98'.
        const { rows: order } = await db.query(
          `SELECT id::text AS signal_id FROM signal WHERE user_id = $1 AND forwarded ORDER BY at_ns, id`,
          [user],
        );
        const pending = order.map((row) => row.signal_id as string).filter((id) => !model.purged.has(id));
        model.pending = pending.length > 0 ? pending : null;
      }
    }
  } else {
    await db.query('BEGIN');
    const { rows } = await db.query(`SELECT * FROM run_community_purge_chunk($1)`, [s.size]);
    await db.query(s.crash ? 'ROLLBACK' : 'COMMIT');
    expect(rows[0].purge_id !== null).toBe(model.pending !== null);
    if (model.pending && !s.crash) {
      const taken = model.pending.splice(0, s.size);
      for (const id of taken) model.purged.add(id);
      expect(rows[0].finished).toBe(taken.length < s.size);
      if (taken.length < s.size) model.pending = null;
    }
  }
  await check(db, model);
}

async function check(db: pg.Client, model: Model): Promise<void> {
  const { rows } = await db.query(
    `SELECT (SELECT coalesce(array_agg(signal_id::text ORDER BY signal_id), '{}') FROM contribution WHERE user_id = $1 AND cohort_id IS NULL) AS community,
            (SELECT count(*)::int FROM contribution WHERE user_id = $1 AND cohort_id IS NOT NULL) AS cohort,
            (SELECT count(*)::int FROM signal WHERE user_id = $1) AS signals`,
    [model.user],
  );
  const remaining = [...model.forwarded].filter(([id]) => !model.purged.has(id));
  expect(rows[0].community).toEqual(remaining.map(([id]) => id).sort((a, b) => (BigInt(a) < BigInt(b) ? -1 : 1)));
  expect(rows[0].cohort).toBe(remaining.reduce((sum, [, cohorts]) => sum + cohorts, 0));
  expect(rows[0].signals).toBe(model.sent);
  expect((await aggregateMismatches(db)).filter((row: any) => row.item_id.startsWith(`wm-${model.user}-`))).toEqual([]);
}
