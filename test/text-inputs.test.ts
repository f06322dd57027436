import {
  buildClientSchema,
  getIntrospectionQuery,
  getNamedType,
  isEnumType,
  isInputObjectType,
  isLeafType,
  isListType,
  isNonNullType,
  type GraphQLField,
  type GraphQLInputType,
  type IntrospectionQuery,
} from 'graphql';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import type { App } from '../src/app.js';
import { subscribe } from './support/sse.js';
import { gql, token, useCluster } from './support/harness.js';

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

const SCOPES = 'community:admin signals:write community:feed community:purge-ack';
const PROCESSOR = 'text-inputs-processor';
/** A user with every scope, and a service (no user id: the feed, acknowledgements) registered as a processor. */
const CALLERS = [() => token('1', SCOPES), () => token(PROCESSOR, SCOPES)];
const NOT_ALLOWED = new Set(['FORBIDDEN', 'UNAUTHENTICATED']);
const BAD: [string, string][] = [
  ['NUL', '\u0000'],
  ['a lone surrogate', '\ud800'],
];

/** A valid value for each scalar that is sent as text; a scalar missing here fails the test. */
const VALID_TEXT: Record<string, string> = {
  String: 'valid-text',
  ID: 'valid-id',
  UInt64: '1',
  DateTime: '2026-01-02T03:04:05Z',
};
const VALID_OTHER: Record<string, unknown> = { Int: 1, Float: 1, Boolean: true };
/** Where the type's value is not valid: `field.path` (list indexes as `[]`). */
const VALID_AT: Record<string, unknown> = {
  'registerWebhookEndpoint.url': 'https://hooks.example.com/community',
  'communityMembershipChangePage.after': '0',
  'communityMembershipChanges.after': '0',
  'sendSignals.invalid': 'REJECT_ALL',
  // A reason is for a FAILED acknowledgement only.
  'acknowledgeCommunityPurge.state': 'FAILED',
};
/** Fields that report a bad input as an item of their answer, not as an error of the call. */
const PER_ITEM: Record<string, string> = { validateSignals: '{ argument code message }' };

interface Operation {
  kind: 'query' | 'mutation' | 'subscription';
  field: string;
  query: string;
  variables: Record<string, unknown>;
  /** Paths of every text leaf inside the variables, as the error names it (`inputs[0].itemId`). */
  texts: (string | number)[][];
}

/** One operation per root field with all of its arguments (optional ones too) built valid. */
type Path = (string | number)[];

async function operations(app: App, valid: Record<string, unknown>) {
  const introspection = await gql<IntrospectionQuery>(app, getIntrospectionQuery());
  const schema = buildClientSchema(introspection.data!);
  const unbuildable: string[] = [];
  const built: Operation[] = [];
  const roots = [
    ['query', schema.getQueryType()],
    ['mutation', schema.getMutationType()],
    ['subscription', schema.getSubscriptionType()],
  ] as const;
  for (const [kind, root] of roots) {
    for (const field of Object.values(root?.getFields() ?? {}) as GraphQLField<unknown, unknown>[]) {
      const texts: Path[] = [];
      const build = (type: GraphQLInputType, path: Path): unknown => {
        const at = `${field.name}.${argumentOf(path).replace(/\[\d+\]/g, '[]')}`;
        if (at in VALID_AT || at in valid) {
          const value = at in valid ? valid[at] : VALID_AT[at];
          if (typeof value === 'string' && !isEnumType(getNamedType(type))) texts.push(path);
          return value;
        }
        if (isNonNullType(type)) return build(type.ofType, path);
        if (isListType(type)) return [build(type.ofType, [...path, 0])];
        if (isInputObjectType(type)) {
          const fields = Object.values(type.getFields());
          return Object.fromEntries(fields.map((input) => [input.name, build(input.type, [...path, input.name])]));
        }
        if (isEnumType(type)) return type.getValues()[0]!.name;
        if (type.name in VALID_OTHER) return VALID_OTHER[type.name];
        if (type.name in VALID_TEXT) return (texts.push(path), VALID_TEXT[type.name]);
        unbuildable.push(`${at}: no valid value for ${type.name}`);
        return null;
      };
      const variables = Object.fromEntries(field.args.map(({ name, type }) => [name, build(type, [name])]));
      if (texts.length === 0) continue;
      const declared = field.args.map((argument) => `$${argument.name}: ${String(argument.type)}`).join(', ');
      const passed = field.args.map((argument) => `${argument.name}: $${argument.name}`).join(', ');
      const named = getNamedType(field.type);
      const selection = PER_ITEM[field.name] ?? (isLeafType(named) ? '' : '{ __typename }');
      const query = `${kind} (${declared}) { ${field.name}(${passed}) ${selection} }`;
      built.push({ kind, field: field.name, query, variables, texts });
    }
  }
  return { operations: built, unbuildable };
}

function withText(variables: Record<string, unknown>, path: Path, replace: (text: string) => string) {
  const copy = structuredClone(variables);
  let holder: any = copy;
  for (const step of path.slice(0, -1)) holder = holder[step];
  const last = path.at(-1)!;
  holder[last] = replace(holder[last]);
  return copy;
}

function argumentOf(path: Path): string {
  return path.map((step, i) => (typeof step === 'number' ? `[${step}]` : i === 0 ? step : `.${step}`)).join('');
}

/** Errors of the call (of a stream: of its first event), and the items a per-item field reports. */
type Problem = { message: string; extensions?: Record<string, unknown> };

async function send(app: App, operation: Operation, variables: Record<string, unknown>, bearer: string) {
  if (operation.kind !== 'subscription') {
    const { data, errors } = await gql(app, operation.query, variables, bearer);
    const items = PER_ITEM[operation.field] ? (data?.[operation.field] as any[]) : undefined;
    return { errors: (errors ?? []) as Problem[], items };
  }
  const stream = await subscribe(app, operation.query, variables, bearer);
  try {
    const first = await stream.next();
    const ended: Problem = { message: 'the stream ended without an event', extensions: { code: 'NO_EVENT' } };
    return { errors: first ? ((first.data?.errors ?? []) as Problem[]) : [ended], items: undefined };
  } finally {
    stream.close();
  }
}

/**
 * Every table's row count and checksum, but the fair-share budget's buckets: each instance leases
 * from them in the background, for what any request spent (refused or not).
 */
async function fingerprint(): Promise<Record<string, string>> {
  const { rows: tables } = await db.query(
    `SELECT table_name FROM information_schema.tables
      WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' AND table_name <> 'fair_share_bucket'
      ORDER BY 1`,
  );
  const prints: Record<string, string> = {};
  for (const { table_name: table } of tables as { table_name: string }[]) {
    const { rows } = await db.query(
      `SELECT count(*) || ':' || md5(coalesce(string_agg(t::text, '|' ORDER BY t::text), '')) AS print
         FROM ${pg.escapeIdentifier(table)} t`,
    );
    prints[table] = rows[0].print;
  }
  return prints;
}

/**
 * What a database needs for the inputs to be valid: a registered processor and a contribution (its
 * cursor); where streams must send a first event, also a change and a purge (which the webhook
 * dispatcher and the purge worker go on with in the background: so not where the bad inputs go).
 */
async function prepare(target: App, streams: boolean): Promise<string> {
  const admin = await token('1', SCOPES);
  const run = async (query: string) => expect((await gql(target, query, undefined, admin)).errors).toBeUndefined();
  await run(`mutation { registerDownstreamProcessor(name: "text inputs", subject: "${PROCESSOR}") { __typename } }`);
  await run('mutation { signal(input: { userId: "1", itemId: "text-inputs", kind: VIEW }) { signalId } }');
  const contributions = '{ communityContributions(userId: "1", first: 1) { edges { cursor } } }';
  const page = await gql(target, contributions, undefined, admin);
  if (streams) {
    await run('mutation { leaveCommunityLayer(userId: "1") { __typename } }');
    await run('mutation { purgeCommunityContributions(userId: "1") { __typename } }');
  }
  return page.data!.communityContributions.edges[0].cursor;
}

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
          const before = await fingerprint();
          const { errors, items } = await send(app, operation, variables, callers.get(operation.field)!);
          const after = await fingerprint();
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
