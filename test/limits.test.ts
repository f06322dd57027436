import type pg from 'pg';
import { describe, expect, it } from 'vitest';
import type { App } from '../src/app.js';
import { gql, useCluster, type Cluster, rowCounts } from './support/harness.js';
import { expectRefused, inputs, instanceWith, operation, post, signalsMutation } from './support/limit-requests.js';

let app: App;
let db: pg.Client;
let cluster: Cluster;
useCluster([{}], (started) => ((cluster = started), (app = started.apps[0]!), (db = started.db)));

describe('operation limits: a 4xx with a stable code, before anything runs', () => {
  it('too many tokens: TOO_MANY_TOKENS, not a "Syntax Error"', async () => {
    const [error] = await expectRefused(app, operation(`{ ${'__typename '.repeat(6000)} }`), 'TOO_MANY_TOKENS');
    expect(error!.message).not.toMatch(/^Syntax Error/);
    expect(error!.message).toContain('5000');
  });

  it('too deep: QUERY_TOO_DEEP, also through fragments', async () => {
    const deep = `{ __schema { types { ${'fields { type { '.repeat(6)} name ${'} } '.repeat(6)} } } }`;
    await expectRefused(app, operation(deep), 'QUERY_TOO_DEEP');
    const viaFragments = `{ __schema { ...A } } fragment A on __Schema { types { ...B } } fragment B on __Type { ${'fields { type { '.repeat(6)} name ${'} } '.repeat(6)} }`;
    await expectRefused(app, operation(viaFragments), 'QUERY_TOO_DEEP');
  });

  it('a standard introspection query is not too deep (ofType chains do not count)', async () => {
    const { getIntrospectionQuery } = await import('graphql');
    const response = await post(
      app,
      operation(getIntrospectionQuery({ specifiedByUrl: true, inputValueDeprecation: true, directiveIsRepeatable: true })),
    );
    expect(response.status).toBe(200);
    expect(response.json['data'].__schema.types.length).toBeGreaterThan(10);
  });

  it('31 aliases: TOO_MANY_ALIASES (30 pass)', async () => {
    const aliases = (n: number) => `{ ${Array.from({ length: n }, (_, i) => `a${i}: __typename`).join(' ')} }`;
    const [error] = await expectRefused(app, operation(aliases(31)), 'TOO_MANY_ALIASES');
    expect(error!.message).toBe('The document uses 31 aliases; at most 30 are allowed.');
    expect((await post(app, operation(aliases(30)))).status).toBe(200);
  });

  it('too many directives: TOO_MANY_DIRECTIVES', async () => {
    const fields = Array.from({ length: 21 }, (_, i) => `a${i % 20}: __typename @include(if: true)`).join(' ');
    await expectRefused(app, operation(`{ ${fields} }`), 'TOO_MANY_DIRECTIVES');
  });

  it('about 1000 repeated fields: QUERY_TOO_COMPLEX instead of an opaque "Validation aborted."', async () => {
    const repeated = `{ ${'__typename '.repeat(1000)} }`;
    const [error] = await expectRefused(app, operation(repeated), 'QUERY_TOO_COMPLEX');
    expect(error!.message).not.toContain('Validation aborted');
  });

  it('legacy application/json clients get the same errors with 200, as the GraphQL-over-HTTP spec asks', async () => {
    const response = await post(app, operation(`{ ${Array.from({ length: 31 }, (_, i) => `a${i}: __typename`).join(' ')} }`), {
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
    const literal = await post(app, operation(`{ ${contributions('500')} }`));
    expect(literal.status).toBe(200);
    expect(literal.json['errors']).toBeUndefined();
    const variable = await post(app, operation(`query ($first: Int) { ${contributions('$first')} }`, { first: 500 }));
    expect(variable.status).toBe(200);
    expect(variable.json['errors']).toBeUndefined();
  });

  it('a page size passed as a variable counts like the literal: five aliases of 500 cost too much either way', async () => {
    const five = (first: string) => ['a', 'b', 'c', 'd', 'e'].map((alias) => `${alias}: ${contributions(first)}`).join(' ');
    const literal = await expectRefused(app, operation(`{ ${five('500')} }`), 'QUERY_TOO_COMPLEX');
    const variable = await expectRefused(app, operation(`query ($n: Int) { ${five('$n')} }`, { n: 500 }), 'QUERY_TOO_COMPLEX');
    expect(variable[0]!.extensions['cost']).toBe(literal[0]!.extensions['cost']);
    expect(literal[0]!.extensions['cost']).toBeGreaterThan(5000);
  });

  it('fragments spread under several aliases count each time', async () => {
    const query = `query ($n: Int) { ${Array.from({ length: 4 }, (_, i) => `a${i}: communityContributions(userId: "1", first: $n) { ...Page }`).join(' ')} }
      fragment Page on ContributionConnection { edges { node { signalId } } }`;
    expect((await post(app, operation(query, { n: 150 }))).status).toBe(200);
    await expectRefused(app, operation(query, { n: 1000 }), 'QUERY_TOO_COMPLEX');
  });

  it('a document measured before is measured anew with new variables, however its fragments are spread', async () => {
    const page = 'fragment P on Query { communityContributions(userId: "1", first: $n) { edges { node { signalId } } } }';
    const once = `query ($n: Int) { ...P } ${page}`;
    const twice = `query ($n: Int) { ... on Query { ...P } ... on Query { ...P } } ${page}`;
    expect((await post(app, operation(twice, { n: 1 }))).status).toBe(200);
    const [single] = await expectRefused(app, operation(once, { n: 100_000 }), 'QUERY_TOO_COMPLEX');
    const [double] = await expectRefused(app, operation(twice, { n: 100_000 }), 'QUERY_TOO_COMPLEX');
    expect(double!.extensions['cost']).toBe(2 * (single!.extensions['cost'] as number));
  });

  it('the length of signals(inputs) counts: a list in a variable costs what the same list costs as a literal', async () => {
    const strict = await instanceWith(cluster.databaseUrl, { GRAPHQL_MAX_COST: '50' });
    const literalInputs = `[${Array.from({ length: 20 }, () => '{ userId: "701", itemId: "c", kind: VIEW }').join(' ')}]`;
    const literal = `mutation { ${['a', 'b', 'c'].map((alias) => `${alias}: signals(inputs: ${literalInputs}) { signalId }`).join(' ')} }`;
    const before = await rowCounts(db);
    const costOf = async (body: string) => {
      const response = await post(strict, body);
      expect(response.status).toBe(400);
      return response.json['errors'].find((error: { extensions: { code: string } }) => error.extensions.code === 'QUERY_TOO_COMPLEX')
        .extensions.cost;
    };
    const fromLiteral = await costOf(operation(literal));
    const fromVariable = await costOf(operation(signalsMutation(3), { x: inputs(20, 0, '701') }));
    expect(fromVariable).toBe(fromLiteral);
    expect(fromLiteral).toBeGreaterThanOrEqual(60);
    expect(await rowCounts(db)).toBe(before);
  });
});

describe('the per-request budget of signals and cohort attributions', () => {
  it('refuses the alias amplification request (30 × signals(inputs: $x), 1000 inputs, 32 cohorts each) and writes nothing', async () => {
    const before = await rowCounts(db);
    const body = operation(signalsMutation(30), { x: inputs(1000, 32) });
    expect(body.length).toBeGreaterThan(200_000);
    const errors = await expectRefused(app, body, 'REQUEST_BUDGET_EXCEEDED');
    const bySignals = errors.find((error) => error.extensions['budget'] === 'signals')!;
    expect(bySignals.extensions).toMatchObject({ code: 'REQUEST_BUDGET_EXCEEDED', requested: 30_000, limit: 1000 });
    const byCohorts = errors.find((error) => error.extensions['budget'] === 'cohortAttributions')!;
    expect(byCohorts.extensions).toMatchObject({ requested: 960_000, limit: 32_000 });
    expect(await rowCounts(db)).toBe(before);
    const { rows } = await db.query(`SELECT count(*)::int AS n FROM signal WHERE user_id = 700`);
    expect(rows[0].n).toBe(0);
  });

  it('one full batch (1000 signals × 32 cohorts) is within the budget and is written', async () => {
    const response = await post(app, operation(signalsMutation(1), { x: inputs(1000, 32, '702') }));
    expect(response.status).toBe(200);
    expect(response.json['errors']).toBeUndefined();
    const { rows } = await db.query(`SELECT count(*)::int AS n FROM signal WHERE user_id = 702`);
    expect(rows[0].n).toBe(1000);
  });

  it('two aliases of 600 signals exceed the signal budget even though each call is valid', async () => {
    const before = await rowCounts(db);
    const errors = await expectRefused(app, operation(signalsMutation(2), { x: inputs(600, 0, '703') }), 'REQUEST_BUDGET_EXCEEDED');
    expect(errors[0]!.message).toContain('1200 signals');
    expect(await rowCounts(db)).toBe(before);
  });

  it('single signal mutations under many aliases count too, and cohorts are counted once per distinct id', async () => {
    const small = await instanceWith(cluster.databaseUrl, { REQUEST_MAX_SIGNALS: '3', REQUEST_MAX_COHORT_ATTRIBUTIONS: '4' });
    const signal = (i: number) => `s${i}: signal(input: $i) { signalId }`;
    const query = (n: number) => `mutation ($i: SignalInput!) { ${Array.from({ length: n }, (_, i) => signal(i)).join(' ')} }`;
    const one = { userId: '704', itemId: 'x', kind: 'LIKE', context: { cohortIds: ['a', 'a', 'b'] } };
    const before = await rowCounts(db);
    const overSignals = await post(small, operation(query(4), { i: { ...one, context: null } }));
    expect(overSignals.status).toBe(400);
    expect(overSignals.json['errors'][0].extensions).toMatchObject({
      code: 'REQUEST_BUDGET_EXCEEDED',
      budget: 'signals',
      requested: 4,
      limit: 3,
    });
    const overCohorts = await post(small, operation(query(3), { i: one }));
    expect(overCohorts.json['errors'][0].extensions).toMatchObject({ budget: 'cohortAttributions', requested: 6, limit: 4 });
    expect(await rowCounts(db)).toBe(before);
    const within = await post(small, operation(query(2), { i: one }));
    expect(within.json['errors']).toBeUndefined();
    expect(within.json['data'].s0.signalId).toBeDefined();
  });

  it('variables are measured as coerced: a single input is a list of one, and ids 1 and "1" are one cohort', async () => {
    const small = await instanceWith(cluster.databaseUrl, { REQUEST_MAX_SIGNALS: '3', REQUEST_MAX_COHORT_ATTRIBUTIONS: '2' });
    const one = (cohortIds: unknown[]) => ({ userId: '705', itemId: 'x', kind: 'LIKE', context: { cohortIds } });
    const before = await rowCounts(db);
    const over = await post(small, operation(signalsMutation(1), { x: one([1, '1', 2, '2', 3]) }));
    expect(over.status).toBe(400);
    expect(over.json['errors'][0].extensions).toMatchObject({
      code: 'REQUEST_BUDGET_EXCEEDED',
      budget: 'cohortAttributions',
      requested: 3,
      limit: 2,
    });
    expect(await rowCounts(db)).toBe(before);
    const within = await post(small, operation(signalsMutation(1), { x: one([1, '1', 2, '2']) }));
    expect(within.json['errors']).toBeUndefined();
    expect(within.json['data'].a0).toHaveLength(1);
  });
});

describe('bad requests', () => {
  it('limits also hold with a valid token and a valid document: the cost refusal names the numbers', async () => {
    const page = (alias: string) => `${alias}: communityContributions(userId: "1", first: 500) { edges { node { signalId } } }`;
    const response = await gql(app, `{ ${['a', 'b', 'c', 'd', 'e'].map(page).join(' ')} }`);
    expect(response.status).toBe(400);
    expect(response.errors![0]!.message).toMatch(/could return \d+ objects .* at most 5000/);
  });
});
