import type pg from 'pg';
import { describe, expect, it } from 'vitest';
import type { App } from '../src/app.js';
import { gql, startApp, token, useCluster, type Cluster } from './support/harness.js';

let app: App;
let db: pg.Client;
let cluster: Cluster;
useCluster([{}], (started) => {
  cluster = started;
  app = started.apps[0]!;
  db = started.db;
});

const MEDIA = 'application/graphql-response+json';

/** POSTs a raw body and reads the response as the spec's client would. */
async function post(body: string, headers: Record<string, string> = {}, target: App = app) {
  const response = await fetch(target.url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: MEDIA,
      authorization: `Bearer ${await token('1', 'community:admin signals:write')}`,
      ...headers,
    },
    body,
  });
  const text = await response.text();
  return { status: response.status, type: response.headers.get('content-type') ?? '', text, json: JSON.parse(text) as Record<string, any> };
}

const operation = (query: string, variables?: Record<string, unknown>) => JSON.stringify({ query, variables });

async function written(): Promise<string> {
  const { rows } = await db.query(`SELECT concat_ws('/', (SELECT count(*) FROM signal), (SELECT count(*) FROM cohort_contribution),
    (SELECT coalesce(sum(signal_count), 0) FROM community_item_aggregate)) AS n`);
  return rows[0].n;
}

/** A rejected request: a 400 with the GraphQL response media type, no `data`, one error with `code`. */
async function expectRefused(body: string, code: string, headers?: Record<string, string>) {
  const response = await post(body, headers);
  expect(response.status).toBe(400);
  expect(response.type).toContain(MEDIA);
  expect(response.json).not.toHaveProperty('data');
  const codes = (response.json['errors'] as { extensions?: { code?: string } }[]).map((error) => error.extensions?.code);
  expect(codes).toContain(code);
  return response.json['errors'] as { message: string; extensions: Record<string, unknown> }[];
}

const signalsMutation = (aliases: number) =>
  `mutation ($x: [SignalInput!]!) { ${Array.from({ length: aliases }, (_, i) => `a${i}: signals(inputs: $x) { signalId }`).join(' ')} }`;
const inputs = (count: number, cohorts: number, userId = '700') =>
  Array.from({ length: count }, (_, i) => ({
    userId,
    itemId: `budget-${i % 7}`,
    kind: 'VIEW',
    context: { cohortIds: Array.from({ length: cohorts }, (_, c) => `cohort-${c}`) },
  }));

describe('operation limits: a 4xx with a stable code, before anything runs', () => {
  it('too many tokens: TOO_MANY_TOKENS, not a "Syntax Error"', async () => {
    const [error] = await expectRefused(operation(`{ ${'__typename '.repeat(6000)} }`), 'TOO_MANY_TOKENS');
    expect(error!.message).not.toMatch(/^Syntax Error/);
    expect(error!.message).toContain('5000');
  });

  it('too deep: QUERY_TOO_DEEP, also through fragments', async () => {
    const deep = `{ __schema { types { ${'fields { type { '.repeat(6)} name ${'} } '.repeat(6)} } } }`;
    await expectRefused(operation(deep), 'QUERY_TOO_DEEP');
    const viaFragments = `{ __schema { ...A } } fragment A on __Schema { types { ...B } } fragment B on __Type { ${'fields { type { '.repeat(6)} name ${'} } '.repeat(6)} }`;
    await expectRefused(operation(viaFragments), 'QUERY_TOO_DEEP');
  });

  it('a standard introspection query is not too deep (ofType chains do not count)', async () => {
    const { getIntrospectionQuery } = await import('graphql');
    const response = await post(
      operation(getIntrospectionQuery({ specifiedByUrl: true, inputValueDeprecation: true, directiveIsRepeatable: true })),
    );
    expect(response.status).toBe(200);
    expect(response.json['data'].__schema.types.length).toBeGreaterThan(10);
  });

  it('31 aliases: TOO_MANY_ALIASES (30 pass)', async () => {
    const aliases = (n: number) => `{ ${Array.from({ length: n }, (_, i) => `a${i}: __typename`).join(' ')} }`;
    const [error] = await expectRefused(operation(aliases(31)), 'TOO_MANY_ALIASES');
    expect(error!.message).toBe('The document uses 31 aliases; at most 30 are allowed.');
    expect((await post(operation(aliases(30)))).status).toBe(200);
  });

  it('too many directives: TOO_MANY_DIRECTIVES', async () => {
    const fields = Array.from({ length: 21 }, (_, i) => `a${i % 20}: __typename @include(if: true)`).join(' ');
    await expectRefused(operation(`{ ${fields} }`), 'TOO_MANY_DIRECTIVES');
  });

  it('about 1000 repeated fields: QUERY_TOO_COMPLEX instead of an opaque "Validation aborted."', async () => {
    const repeated = `{ ${'__typename '.repeat(1000)} }`;
    const [error] = await expectRefused(operation(repeated), 'QUERY_TOO_COMPLEX');
    expect(error!.message).not.toContain('Validation aborted');
  });

  it('legacy application/json clients get the same errors with 200, as the GraphQL-over-HTTP spec asks', async () => {
    const response = await post(operation(`{ ${Array.from({ length: 31 }, (_, i) => `a${i}: __typename`).join(' ')} }`), {
      accept: 'application/json',
    });
    expect(response.status).toBe(200);
    expect(response.json['errors'][0].extensions.code).toBe('TOO_MANY_ALIASES');
  });
});

describe('the cost model reads variables and list arguments, and counts every alias', () => {
  const contributions = (first: string) =>
    `communityContributions(userId: "1", first: ${first}) { edges { node { signalId target itemId weight atNs } } pageInfo { hasNextPage endCursor } }`;

  it('the documented page size of 500 works as a literal and as a variable', async () => {
    const literal = await post(operation(`{ ${contributions('500')} }`));
    expect(literal.status).toBe(200);
    expect(literal.json['errors']).toBeUndefined();
    const variable = await post(operation(`query ($first: Int) { ${contributions('$first')} }`, { first: 500 }));
    expect(variable.status).toBe(200);
    expect(variable.json['errors']).toBeUndefined();
  });

  it('a page size passed as a variable counts like the literal: five aliases of 500 cost too much either way', async () => {
    const five = (first: string) => ['a', 'b', 'c', 'd', 'e'].map((alias) => `${alias}: ${contributions(first)}`).join(' ');
    const literal = await expectRefused(operation(`{ ${five('500')} }`), 'QUERY_TOO_COMPLEX');
    const variable = await expectRefused(operation(`query ($n: Int) { ${five('$n')} }`, { n: 500 }), 'QUERY_TOO_COMPLEX');
    expect(variable[0]!.extensions['cost']).toBe(literal[0]!.extensions['cost']);
    expect(literal[0]!.extensions['cost']).toBeGreaterThan(5000);
  });

  it('fragments spread under several aliases count each time', async () => {
    const query = `query ($n: Int) { ${Array.from({ length: 4 }, (_, i) => `a${i}: communityContributions(userId: "1", first: $n) { ...Page }`).join(' ')} }
      fragment Page on ContributionConnection { edges { node { signalId } } }`;
    expect((await post(operation(query, { n: 150 }))).status).toBe(200);
    await expectRefused(operation(query, { n: 1000 }), 'QUERY_TOO_COMPLEX');
  });

  it('a document measured before is measured anew with new variables, however its fragments are spread', async () => {
    const page = 'fragment P on Query { communityContributions(userId: "1", first: $n) { edges { node { signalId } } } }';
    const once = `query ($n: Int) { ...P } ${page}`;
    const twice = `query ($n: Int) { ... on Query { ...P } ... on Query { ...P } } ${page}`;
    expect((await post(operation(twice, { n: 1 }))).status).toBe(200);
    const [single] = await expectRefused(operation(once, { n: 100_000 }), 'QUERY_TOO_COMPLEX');
    const [double] = await expectRefused(operation(twice, { n: 100_000 }), 'QUERY_TOO_COMPLEX');
    expect(double!.extensions['cost']).toBe(2 * (single!.extensions['cost'] as number));
  });

  it('the length of signals(inputs) counts: a list in a variable costs what the same list costs as a literal', async () => {
    const strict = await startApp(cluster.databaseUrl, { GRAPHQL_MAX_COST: '50' }, { membershipSync: false });
    try {
      const literalInputs = `[${Array.from({ length: 20 }, () => '{ userId: "701", itemId: "c", kind: VIEW }').join(' ')}]`;
      const literal = `mutation { ${['a', 'b', 'c'].map((alias) => `${alias}: signals(inputs: ${literalInputs}) { signalId }`).join(' ')} }`;
      const before = await written();
      const costOf = async (body: string) => {
        const response = await post(body, {}, strict);
        expect(response.status).toBe(400);
        return response.json['errors'].find((error: { extensions: { code: string } }) => error.extensions.code === 'QUERY_TOO_COMPLEX')
          .extensions.cost;
      };
      const fromLiteral = await costOf(operation(literal));
      const fromVariable = await costOf(operation(signalsMutation(3), { x: inputs(20, 0, '701') }));
      expect(fromVariable).toBe(fromLiteral);
      expect(fromLiteral).toBeGreaterThanOrEqual(60);
      expect(await written()).toBe(before);
    } finally {
      await strict.stop();
    }
  });
});

describe('the per-request budget of signals and cohort attributions', () => {
  it('refuses the alias amplification request (30 × signals(inputs: $x), 1000 inputs, 32 cohorts each) and writes nothing', async () => {
    const before = await written();
    const body = operation(signalsMutation(30), { x: inputs(1000, 32) });
    expect(body.length).toBeGreaterThan(200_000);
    const errors = await expectRefused(body, 'REQUEST_BUDGET_EXCEEDED');
    const bySignals = errors.find((error) => error.extensions['budget'] === 'signals')!;
    expect(bySignals.extensions).toMatchObject({ code: 'REQUEST_BUDGET_EXCEEDED', requested: 30_000, limit: 1000 });
    expect(errors.find((error) => error.extensions['budget'] === 'cohortAttributions')!.extensions).toMatchObject({
      requested: 960_000,
      limit: 32_000,
    });
    expect(await written()).toBe(before);
    const { rows } = await db.query(`SELECT count(*)::int AS n FROM signal WHERE user_id = 700`);
    expect(rows[0].n).toBe(0);
  });

  it('one full batch (1000 signals × 32 cohorts) is within the budget and is written', async () => {
    const response = await post(operation(signalsMutation(1), { x: inputs(1000, 32, '702') }));
    expect(response.status).toBe(200);
    expect(response.json['errors']).toBeUndefined();
    const { rows } = await db.query(`SELECT count(*)::int AS n FROM signal WHERE user_id = 702`);
    expect(rows[0].n).toBe(1000);
  });

  it('two aliases of 600 signals exceed the signal budget even though each call is valid', async () => {
    const before = await written();
    const errors = await expectRefused(operation(signalsMutation(2), { x: inputs(600, 0, '703') }), 'REQUEST_BUDGET_EXCEEDED');
    expect(errors[0]!.message).toContain('1200 signals');
    expect(await written()).toBe(before);
  });

  it('single signal mutations under many aliases count too, and cohorts are counted once per distinct id', async () => {
    const small = await startApp(
      cluster.databaseUrl,
      { REQUEST_MAX_SIGNALS: '3', REQUEST_MAX_COHORT_ATTRIBUTIONS: '4' },
      { membershipSync: false },
    );
    try {
      const signal = (i: number) => `s${i}: signal(input: $i) { signalId }`;
      const query = (n: number) => `mutation ($i: SignalInput!) { ${Array.from({ length: n }, (_, i) => signal(i)).join(' ')} }`;
      const one = { userId: '704', itemId: 'x', kind: 'LIKE', context: { cohortIds: ['a', 'a', 'b'] } };
      const before = await written();
      const overSignals = await post(operation(query(4), { i: { ...one, context: null } }), {}, small);
      expect(overSignals.status).toBe(400);
      expect(overSignals.json['errors'][0].extensions).toMatchObject({
        code: 'REQUEST_BUDGET_EXCEEDED',
        budget: 'signals',
        requested: 4,
        limit: 3,
      });
      const overCohorts = await post(operation(query(3), { i: one }), {}, small);
      expect(overCohorts.json['errors'][0].extensions).toMatchObject({ budget: 'cohortAttributions', requested: 6, limit: 4 });
      expect(await written()).toBe(before);
      const within = await post(operation(query(2), { i: one }), {}, small);
      expect(within.json['errors']).toBeUndefined();
      expect(within.json['data'].s0.signalId).toBeDefined();
    } finally {
      await small.stop();
    }
  });

  it('variables are measured as coerced: a single input is a list of one, and ids 1 and "1" are one cohort', async () => {
    const small = await startApp(
      cluster.databaseUrl,
      { REQUEST_MAX_SIGNALS: '3', REQUEST_MAX_COHORT_ATTRIBUTIONS: '2' },
      { membershipSync: false },
    );
    try {
      const one = (cohortIds: unknown[]) => ({ userId: '705', itemId: 'x', kind: 'LIKE', context: { cohortIds } });
      const before = await written();
      const over = await post(operation(signalsMutation(1), { x: one([1, '1', 2, '2', 3]) }), {}, small);
      expect(over.status).toBe(400);
      expect(over.json['errors'][0].extensions).toMatchObject({
        code: 'REQUEST_BUDGET_EXCEEDED',
        budget: 'cohortAttributions',
        requested: 3,
        limit: 2,
      });
      expect(await written()).toBe(before);
      const within = await post(operation(signalsMutation(1), { x: one([1, '1', 2, '2']) }), {}, small);
      expect(within.json['errors']).toBeUndefined();
      expect(within.json['data'].a0).toHaveLength(1);
    } finally {
      await small.stop();
    }
  });
});

describe('bad requests', () => {
  it('a wrong media type is a 415 naming the right one (not a CSRF refusal)', async () => {
    for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'application/xml', 'multipart/form-data; boundary=x']) {
      const response = await post(operation('{ __typename }'), { 'content-type': type });
      expect(response.status).toBe(415);
      expect(response.json['errors'][0].extensions.code).toBe('UNSUPPORTED_MEDIA_TYPE');
      expect(response.json['errors'][0].message).toContain('application/json');
      expect(response.text).not.toMatch(/CSRF/i);
    }
  });

  it('bad JSON gets a fixed message that does not echo the body', async () => {
    const secret = 'do-not-echo-7f3a';
    const response = await post(`{"query": "{ __typename }", "${secret}`);
    expect(response.status).toBe(400);
    expect(response.json['errors'][0].message).toBe('POST body sent invalid JSON.');
    expect(response.json['errors'][0].extensions).toEqual({ code: 'BAD_REQUEST' });
    expect(response.text).not.toContain(secret);
    expect(response.text).not.toMatch(/Unexpected|position/);
  });

  it('limits also hold with a valid token and a valid document: the cost refusal names the numbers', async () => {
    const response = await gql(
      app,
      `{ a: communityContributions(userId: "1", first: 500) { edges { node { signalId } } } b: communityContributions(userId: "1", first: 500) { edges { node { signalId } } } c: communityContributions(userId: "1", first: 500) { edges { node { signalId } } } d: communityContributions(userId: "1", first: 500) { edges { node { signalId } } } e: communityContributions(userId: "1", first: 500) { edges { node { signalId } } } }`,
    );
    expect(response.status).toBe(400);
    expect(response.errors![0]!.message).toMatch(/could return \d+ objects .* at most 5000/);
  });
});
