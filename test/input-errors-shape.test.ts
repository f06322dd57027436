import { describe, expect, it } from 'vitest';
import type { App } from '../src/app.js';
import { token, useCluster } from './support/harness.js';

let app: App;
useCluster([{}], (cluster) => (app = cluster.apps[0]!));

const SIGNALS = 'mutation Send($i: [SignalInput!]!) { signals(inputs: $i) { signalId } }';

async function post(body: unknown, accept = 'application/graphql-response+json', headers: Record<string, string> = {}) {
  const response = await fetch(app.url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept,
      authorization: `Bearer ${await token('1', 'community:admin signals:write')}`,
      ...headers,
    },
    body: JSON.stringify(body),
  });
  return {
    status: response.status,
    body: (await response.json()) as { data?: unknown; errors: { message: string; extensions?: Record<string, unknown> }[] },
  };
}

const good = { userId: '7', itemId: 'a', kind: 'VIEW' };

describe('one shape for every input problem: BAD_USER_INPUT and the argument path', () => {
  it.each([
    ['a bad scalar in a variable (coercion)', { i: [good, good, { ...good, occurredAt: 'yesterday' }] }, 'inputs[2].occurredAt'],
    ['a number for a UInt64 (coercion)', { i: [{ ...good, userId: 42 }] }, 'inputs[0].userId'],
    ['an unknown enum value (coercion)', { i: [good, { ...good, kind: 'STARE' }] }, 'inputs[1].kind'],
    ['a missing required field (coercion)', { i: [{ userId: '7', kind: 'VIEW' }] }, 'inputs[0].itemId'],
    ['an id the server refuses (validation)', { i: [good, { ...good, itemId: 'a\u0007' }] }, 'inputs[1].itemId'],
  ])('%s', async (_what, variables, argument) => {
    const { status, body } = await post({ query: SIGNALS, variables });
    expect(status).toBe(body.data === undefined ? 400 : 200);
    expect(body.errors[0]!.extensions).toMatchObject({ code: 'BAD_USER_INPUT', argument });
  });

  it('a bad scalar literal names its argument with the list index', async () => {
    const { body } = await post({
      query:
        'mutation { signals(inputs: [{ userId: "7", itemId: "a", kind: VIEW }, { userId: "7", itemId: "a", kind: VIEW, occurredAt: "soon" }]) { signalId } }',
    });
    expect(body.errors[0]!.extensions).toMatchObject({ code: 'BAD_USER_INPUT', argument: 'inputs[1].occurredAt' });
  });
});

describe('HTTP status by Accept (GraphQL over HTTP)', () => {
  const badVariable = { query: SIGNALS, variables: { i: [{ ...good, userId: 42 }] } };
  it.each([
    ['a bad variable', badVariable],
    ['a parse error', { query: 'mutation {' }],
    ['a validation error', { query: '{ nope }' }],
  ])('%s: 200 for application/json, 400 for application/graphql-response+json', async (_what, request) => {
    expect((await post(request, 'application/json')).status).toBe(200);
    expect((await post(request)).status).toBe(400);
  });
});

describe('CSRF: the header is needed only where the browser could attach credentials by itself', () => {
  const get = async (headers: Record<string, string>) =>
    (await fetch(`${app.url}?query=${encodeURIComponent('{ __typename }')}`, { headers: { accept: 'application/json', ...headers } }))
      .status;
  it('a GET with a bearer token passes; with cookies or without credentials it needs the header', async () => {
    const bearer = `Bearer ${await token('1')}`;
    expect(await get({ authorization: bearer })).toBe(200);
    expect(await get({ authorization: bearer, cookie: 'session=1' })).toBe(403);
    expect(await get({})).toBe(403);
    expect(await get({ 'x-graphql-yoga-csrf': '1' })).toBe(200);
  });
});
