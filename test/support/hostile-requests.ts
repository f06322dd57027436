import type { App } from '../../src/app.js';

/** The battery of malformed and hostile requests (test/hostile.test.ts), and how each is sent. */

export interface Hostile {
  method?: string;
  headers?: Record<string, string>;
  body?: BodyInit | null;
  query?: string;
  url?: string;
  target?: 'development' | 'production';
}

const json = (payload: unknown): Hostile => ({ body: JSON.stringify(payload) });
export const operation = (query: string, variables?: unknown): Hostile => json({ query, variables });
const signal = (input: unknown): Hostile => operation(`mutation ($i: SignalInput!) { signal(input: $i) { signalId } }`, { i: input });
const valid = { userId: '9', itemId: 'h', kind: 'VIEW' };
const deep = (levels: number) => `{ __schema { types { ${'fields { type { '.repeat(levels)} name ${'} } '.repeat(levels)} } } }`;

export const battery: [string, Hostile][] = [
  ['invalid JSON', { body: '{"query": ' }],
  ['empty body', { body: '' }],
  ['JSON null', { body: 'null' }],
  ['JSON string', { body: '"{ __typename }"' }],
  ['JSON array (batching off)', json([{ query: '{ __typename }' }, { query: '{ __typename }' }])],
  ['query is a number', json({ query: 42 })],
  ['query missing', json({ variables: {} })],
  ['variables is a string', json({ query: 'query ($u: UInt64) { communityLayerStatus(userId: $u) { status } }', variables: 'x' })],
  ['text/plain content type', { body: JSON.stringify({ query: '{ __typename }' }), headers: { 'content-type': 'text/plain' } }],
  ['form content type', { body: 'query=%7B__typename%7D', headers: { 'content-type': 'application/x-www-form-urlencoded' } }],
  ['multipart content type', { body: '--x\r\n\r\n--x--', headers: { 'content-type': 'multipart/form-data; boundary=x' } }],
  ['XML content type', { body: '<query/>', headers: { 'content-type': 'application/xml' } }],
  ['body over the limit', signal({ ...valid, itemId: 'x'.repeat(2 * 1024 * 1024) })],
  ['padding over the limit', { body: `${' '.repeat(1024 * 1024 + 10)}{}` }],
  ['chunked body without length', { body: 'stream' }],
  ['syntax error', operation('mutation { leaveCommunityLayer(userId: "1") { status }')],
  ['unknown field', operation('{ communityLayerStatus(userId: "1") { password } }')],
  ['unknown argument', operation('{ communityLayerStatus(userId: "1", all: true) { status } }')],
  ['unknown type in variables', operation('query ($u: Secret) { communityLayerStatus(userId: $u) { status } }', { u: '1' })],
  ['missing required argument', operation('{ communityItemAggregate { signalCount } }')],
  ['missing required input', operation('mutation { signal { signalId } }')],
  [
    'variable of the wrong type (object)',
    operation('query ($u: UInt64) { communityLayerStatus(userId: $u) { status } }', { u: { $gt: 1 } }),
  ],
  ['variable of the wrong type (array)', operation('query ($u: UInt64) { communityLayerStatus(userId: $u) { status } }', { u: ['1'] })],
  ['variable of the wrong type (bool)', operation('query ($u: UInt64) { communityLayerStatus(userId: $u) { status } }', { u: true })],
  ['non-null variable missing', operation('query ($u: UInt64!) { communityLayerStatus(userId: $u) { status } }', {})],
  ['UInt64 negative literal', operation('{ communityLayerStatus(userId: "-1") { status } }')],
  ['UInt64 overflow literal', operation('{ communityLayerStatus(userId: "18446744073709551616") { status } }')],
  ['UInt64 float literal', operation('{ communityLayerStatus(userId: 1.5) { status } }')],
  ['UInt64 exponent string', operation('{ communityLayerStatus(userId: "1e5") { status } }')],
  ['UInt64 hex string', operation('{ communityLayerStatus(userId: "0xff") { status } }')],
  ['UInt64 enormous', operation(`{ communityLayerStatus(userId: "${'9'.repeat(5000)}") { status } }`)],
  ['UInt64 with NUL', operation('query ($u: UInt64) { communityLayerStatus(userId: $u) { status } }', { u: '1\u0000' })],
  ['first beyond Int', operation('{ communityContributions(userId: "1", first: 99999999999) { edges { cursor } } }')],
  ['first negative', operation('{ communityContributions(userId: "1", first: -1) { edges { cursor } } }')],
  ['first too large', operation('{ communityContributions(userId: "1", first: 100000) { edges { cursor } } }')],
  ['garbage cursor', operation('{ communityContributions(userId: "1", after: "!!!") { edges { cursor } } }')],
  ['unknown enum value', signal({ ...valid, kind: 'view' })],
  [
    'weight as Infinity',
    {
      body: `{"query":"mutation ($i: SignalInput!) { signal(input: $i) { signalId } }","variables":{"i":{"userId":"9","itemId":"h","kind":"VIEW","weight":1e400}}}`,
    },
  ],
  ['weight over the bound', signal({ ...valid, weight: 1e7 })],
  ['impossible date', signal({ ...valid, occurredAt: '2026-13-45T25:61:00Z' })],
  ['null for a non-null field', signal({ ...valid, userId: null })],
  ['10,000 cohorts', signal({ ...valid, context: { cohortIds: Array.from({ length: 10_000 }, (_, i) => `c${i}`) } })],
  ['nested arrays where ids go', signal({ ...valid, context: { cohortIds: [[['deep']]] } })],
  [
    'prototype pollution attempt',
    {
      body: '{"query":"mutation ($i: SignalInput!) { signal(input: $i) { signalId } }","variables":{"i":{"__proto__":{"admin":true},"userId":"9","kind":"VIEW"}}}',
    },
  ],
  [
    '1001 signals in one call',
    operation('mutation ($i: [SignalInput!]!) { signals(inputs: $i) { signalId } }', { i: Array.from({ length: 1001 }, () => valid) }),
  ],
  ['deep nesting', operation(deep(30))],
  [
    'alias bomb',
    operation(`{ ${Array.from({ length: 500 }, (_, i) => `a${i}: communityItemAggregate(itemId: "x") { signalCount }`).join(' ')} }`),
  ],
  ['token flood', operation(`{ ${'__typename '.repeat(8000)} }`)],
  ['directive flood', operation(`{ __typename ${'@include(if: true) '.repeat(100)} }`)],
  ['fragment cycle', operation('{ ...A } fragment A on Query { ...B } fragment B on Query { ...A }')],
  ['unknown operation name', json({ query: 'query A { __typename } query B { __typename }', operationName: 'C' })],
  ['two operations, no name', operation('query A { __typename } query B { __typename }')],
  ['subscription that does not exist', operation('subscription { leaves }')],
  [
    'mutation over GET',
    {
      method: 'GET',
      query: 'query=mutation%20%7BleaveCommunityLayer(userId%3A%221%22)%7Bstatus%7D%7D',
      headers: { 'x-graphql-yoga-csrf': '1' },
    },
  ],
  // A bearer token alone is never attached cross-site; cookies are (src/server/csrf.ts).
  ['GET with cookies and without the CSRF header', { method: 'GET', query: 'query=%7B__typename%7D', headers: { cookie: 'session=1' } }],
  ['PUT', { method: 'PUT', body: JSON.stringify({ query: '{ __typename }' }) }],
  ['DELETE', { method: 'DELETE' }],
  [
    'Basic credentials',
    { body: JSON.stringify({ query: '{ communityLayerStatus { status } }' }), headers: { authorization: 'Basic dXNlcjpwYXNz' } },
  ],
  [
    'bearer garbage',
    { body: JSON.stringify({ query: '{ communityLayerStatus { status } }' }), headers: { authorization: 'Bearer not.a.jwt.at.all' } },
  ],
  [
    'bearer without token',
    { body: JSON.stringify({ query: '{ communityLayerStatus { status } }' }), headers: { authorization: 'Bearer ' } },
  ],
  ['field suggestions in production', { ...operation('{ communityLayerStatu { status } }'), target: 'production' }],
  ['introspection in production', { ...operation('{ __schema { types { name } } }'), target: 'production' }],
  ['smaller body limit in production', { ...signal({ ...valid, itemId: 'y'.repeat(100_000) }), target: 'production' }],
  ['unknown path', { url: '/graphql/../admin', body: '{}' }],
];

export async function sendHostile(hostile: Hostile, apps: { development: App; production: App }, bearer: string): Promise<Response> {
  const target = apps[hostile.target ?? 'development'];
  const base = new URL(target.url);
  const url = new URL(hostile.url ?? base.pathname, base);
  if (hostile.query) url.search = hostile.query;
  const method = hostile.method ?? 'POST';
  const bodyless = method === 'GET' || method === 'DELETE';
  // A stream has no known length: fetch sends it chunked.
  const body =
    hostile.body === 'stream'
      ? { body: new Blob([JSON.stringify({ query: '{ __typename }' })]).stream(), duplex: 'half' }
      : { body: hostile.body ?? null };
  return fetch(url, {
    method,
    headers: { ...(bodyless ? {} : { 'content-type': 'application/json' }), authorization: `Bearer ${bearer}`, ...hostile.headers },
    ...(bodyless ? {} : body),
  } as RequestInit);
}
