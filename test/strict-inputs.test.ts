import type pg from 'pg';
import { describe, expect, it } from 'vitest';
import type { App } from '../src/app.js';
import { gql, token, useCluster, type Cluster, type GraphQLResponse, rowCounts } from './support/harness.js';
import {
  DATE_TIMES_ACCEPTED,
  DATE_TIMES_REFUSED,
  INVALID_UTF8,
  TEXT_IDS_ACCEPTED,
  TEXT_IDS_REFUSED,
  USER_ID_LITERALS_REFUSED,
  USER_ID_VARIABLES_REFUSED,
} from './support/strict-input-cases.js';

const SIGNAL = `mutation ($input: SignalInput!) { signal(input: $input) { signalId forwarded cohortsAttributed } }`;
const SIGNALS = `mutation ($inputs: [SignalInput!]!) { signals(inputs: $inputs) { signalId } }`;
const VALIDATE = `mutation ($input: SignalInput!) { validateSignal(input: $input) }`;
const COMMUNITY = `query ($itemId: ID!) { communityItemAggregate(itemId: $itemId) { itemId signalCount } }`;
const COHORT = `query ($cohortId: ID!, $itemId: ID!) { cohortItemAggregate(cohortId: $cohortId, itemId: $itemId) { signalCount } }`;
const LEAVE = `mutation ($userId: UInt64!) { leaveCommunityLayer(userId: $userId) { userId leftAtNs leftAt } }`;

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

const valid = { userId: '300', itemId: 'strict-item', kind: 'VIEW' };

/** A request whose JSON text is written by hand: JSON.stringify cannot produce `1e3`, `-0` or `8000001.0`. */
async function rawGql(body: string | Blob): Promise<GraphQLResponse> {
  const response = await fetch(app.url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/graphql-response+json',
      authorization: `Bearer ${await token('1', 'community:admin signals:write')}`,
    },
    body,
  });
  return { status: response.status, ...((await response.json()) as Omit<GraphQLResponse, 'status'>) };
}

function expectRefused(response: GraphQLResponse, ...mentions: string[]): void {
  expect(response.status).toBeLessThan(500);
  expect(response.data ?? null).toBeNull();
  expect(response.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
  for (const mention of mentions) expect(response.errors?.[0]?.message).toContain(mention);
}

async function storedOccurredAt(signalId: string): Promise<string> {
  const { rows } = await db.query(
    `SELECT to_char(occurred_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS at FROM signal WHERE id = $1`,
    [signalId],
  );
  return rows[0].at;
}

describe('DateTime: only real RFC 3339 instants, stored exactly', () => {
  it.each(DATE_TIMES_ACCEPTED)('%s: %s is stored as %s, as a variable and as a literal', async (_label, occurredAt, stored) => {
    const variable = await gql(app, SIGNAL, { input: { ...valid, occurredAt } });
    expect(variable.errors).toBeUndefined();
    expect(await storedOccurredAt(variable.data!.signal.signalId)).toBe(stored);
    const literal = await gql(
      app,
      `mutation { signal(input: { userId: "300", itemId: "strict-item", kind: VIEW, occurredAt: ${JSON.stringify(occurredAt)} }) { signalId } }`,
    );
    expect(literal.errors).toBeUndefined();
    expect(await storedOccurredAt(literal.data!.signal.signalId)).toBe(stored);
  });

  it.each(DATE_TIMES_REFUSED)('%s (%j) is BAD_USER_INPUT naming occurredAt, and writes nothing', async (_label, occurredAt, reason) => {
    const before = await rowCounts(db);
    expectRefused(await gql(app, SIGNAL, { input: { ...valid, occurredAt } }), 'input.occurredAt', reason);
    expectRefused(await gql(app, SIGNALS, { inputs: [valid, { ...valid, occurredAt }] }), 'inputs[1].occurredAt', reason);
    expectRefused(await gql(app, VALIDATE, { input: { ...valid, occurredAt } }), 'input.occurredAt', reason);
    const literal = await gql(
      app,
      `mutation { signal(input: { userId: "300", itemId: "strict-item", kind: VIEW, occurredAt: ${JSON.stringify(occurredAt)} }) { signalId } }`,
    );
    expectRefused(literal, reason);
    if (typeof occurredAt === 'string') expect(literal.errors?.[0]?.extensions?.argument).toBe('input.occurredAt');
    expect(await rowCounts(db)).toBe(before);
  });

  it('output is UTC with exactly nine fractional digits: leftAt is leftAtNs to the nanosecond', async () => {
    const { data, errors } = await gql(app, LEAVE, { userId: '301' });
    expect(errors).toBeUndefined();
    const { leftAtNs, leftAt } = data!.leaveCommunityLayer;
    expect(leftAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z$/);
    const ns = BigInt(leftAtNs);
    const seconds = ns / 1_000_000_000n;
    expect(leftAt).toBe(`${new Date(Number(seconds) * 1000).toISOString().slice(0, 19)}.${String(ns % 1_000_000_000n).padStart(9, '0')}Z`);
  });
});

describe('text ids: well-formed, visible, NFC; refused, never repaired', () => {
  it.each(TEXT_IDS_REFUSED)('%s is BAD_USER_INPUT wherever an id comes in, and writes nothing', async (_label, id, reason) => {
    const before = await rowCounts(db);
    expectRefused(await gql(app, SIGNAL, { input: { ...valid, itemId: id } }), 'input.itemId', reason);
    const cohort = await gql(app, SIGNAL, { input: { ...valid, context: { cohortIds: ['ok', id] } } });
    expectRefused(cohort, 'input.context.cohortIds[1]', reason);
    expect(cohort.errors?.[0]?.extensions?.argument).toBe('input.context.cohortIds[1]');
    expectRefused(await gql(app, SIGNALS, { inputs: [valid, { ...valid, itemId: id }] }), 'inputs[1].itemId', reason);
    expectRefused(await gql(app, VALIDATE, { input: { ...valid, itemId: id } }), 'input.itemId', reason);
    const community = await gql(app, COMMUNITY, { itemId: id });
    expectRefused(community, 'itemId', reason);
    expect(community.errors?.[0]?.extensions?.argument).toBe('itemId');
    expectRefused(await gql(app, COHORT, { cohortId: id, itemId: 'strict-item' }), 'cohortId', reason);
    expectRefused(await gql(app, COHORT, { cohortId: 'ok', itemId: id }), 'itemId', reason);
    expect(await rowCounts(db)).toBe(before);
  });

  it.each(INVALID_UTF8)('a body with %s in an id is refused with 400 before parsing, and writes nothing', async (_label, bytes) => {
    const before = await rowCounts(db);
    const [head, tail] = JSON.stringify({ query: SIGNAL, variables: { input: { ...valid, itemId: 'a|b' } } }).split('|');
    const response = await rawGql(new Blob([head!, new Uint8Array(bytes), tail!]));
    expect(response.status).toBe(400);
    expect(response.errors?.[0]?.message).toContain('not valid UTF-8');
    expect(await rowCounts(db)).toBe(before);
  });

  it.each(TEXT_IDS_ACCEPTED)('%s is stored byte for byte and found again', async (_label, id) => {
    const sent = await gql(app, SIGNAL, { input: { userId: '302', itemId: id, kind: 'VIEW', context: { cohortIds: [id] } } });
    expect(sent.errors).toBeUndefined();
    expect(sent.data!.signal).toMatchObject({ forwarded: true, cohortsAttributed: 1 });
    const { rows } = await db.query(
      `SELECT encode(convert_to(item_id, 'UTF8'), 'hex') AS item, encode(convert_to(cohort_ids[1], 'UTF8'), 'hex') AS cohort
         FROM signal WHERE id = $1`,
      [sent.data!.signal.signalId],
    );
    const utf8 = Buffer.from(id, 'utf8').toString('hex');
    expect(rows).toEqual([{ item: utf8, cohort: utf8 }]);
    expect((await gql(app, COMMUNITY, { itemId: id })).data!.communityItemAggregate).toEqual({ itemId: id, signalCount: 1 });
    expect((await gql(app, COHORT, { cohortId: id, itemId: id })).data!.cohortItemAggregate.signalCount).toBe(1);
  });
});

describe('UInt64: decimal strings only', () => {
  it.each(USER_ID_VARIABLES_REFUSED)(
    '%s (%s) is BAD_USER_INPUT as userId and as input.userId, and writes nothing',
    async (_label, json) => {
      const before = await rowCounts(db);
      expectRefused(await rawGql(`{"query":${JSON.stringify(LEAVE)},"variables":{"userId":${json}}}`), '$userId');
      const signal = `{"query":${JSON.stringify(SIGNAL)},"variables":{"input":{"userId":${json},"itemId":"strict-item","kind":"VIEW"}}}`;
      expectRefused(await rawGql(signal), 'input.userId');
      expect(await rowCounts(db)).toBe(before);
    },
  );

  it.each(USER_ID_LITERALS_REFUSED)(
    '%s (userId: %s) is BAD_USER_INPUT naming the argument, and writes nothing',
    async (_label, literal) => {
      const before = await rowCounts(db);
      const response = await gql(app, `mutation { leaveCommunityLayer(userId: ${literal}) { status } }`);
      expectRefused(response);
      expect(response.errors?.[0]?.extensions?.argument).toBe('userId');
      const signal = await gql(app, `mutation { signal(input: { userId: ${literal}, itemId: "strict-item", kind: VIEW }) { signalId } }`);
      expectRefused(signal);
      expect(signal.errors?.[0]?.extensions?.argument).toBe('input.userId');
      expect(await rowCounts(db)).toBe(before);
    },
  );

  it.each(['0', '9007199254740993', '18446744073709551615'])(
    '"%s" is accepted as a variable and as a literal, unchanged',
    async (userId) => {
      const variable = await gql(app, LEAVE, { userId });
      expect(variable.errors).toBeUndefined();
      expect(variable.data!.leaveCommunityLayer.userId).toBe(userId);
      const literal = await gql(app, `{ communityLayerStatus(userId: "${userId}") { userId status } }`);
      expect(literal.data!.communityLayerStatus).toEqual({ userId, status: 'LEFT' });
    },
  );
});
