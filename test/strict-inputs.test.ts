import type pg from 'pg';
import { describe, expect, it } from 'vitest';
import type { App } from '../src/app.js';
import { gql, token, useCluster, type Cluster, type GraphQLResponse } from './support/harness.js';

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

/** Every table an input could reach: a refusal must leave all of them as they were. */
async function written(): Promise<string> {
  const { rows } = await db.query(`SELECT concat_ws('/',
    (SELECT count(*) FROM signal), (SELECT count(*) FROM cohort_contribution), (SELECT count(*) FROM community_membership),
    (SELECT count(*) FROM leave_episode), (SELECT count(*) FROM community_item_aggregate),
    (SELECT count(*) FROM cohort_item_aggregate)) AS n`);
  return rows[0].n;
}

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
  const accepted: [string, string, string][] = [
    ['a leap day', '2024-02-29T00:00:00Z', '2024-02-29T00:00:00.000000Z'],
    ['a leap day of a year divisible by 400', '2000-02-29T12:00:00Z', '2000-02-29T12:00:00.000000Z'],
    ['microseconds with an offset', '2026-11-29T13:00:00.123456+01:00', '2026-11-29T12:00:00.123456Z'],
    ['nine digits ending in zeros', '2026-11-29T12:00:00.123456000Z', '2026-11-29T12:00:00.123456Z'],
    ['one fractional digit, lower-case t and z', '2026-11-29t12:00:00.5z', '2026-11-29T12:00:00.500000Z'],
    ['a negative offset crossing into the next year', '2026-12-31T23:30:00-01:00', '2027-01-01T00:30:00.000000Z'],
    ['-00:00 (unknown local offset) is UTC', '2026-06-01T00:00:00-00:00', '2026-06-01T00:00:00.000000Z'],
    ['before the epoch', '1969-12-31T23:59:59.999999Z', '1969-12-31T23:59:59.999999Z'],
    ['the first instant of year 1', '0001-01-01T00:00:00Z', '0001-01-01T00:00:00.000000Z'],
    ['the last microsecond of year 9999', '9999-12-31T23:59:59.999999Z', '9999-12-31T23:59:59.999999Z'],
  ];

  it.each(accepted)('%s: %s is stored as %s, as a variable and as a literal', async (_label, occurredAt, stored) => {
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

  const refused: [string, unknown, string][] = [
    ['February 30', '2024-02-30T00:00:00Z', 'no such calendar date: 2024-02-30'],
    ['February 29 of a common year', '2023-02-29T00:00:00Z', 'no such calendar date'],
    ['February 29 of a century not divisible by 400', '1900-02-29T00:00:00Z', 'no such calendar date'],
    ['April 31', '2026-04-31T00:00:00Z', 'no such calendar date'],
    ['month 13', '2026-13-01T00:00:00Z', 'no such calendar date'],
    ['month 00', '2026-00-10T00:00:00Z', 'no such calendar date'],
    ['day 00', '2026-01-00T00:00:00Z', 'no such calendar date'],
    ['hour 24', '2026-01-01T24:00:00Z', 'hour must be 00–23'],
    ['minute 60', '2026-01-01T23:60:00Z', 'minute must be 00–59'],
    ['a leap second', '2016-12-31T23:59:60Z', 'leap seconds'],
    ['second 61', '2026-01-01T00:00:61Z', 'second must be 00–59'],
    ['no zone', '2026-01-01T00:00:00', 'with a zone'],
    ['an offset without a colon', '2026-01-01T00:00:00+0100', 'with a zone'],
    ['an offset of hours only', '2026-01-01T00:00:00+01', 'with a zone'],
    ['offset hour 24', '2026-01-01T00:00:00+24:00', 'zone offset'],
    ['offset minute 60', '2026-01-01T00:00:00+01:60', 'zone offset'],
    ['a date alone', '2026-01-01', 'RFC 3339'],
    ['a space instead of T', '2026-01-01 00:00:00Z', 'RFC 3339'],
    ['an empty fraction', '2026-01-01T00:00:00.Z', 'RFC 3339'],
    ['a nanosecond digit', '2026-01-01T00:00:00.000000001Z', 'stored to the microsecond'],
    ['seven fractional digits', '2026-01-01T00:00:00.1234567Z', 'stored to the microsecond'],
    ['ten fractional digits', '2026-01-01T00:00:00.1234560000Z', 'more than 9 fractional digits'],
    ['year 0000', '0000-06-01T00:00:00Z', 'years 0001–9999'],
    ['before year 1 in UTC', '0001-01-01T00:00:00+00:01', 'years 0001–9999'],
    ['after year 9999 in UTC', '9999-12-31T23:59:59-00:01', 'years 0001–9999'],
    ['non-ASCII digits', '٢٠٢٦-01-01T00:00:00Z', 'RFC 3339'],
    ['a two-digit year', '26-01-01T00:00:00Z', 'RFC 3339'],
    ['words', 'yesterday', 'RFC 3339'],
    ['empty', '', 'RFC 3339'],
    ['epoch milliseconds as a number', 1_767_225_600_000, 'RFC 3339 string'],
  ];

  it.each(refused)('%s (%j) is BAD_USER_INPUT naming occurredAt, and writes nothing', async (_label, occurredAt, reason) => {
    const before = await written();
    expectRefused(await gql(app, SIGNAL, { input: { ...valid, occurredAt } }), 'input.occurredAt', reason);
    expectRefused(await gql(app, SIGNALS, { inputs: [valid, { ...valid, occurredAt }] }), 'inputs[1].occurredAt', reason);
    expectRefused(await gql(app, VALIDATE, { input: { ...valid, occurredAt } }), 'input.occurredAt', reason);
    const literal = await gql(
      app,
      `mutation { signal(input: { userId: "300", itemId: "strict-item", kind: VIEW, occurredAt: ${JSON.stringify(occurredAt)} }) { signalId } }`,
    );
    expectRefused(literal, reason);
    if (typeof occurredAt === 'string') expect(literal.errors?.[0]?.extensions?.argument).toBe('input.occurredAt');
    expect(await written()).toBe(before);
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
  const refused: [string, string, string][] = [
    ['a lone high surrogate', 'a\ud800', 'lone surrogate U+D800'],
    ['a lone low surrogate', '\udc00b', 'lone surrogate U+DC00'],
    ['a pair in the wrong order', '\ude00\ud83d', 'lone surrogate'],
    ['NUL (Cc)', 'a\u0000b', 'U+0000'],
    ['TAB (Cc)', 'a\tb', 'U+0009'],
    ['DEL (Cc)', 'a\u007fb', 'U+007F'],
    ['NEXT LINE U+0085 (Cc)', 'a\u0085b', 'U+0085'],
    ['ZERO WIDTH SPACE U+200B (Cf)', 'a\u200bb', 'U+200B'],
    ['ZERO WIDTH JOINER U+200D (Cf)', 'a\u200db', 'U+200D'],
    ['RIGHT-TO-LEFT OVERRIDE U+202E (Cf)', '\u202eabc', 'U+202E'],
    ['BYTE ORDER MARK U+FEFF (Cf)', '\ufeffabc', 'U+FEFF'],
    ['SOFT HYPHEN U+00AD (Cf)', 'co\u00adop', 'U+00AD'],
    ['a language tag U+E0001 (Cf, astral)', 'a\u{e0001}', 'U+E0001'],
    ['LINE SEPARATOR U+2028 (Zl)', 'a\u2028b', 'U+2028'],
    ['PARAGRAPH SEPARATOR U+2029 (Zp)', 'a\u2029b', 'U+2029'],
    ['e + combining acute (NFD)', 'cafe\u0301', 'Normalization Form C'],
    ['ANGSTROM SIGN U+212B (NFC is U+00C5)', '\u212b', 'Normalization Form C'],
    ['Hangul jamo that compose to one syllable', '\u1100\u1161', 'Normalization Form C'],
  ];

  it.each(refused)('%s is BAD_USER_INPUT wherever an id comes in, and writes nothing', async (_label, id, reason) => {
    const before = await written();
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
    expect(await written()).toBe(before);
  });

  const accepted: [string, string][] = [
    ['precomposed é', 'caf\u00e9'],
    ['Å as U+00C5', '\u00c5ngstr\u00f6m'],
    ['an emoji (a valid surrogate pair)', 'item-\u{1f600}'],
    ['a ligature (NFC leaves it, only NFKC would not)', '\ufb01le'],
    ['CJK', '東京'],
    ['a Hangul syllable', '\uac00'],
    ['an inner space', 'a b'],
  ];

  const invalidUtf8: [string, number[]][] = [
    ['a stray 0xFF', [0xff]],
    ['a truncated sequence', [0xc3]],
    ['an overlong encoding of "/"', [0xc0, 0xaf]],
    ['an encoded surrogate (CESU-8)', [0xed, 0xa0, 0x80]],
    ['a code point above U+10FFFF', [0xf4, 0x90, 0x80, 0x80]],
  ];

  it.each(invalidUtf8)('a body with %s in an id is refused with 400 before parsing, and writes nothing', async (_label, bytes) => {
    const before = await written();
    const [head, tail] = JSON.stringify({ query: SIGNAL, variables: { input: { ...valid, itemId: 'a|b' } } }).split('|');
    const response = await rawGql(new Blob([head!, new Uint8Array(bytes), tail!]));
    expect(response.status).toBe(400);
    expect(response.errors?.[0]?.message).toContain('not valid UTF-8');
    expect(await written()).toBe(before);
  });

  it.each(accepted)('%s is stored byte for byte and found again', async (_label, id) => {
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
  // Raw JSON text of the value, so that number spellings reach the server as written.
  const refusedVariables: [string, string][] = [
    ['a JSON number', '42'],
    ['zero as a JSON number', '0'],
    ['negative zero', '-0'],
    ['an exponent', '1e3'],
    ['a fraction that is whole', '8000001.0'],
    ['a number above 2^53', '1152921504606846976'],
    ['the string "-0"', '"-0"'],
    ['leading zeros', '"007"'],
    ['a lone zero twice', '"00"'],
    ['a plus sign', '"+1"'],
    ['a leading space', '" 1"'],
    ['a trailing newline', '"1\\n"'],
    ['a string fraction', '"1.0"'],
    ['a string exponent', '"1e3"'],
    ['hex', '"0x1"'],
    ['digit separators', '"1_000"'],
    ['Arabic-Indic digits', '"\u0664\u0662"'],
    ['fullwidth digits', '"\uff14\uff12"'],
    ['a zero width space', '"\\u200b42"'],
    ['2^64', '"18446744073709551616"'],
    ['empty', '""'],
    ['a boolean', 'true'],
    ['an object', '{"n":"42"}'],
  ];

  it.each(refusedVariables)('%s (%s) is BAD_USER_INPUT as userId and as input.userId, and writes nothing', async (_label, json) => {
    const before = await written();
    expectRefused(await rawGql(`{"query":${JSON.stringify(LEAVE)},"variables":{"userId":${json}}}`), '$userId');
    const signal = `{"query":${JSON.stringify(SIGNAL)},"variables":{"input":{"userId":${json},"itemId":"strict-item","kind":"VIEW"}}}`;
    expectRefused(await rawGql(signal), 'input.userId');
    expect(await written()).toBe(before);
  });

  const refusedLiterals: [string, string][] = [
    ['an Int literal', '42'],
    ['zero as an Int literal', '0'],
    ['a negative Int literal', '-0'],
    ['a Float literal', '8000001.0'],
    ['an exponent literal', '1e3'],
    ['an enum-like literal', 'FORTY_TWO'],
    ['a list literal', '["42"]'],
    ['leading zeros', '"042"'],
  ];

  it.each(refusedLiterals)('%s (userId: %s) is BAD_USER_INPUT naming the argument, and writes nothing', async (_label, literal) => {
    const before = await written();
    const response = await gql(app, `mutation { leaveCommunityLayer(userId: ${literal}) { status } }`);
    expectRefused(response);
    expect(response.errors?.[0]?.extensions?.argument).toBe('userId');
    const signal = await gql(app, `mutation { signal(input: { userId: ${literal}, itemId: "strict-item", kind: VIEW }) { signalId } }`);
    expectRefused(signal);
    expect(signal.errors?.[0]?.extensions?.argument).toBe('input.userId');
    expect(await written()).toBe(before);
  });

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
