import type pg from 'pg';
import { describe, expect, it } from 'vitest';
import type { App } from '../src/app.js';
import { fingerprint } from './support/database-fingerprint.js';
import { gql, token, useCluster } from './support/harness.js';
import { argumentOf, operations, type Problem, PROCESSOR, prepare, SCOPES, send, withText } from './support/text-input-operations.js';

/**
 * Every text input of the schema (found by introspection: a new argument is covered by itself)
 * refuses NUL and lone surrogates with BAD_USER_INPUT naming its path, and writes nothing. The bad
 * inputs go to one database, which nothing else writes to while they do; the same inputs without
 * the bad character go to another first, to show each is valid and which caller may send it.
 */
let app: App;
let db: pg.Client;
let controlApp: App;
useCluster([{}], (cluster) => ((app = cluster.apps[0]!), (db = cluster.db)));
useCluster([{}], (cluster) => (controlApp = cluster.apps[0]!));

/** A user with every scope, and a service (no user id: the feed, acknowledgements) registered as a processor. */
const CALLERS = [() => token('1', SCOPES), () => token(PROCESSOR, SCOPES)];
const NOT_ALLOWED = new Set(['FORBIDDEN', 'UNAUTHENTICATED']);
const BAD: [string, string][] = [
  ['NUL', '\u0000'],
  ['a lone surrogate', '\ud800'],
];

describe('NUL and lone surrogates in any text input: BAD_USER_INPUT naming the path, nothing written', () => {
  let found: Awaited<ReturnType<typeof operations>>;
  const callers = new Map<string, string>();

  it('introspection finds every text input, each in a valid input with a caller allowed to send it', async () => {
    const cursor = await prepare(controlApp, true);
    found = await operations(controlApp, { 'communityContributions.after': cursor });
    expect(found.unbuildable).toEqual([]);
    const covered = found.operations.flatMap(({ field, texts }) => texts.map((path) => `${field}.${argumentOf(path)}`));
    // What the issue found failing is among what introspection found (not the list the test uses).
    expect(covered).toEqual(
      expect.arrayContaining([
        'registerDownstreamProcessor.name',
        'registerDownstreamProcessor.subject',
        'disableWebhookEndpoint.reason',
        'acknowledgeCommunityPurge.reason',
        'registerWebhookEndpoint.url',
        'signal.input.context.surface',
        'communityMembershipChanges.after',
        'communityContributions.after',
      ]),
    );
    const failures: string[] = [];
    for (const operation of found.operations) {
      for (const caller of CALLERS) {
        const bearer = await caller();
        const { errors, items } = await send(controlApp, operation, operation.variables, bearer);
        const codes = [...errors.map((error) => error.extensions?.code), ...(items ?? []).map((item) => item.code)];
        if (codes.some((code) => NOT_ALLOWED.has(code as string))) continue;
        if (codes.includes('BAD_USER_INPUT') || codes.includes('NO_EVENT')) {
          failures.push(`${operation.field}: refused as input: ${JSON.stringify(errors)}`);
        }
        callers.set(operation.field, bearer);
        break;
      }
      if (!callers.has(operation.field)) failures.push(`${operation.field}: no caller is allowed`);
    }
    expect(failures).toEqual([]);
  });

  it('every one of them refuses NUL and a lone surrogate, naming the path, and writes nothing', async () => {
    await prepare(app, false);
    const failures: string[] = [];
    for (const operation of found.operations) {
      for (const path of operation.texts) {
        for (const [what, bad] of BAD) {
          const argument = argumentOf(path);
          const variables = withText(operation.variables, path, (text) => `${text.slice(0, 1)}${bad}${text.slice(1)}`);
          const before = await fingerprint(db);
          const { errors, items } = await send(app, operation, variables, callers.get(operation.field)!);
          const after = await fingerprint(db);
          const refusal = items ? items[0] : errors[0]?.extensions;
          const label = `${operation.field}(${argument}) with ${what}`;
          if (refusal?.code !== 'BAD_USER_INPUT' || refusal.argument !== argument) {
            failures.push(`${label}: ${JSON.stringify(items ?? errors)}`);
          }
          const changed = Object.keys(after).filter((table) => after[table] !== before[table]);
          if (changed.length > 0) failures.push(`${label}: wrote to ${changed.join(', ')}`);
        }
      }
    }
    expect(failures).toEqual([]);
  });
  it('a batch that skips invalid signals skips one with bad text like any other invalid item', async () => {
    const send = `mutation ($i: [SignalInput!]!) { sendSignals(inputs: $i, invalid: SKIP) {
      storedCount items { __typename ... on InvalidSignal { index argument code } } } }`;
    const signal = (eventId: string) => ({ userId: '2', itemId: 'text-batch', kind: 'VIEW', eventId });
    const count = async () => Number((await db.query(`SELECT count(*) AS n FROM signal WHERE user_id = 2`)).rows[0].n);
    const before = await count();
    const inputs = [signal('ok'), signal('bad\u0000'), { ...signal('bad-2'), context: { surface: '\ud800' } }];
    const { data, errors } = await gql(app, send, { i: inputs });
    expect(errors).toBeUndefined();
    expect(data!.sendSignals.storedCount).toBe(1);
    expect(data!.sendSignals.items.slice(1)).toEqual([
      { __typename: 'InvalidSignal', index: 1, argument: 'inputs[1].eventId', code: 'BAD_USER_INPUT' },
      { __typename: 'InvalidSignal', index: 2, argument: 'inputs[2].context.surface', code: 'BAD_USER_INPUT' },
    ]);
    expect(await count()).toBe(before + 1);
  });

  it('a variable nested deeper than any call stack is refused as input, not a crash', async () => {
    const depth = 200_000;
    const body =
      `{"query":"mutation ($r: String!) { disableWebhookEndpoint(id: \\"1\\", reason: $r) { __typename } }",` +
      `"variables":{"r":${'['.repeat(depth)}"x\\u0000"${']'.repeat(depth)}}}`;
    const response = await fetch(app.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json', authorization: `Bearer ${await token('1', SCOPES)}` },
      body,
    });
    const { errors } = (await response.json()) as { errors: Problem[] };
    expect({ status: response.status, code: errors[0]?.extensions?.code }).toEqual({ status: 200, code: 'BAD_USER_INPUT' });
  });

  it('literals too, also through a variable default; the message says what and where', async () => {
    const register = 'mutation { registerDownstreamProcessor(name: "a\\u0000b", subject: "s") { __typename } }';
    const literal = await gql(app, register);
    expect(literal.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', argument: 'name' });
    expect(literal.errors?.[0]?.message).toBe('Invalid value for argument "name": text must not contain U+0000 (NUL), found at index 1');
    const disable = 'mutation ($r: String = "x\\u0000") { disableWebhookEndpoint(id: "1", reason: $r) { __typename } }';
    const byDefault = await gql(app, disable);
    expect(byDefault.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', argument: 'reason' });
    const page = 'query ($c: String) { communityMembershipChangePage(after: $c) { __typename } }';
    const surrogate = await gql(app, page, { c: 'ab\udc00' });
    expect(surrogate.errors?.[0]?.message).toBe(
      'Invalid value for argument "after": text must be well-formed Unicode: lone surrogate U+DC00 at index 2',
    );
  });
});
