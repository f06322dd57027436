import { readFile } from 'node:fs/promises';
import { ApolloClient, gql, HttpLink, InMemoryCache } from '@apollo/client';
import { PersistedQueryLink } from '@apollo/client/link/persisted-queries';
import { addTypenameToDocument, print } from '@apollo/client/utilities';
import { Client as UrqlClient, cacheExchange, fetchExchange } from '@urql/core';
import { persistedExchange } from '@urql/exchange-persisted';
import { GraphQLClient } from 'graphql-request';
import { Network } from 'relay-runtime';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../src/app.js';
import type { Manifest } from '../src/graphql/trusted-documents/manifest.js';
import { RELAY_ID, registerTeamDocuments, sha256, TEAM_APQ, TEAM_ITEM } from './support/team-documents.js';
import { countingFetch } from './support/counting-fetch.js';
import { freshDatabase, startApp, token } from './support/harness.js';

let allow: App;
let allowOther: App;
let only: App;
let manifest: Manifest;
let codegen: Record<string, string>;
let bearer: string;
let authorization: { authorization: string };

beforeAll(async () => {
  const databaseUrl = await freshDatabase();
  const files = await registerTeamDocuments(databaseUrl);
  codegen = files.codegen;
  const teamFiles = { GRAPHQL_TRUSTED_DOCUMENTS_FILES: files.trustedDocumentsFiles };
  [allow, allowOther, only] = await Promise.all([
    startApp(databaseUrl, teamFiles),
    startApp(databaseUrl, teamFiles),
    startApp(databaseUrl, { ...teamFiles, GRAPHQL_TRUSTED_DOCUMENTS: 'only' }),
  ]);
  manifest = JSON.parse(await readFile(new URL('../trusted-documents.json', import.meta.url), 'utf8')) as Manifest;
  bearer = await token('1', 'community:admin signals:write');
  authorization = { authorization: `Bearer ${bearer}` };
}, 120_000);

afterAll(async () => {
  await Promise.all([allow?.stop(), allowOther?.stop(), only?.stop()]);
});

const bodyOf = (name: string) => manifest.operations.find((operation) => operation.name === name)!.body;

function apollo(app: App, counted = countingFetch()) {
  const link = new PersistedQueryLink({ sha256 }).concat(new HttpLink({ uri: app.url, fetch: counted.fetch, headers: authorization }));
  return { client: new ApolloClient({ cache: new InMemoryCache(), link }), sent: counted.sent };
}

describe('Apollo Client (default InMemoryCache, persisted-query link)', () => {
  it('allow: APQ registers a new document once, and every instance then answers its hash alone', async () => {
    const first = apollo(allow);
    const result = await first.client.query<any>({ query: gql(TEAM_APQ), variables: { itemId: 'apq' } });
    expect(result.data).toEqual({ communityItemAggregate: { __typename: 'ItemAggregate', itemId: 'apq', signalTotal: '0' } });
    expect(first.sent.map((sent) => Boolean(sent.body?.query))).toEqual([false, true]);

    const second = apollo(allowOther);
    await second.client.query<any>({ query: gql(TEAM_APQ), variables: { itemId: 'apq' } });
    expect(second.sent).toHaveLength(1);
    expect(second.sent[0]!.body!.query).toBeUndefined();
  });

  it('only: a manifest document runs by the hash Apollo computes, in one request', async () => {
    const { client, sent } = apollo(only);
    const result = await client.query<any>({ query: gql(bodyOf('ExampleAggregate')), variables: { itemId: 'x', cohortId: 'c' } });
    expect(result.data!.communityItemAggregate).toMatchObject({ itemId: 'x', signalTotal: '0' });
    expect(sent).toHaveLength(1);
  });

  it('only: a team’s Apollo manifest (GRAPHQL_TRUSTED_DOCUMENTS_FILES) is trusted; an unknown document is refused and not registered', async () => {
    const { client } = apollo(only);
    const result = await client.query<any>({ query: gql(TEAM_ITEM), variables: { itemId: 'team' } });
    expect(result.data!.communityItemAggregate.itemId).toBe('team');

    const unknown = 'query Stranger { communityItemAggregate(itemId: "s") { signalTotal } }';
    const refused = await apollo(only)
      .client.query<any>({ query: gql(unknown) })
      .then(
        () => 'ran',
        (error: Error) => error.message,
      );
    expect(refused).toContain('trusted documents only');
    const hashOnly = await post(only, {
      extensions: { persistedQuery: { version: 1, sha256Hash: sha256(print(addTypenameToDocument(gql(unknown)))) } },
    });
    expect(hashOnly.errors[0]!.message).toBe('PersistedQueryNotFound');
  });
});

function urql(app: App, counted = countingFetch()) {
  const client = new UrqlClient({
    url: app.url,
    exchanges: [cacheExchange, persistedExchange(), fetchExchange],
    fetch: counted.fetch,
    fetchOptions: { headers: authorization },
  });
  return { client, sent: counted.sent };
}

describe('urql (defaults: GET, no CSRF header)', () => {
  it('allow: the persisted exchange registers after PersistedQueryNotFound, then a hash alone is enough', async () => {
    const query = 'query UrqlItem($itemId: ID!) { communityItemAggregate(itemId: $itemId) { itemId } }';
    const first = urql(allow);
    const result = await first.client.query(query, { itemId: 'u' }).toPromise();
    expect(result.error).toBeUndefined();
    expect(result.data.communityItemAggregate.itemId).toBe('u');
    expect(first.sent[0]!.method).toBe('GET');
    expect(first.sent).toHaveLength(2);
    const second = urql(allowOther);
    expect((await second.client.query(query, { itemId: 'u' }).toPromise()).data.communityItemAggregate.itemId).toBe('u');
    expect(second.sent.map((sent) => sent.method)).toEqual(['GET']);
  });

  it('only: a manifest document runs by hash with GET', async () => {
    const { client, sent } = urql(only);
    const result = await client.query(bodyOf('ExampleAggregate'), { itemId: 'y', cohortId: 'c' }).toPromise();
    expect(result.error).toBeUndefined();
    expect(result.data.communityItemAggregate.itemId).toBe('y');
    expect(sent.map((one) => one.method)).toEqual(['GET']);
  });
});

describe('graphql-request (GET)', () => {
  it('allow: a GET query with a bearer token needs no CSRF header', async () => {
    const client = new GraphQLClient(allow.url, { method: 'GET', headers: authorization });
    expect(await client.request<{ communityItemAggregate: { itemId: string } }>(TEAM_ITEM, { itemId: 'g' })).toEqual({
      communityItemAggregate: { itemId: 'g', signalTotal: '0' },
    });
  });

  it('only: the text is refused with a code the caller can read', async () => {
    const client = new GraphQLClient(only.url, { method: 'GET', headers: authorization });
    await expect(client.request(TEAM_ITEM, { itemId: 'g' })).rejects.toThrow(/PERSISTED_QUERY_ONLY|trusted documents only/);
  });
});

describe('Relay (persisted id through relay-runtime’s network layer)', () => {
  it.each([['allow'], ['only']] as const)('%s: an operator-registered id runs, as doc_id and as id', async (mode) => {
    const app = mode === 'allow' ? allow : only;
    for (const key of ['doc_id', 'id']) {
      const network = Network.create(async (request, variables) => {
        const response = await fetch(app.url, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...authorization },
          body: JSON.stringify({ [key]: request.id, variables }),
        });
        return (await response.json()) as never;
      });
      const params = { id: RELAY_ID, cacheID: RELAY_ID, name: 'TeamRelay', operationKind: 'query', text: null, metadata: {} } as const;
      const result = (await network.execute(params, { itemId: 'r' }, {}).toPromise()) as { data: any };
      expect(result.data.communityItemAggregate).toEqual({ signalTotal: '0', weightTotal: '0' });
    }
  });
});

describe('GraphQL Code Generator client preset (persistedDocuments)', () => {
  const request = (app: App, body: unknown) => post(app, body);
  it.each([['allow'], ['only']] as const)(
    '%s: documentId (POST and GET) and the bare sha256Hash run the generated documents',
    async (mode) => {
      const app = mode === 'allow' ? allow : only;
      const [id] = Object.keys(codegen);
      expect(id).toMatch(/^sha256:[0-9a-f]{64}$/);
      const expected = { communityItemAggregate: { itemId: 'c', weightTotal: '0' } };
      expect((await request(app, { documentId: id, variables: { itemId: 'c' } })).data).toEqual(expected);
      const hash = id!.slice('sha256:'.length);
      expect(
        (await request(app, { variables: { itemId: 'c' }, extensions: { persistedQuery: { version: 1, sha256Hash: hash } } })).data,
      ).toEqual(expected);
      const url = new URL(app.url);
      url.searchParams.set('documentId', id!);
      url.searchParams.set('variables', JSON.stringify({ itemId: 'c' }));
      const viaGet = await fetch(url, { headers: { ...authorization, accept: 'application/graphql-response+json' } });
      expect(viaGet.status).toBe(200);
      expect(((await viaGet.json()) as { data: unknown }).data).toEqual(expected);
    },
  );
});

async function post(app: App, body: unknown, headers: Record<string, string> = {}) {
  const response = await fetch(app.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json', ...authorization, ...headers },
    body: JSON.stringify(body),
  });
  return (await response.json()) as { data?: any; errors: { message: string; extensions?: Record<string, unknown> }[] };
}
