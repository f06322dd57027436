import type pg from 'pg';
import { describe, expect, it } from 'vitest';
import type { App } from '../src/app.js';
import { gql, useCluster } from './support/harness.js';

let app: App;
let db: pg.Client;
useCluster([{}], (cluster) => ((app = cluster.apps[0]!), (db = cluster.db)));

const SEND = `mutation Send($i: [SignalInput!]!, $invalid: InvalidSignals) {
  sendSignals(inputs: $i, invalid: $invalid) {
    storedCount invalidCount
    items { __typename ... on SignalResult { signalId duplicate } ... on InvalidSignal { index argument code message } }
  }
}`;

async function counted(): Promise<Record<string, number>> {
  const metric = await app.services.metrics.signals.get();
  return Object.fromEntries(metric.values.map((value) => [String(value.labels.outcome), value.value]));
}

function batch(user: string, size: number, bad: number[]) {
  return Array.from({ length: size }, (_, i) => ({
    userId: user,
    itemId: bad.includes(i) ? `bad\u0007${i}` : `item-${i}`,
    kind: 'VIEW',
    eventId: `e-${i}`,
  }));
}

async function stored(user: string): Promise<number> {
  return Number((await db.query('SELECT count(*) AS n FROM signal WHERE user_id = $1', [user])).rows[0].n);
}

describe('partial accept: sendSignals(inputs, invalid: SKIP)', () => {
  it('stores the valid signals, reports each invalid one in input order, and counts each signal once', async () => {
    const before = await counted();
    const result = await gql(app, SEND, { i: batch('301', 1000, [3, 500, 999]), invalid: 'SKIP' });
    expect(result.errors).toBeUndefined();
    const { items, storedCount, invalidCount } = result.data!.sendSignals;
    expect([items.length, storedCount, invalidCount]).toEqual([1000, 997, 3]);
    expect(items.filter((item: any) => item.__typename === 'InvalidSignal')).toEqual(
      [3, 500, 999].map((index) => ({
        __typename: 'InvalidSignal',
        index,
        argument: `inputs[${index}].itemId`,
        code: 'BAD_USER_INPUT',
        message: expect.stringContaining(`inputs[${index}].itemId`),
      })),
    );
    expect(items[4]).toMatchObject({ __typename: 'SignalResult', duplicate: false });
    expect(await stored('301')).toBe(997);
    const after = await counted();
    expect((after.rejected ?? 0) - (before.rejected ?? 0)).toBe(3);
    expect((after.forwarded ?? 0) - (before.forwarded ?? 0)).toBe(997);
  });

  it('REJECT_ALL (the default) stores nothing and names every invalid signal at once; the batch counts 1,000, not more', async () => {
    const before = await counted();
    const result = await gql(app, SEND, { i: batch('302', 1000, [1, 2, 3]) });
    expect(result.errors![0]!.extensions).toMatchObject({
      code: 'BAD_USER_INPUT',
      argument: 'inputs[1].itemId',
      invalid: [1, 2, 3].map((index) => ({ argument: `inputs[${index}].itemId`, message: expect.any(String) })),
    });
    expect(await stored('302')).toBe(0);
    const after = await counted();
    expect((after.rejected ?? 0) - (before.rejected ?? 0)).toBe(3);
    expect((after.withheld ?? 0) - (before.withheld ?? 0)).toBe(997);
  });

  it('validateSignals checks a batch without storing it', async () => {
    const result = await gql(app, 'mutation Check($i: [SignalInput!]!) { validateSignals(inputs: $i) { index argument } }', {
      i: batch('303', 10, [7]),
    });
    expect(result.data!.validateSignals).toEqual([{ index: 7, argument: 'inputs[7].itemId' }]);
    expect(await stored('303')).toBe(0);
  });
});
