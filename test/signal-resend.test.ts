import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../src/app.js';
import { aggregateMismatches } from '../tooling/invariants.js';
import { aggregates, sendMany } from './support/event-id-signals.js';
import { freshDatabase, sqlClient, startApp } from './support/harness.js';
import { type CutPoint, ReplyCuttingProxy } from './support/reply-cutting-proxy.js';

/**
 * A signal group whose statement or commit reply is lost on the way is resent, and every signal of
 * it is stored once: the event ids (the client's, or ones the service generates) make the resend
 * find what the first attempt committed. Event ids as clients use them are in signal-event-ids.test.ts.
 */

describe('a group whose commit reply is lost', () => {
  let proxy: ReplyCuttingProxy;
  let app: App;
  let db: pg.Client;

  beforeAll(async () => {
    const databaseUrl = await freshDatabase();
    proxy = new ReplyCuttingProxy();
    app = await startApp(await proxy.start(databaseUrl));
    db = await sqlClient(databaseUrl);
  });

  afterAll(async () => {
    await db?.end();
    await app?.stop();
    await proxy?.close();
  });

  it.each<[string, CutPoint]>([
    ['committed, then the connection dropped before the reply', 'after-commit'],
    ['the connection dropped before the statement reached PostgreSQL', 'before-statement'],
  ])('is resent, and stored exactly once: %s', async (_label, point) => {
    const itemId = `lost-${point}`;
    const cut = proxy.cut('ingest_signals(', point);
    const outcomes = await sendMany(app, [
      { userId: '400', itemId, kind: 'LIKE', context: { cohortIds: ['c1'] }, eventId: `client-${point}` },
      { userId: '401', itemId, kind: 'LIKE' },
      { userId: '402', itemId, kind: 'LIKE', context: { cohortIds: ['c1', 'c2'] } },
    ]);
    await cut;
    expect(proxy.markedStatements).toBe(2); // the cut attempt and one resend

    // Every signal of this request is new to the client, so none is reported as a duplicate.
    expect(outcomes.map(({ forwarded, cohortsAttributed, duplicate }) => ({ forwarded, cohortsAttributed, duplicate }))).toEqual([
      { forwarded: true, cohortsAttributed: 1, duplicate: false },
      { forwarded: true, cohortsAttributed: 0, duplicate: false },
      { forwarded: true, cohortsAttributed: 2, duplicate: false },
    ]);
    const { rows } = await db.query('SELECT id::text, event_id FROM signal WHERE item_id = $1 ORDER BY id', [itemId]);
    expect(rows.map((row) => row.id).sort()).toEqual(outcomes.map((outcome) => outcome.signalId).sort());
    expect(rows.find((row) => row.id === outcomes[0]!.signalId).event_id).toBe(`client-${point}`);
    // Signals sent without an event id carried one the service generated, so the resend found them.
    expect(rows.every((row) => row.event_id !== null)).toBe(true);

    // After a commit the resend stored none of its ids (the rows are the first attempt's): it drew
    // three for its plain insert, which met the stored keys, and three more for the deduplicating
    // path (ingest_signals v6). When nothing reached PostgreSQL, the rows are the resend's.
    const { rows: sequence } = await db.query('SELECT last_value::text FROM signal_id_seq');
    // biome-ignore lint/complexity/useMathMinMax: bigints, which Math.max does not take.
    const newest = outcomes.map((outcome) => BigInt(outcome.signalId)).reduce((a, b) => (a > b ? a : b));
    expect(BigInt(sequence[0].last_value) - newest).toBe(point === 'after-commit' ? 6n : 0n);

    expect(await aggregates(app, itemId)).toEqual({
      community: { signalCount: 3, weightSum: 15 },
      c1: { signalCount: 2, weightSum: 10 },
      c2: { signalCount: 1, weightSum: 5 },
    });
    expect(await aggregateMismatches(db)).toEqual([]);
  });
});
