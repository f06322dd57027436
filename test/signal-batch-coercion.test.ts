import type pg from 'pg';
import { describe, expect, it } from 'vitest';
import type { App } from '../src/app.js';
import { gql, useCluster } from './support/harness.js';

/**
 * Values GraphQL's own coercion refuses (a date that does not exist, a number out of range, an
 * unknown enum value, a missing field) are one item each with `invalid: SKIP` and in
 * `validateSignals`, like the server's own checks; the default still refuses the whole call.
 */
let app: App;
let db: pg.Client;
useCluster([{}], (cluster) => ((app = cluster.apps[0]!), (db = cluster.db)));

const SEND = `mutation Send($i: [SignalInput!]!, $invalid: InvalidSignals) {
  sendSignals(inputs: $i, invalid: $invalid) {
    storedCount invalidCount
    items { __typename ... on SignalResult { signalId } ... on InvalidSignal { index argument code message } }
  }
}`;
const VALIDATE = 'mutation Check($i: [SignalInput!]!) { validateSignals(inputs: $i) { index argument code message } }';

const twelve = (user: string) =>
  Array.from({ length: 12 }, (_, i): Record<string, unknown> => ({ userId: user, itemId: `item-${i}`, kind: 'VIEW', eventId: `c-${i}` }));
const stored = async (user: string) => Number((await db.query('SELECT count(*) AS n FROM signal WHERE user_id = $1', [user])).rows[0].n);

/** Each coercion failure at its own index, and the argument it is reported at. */
function withBadValues(user: string) {
  const inputs = twelve(user);
  inputs[2]!.occurredAt = '2023-02-29T00:00:00Z'; // no such day
  inputs[5]!.userId = '18446744073709551616'; // 2^64: out of UInt64's range
  inputs[7]!.kind = 'SNEEZE';
  delete inputs[9]!.itemId;
  inputs[10]!.weight = 'heavy';
  const expected = [
    [2, 'inputs[2].occurredAt'],
    [5, 'inputs[5].userId'],
    [7, 'inputs[7].kind'],
    [9, 'inputs[9].itemId'],
    [10, 'inputs[10].weight'],
  ].map(([index, argument]) => ({ index, argument, code: 'BAD_USER_INPUT', message: expect.stringContaining(`"${argument as string}"`) }));
  return { inputs, expected };
}

describe('coercion failures are items of their own', () => {
  it('SKIP: one impossible date among 12 is reported with its path, the other 11 are stored', async () => {
    const inputs = twelve('501');
    inputs[4]!.occurredAt = '2023-02-29T00:00:00Z';
    const result = await gql(app, SEND, { i: inputs, invalid: 'SKIP' });
    expect(result.errors).toBeUndefined();
    const { items, storedCount, invalidCount } = result.data!.sendSignals;
    expect([items.length, storedCount, invalidCount]).toEqual([12, 11, 1]);
    expect(items[4]).toEqual({
      __typename: 'InvalidSignal',
      index: 4,
      argument: 'inputs[4].occurredAt',
      code: 'BAD_USER_INPUT',
      message: expect.stringContaining('2023-02-29'),
    });
    expect(items.filter((item: { __typename: string }) => item.__typename === 'SignalResult')).toHaveLength(11);
    expect(await stored('501')).toBe(11);
  });

  it('SKIP: every kind of coercion failure, beside a server-side one, in input order', async () => {
    const { inputs, expected } = withBadValues('502');
    inputs[0]!.itemId = 'bad\u0007id';
    const result = await gql(app, SEND, { i: inputs, invalid: 'SKIP' });
    expect(result.errors).toBeUndefined();
    const invalid = result
      .data!.sendSignals.items.filter((item: { __typename: string }) => item.__typename === 'InvalidSignal')
      .map(({ __typename, ...item }: Record<string, unknown>) => item);
    expect(invalid).toEqual([{ index: 0, argument: 'inputs[0].itemId', code: 'BAD_USER_INPUT', message: expect.any(String) }, ...expected]);
    expect(await stored('502')).toBe(6);
  });

  it('validateSignals flags them the same way and stores nothing', async () => {
    const { inputs, expected } = withBadValues('503');
    const result = await gql(app, VALIDATE, { i: inputs });
    expect(result.errors).toBeUndefined();
    expect(result.data!.validateSignals).toEqual(expected);
    expect(await stored('503')).toBe(0);
  });

  it('all of a SKIP batch refused by coercion: every item reported, nothing stored', async () => {
    const inputs = twelve('504').map((input) => ({ ...input, kind: 'SNEEZE' }));
    const result = await gql(app, SEND, { i: inputs, invalid: 'SKIP' });
    expect(result.errors).toBeUndefined();
    expect(result.data!.sendSignals).toMatchObject({ storedCount: 0, invalidCount: 12 });
    expect(await stored('504')).toBe(0);
  });

  it('the default (REJECT_ALL) still refuses the whole call with BAD_USER_INPUT and stores nothing', async () => {
    const inputs = twelve('505');
    inputs[4]!.occurredAt = '2023-02-29T00:00:00Z';
    const result = await gql(app, SEND, { i: inputs });
    expect(result.data).toBeUndefined();
    expect(result.errors![0]!.extensions).toMatchObject({ code: 'BAD_USER_INPUT', argument: 'inputs[4].occurredAt' });
    expect(await stored('505')).toBe(0);
  });

  it('a variable also used where items are not reported one by one is coerced as a whole', async () => {
    const inputs = twelve('506');
    inputs[4]!.occurredAt = '2023-02-29T00:00:00Z';
    const both =
      'mutation Both($i: [SignalInput!]!) { a: sendSignals(inputs: $i, invalid: SKIP) { storedCount } b: signals(inputs: $i) { forwarded } }';
    const result = await gql(app, both, { i: inputs });
    expect(result.errors![0]!.extensions).toMatchObject({ code: 'BAD_USER_INPUT', argument: 'inputs[4].occurredAt' });
    expect(await stored('506')).toBe(0);
  });
});
