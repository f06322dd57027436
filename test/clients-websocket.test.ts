import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { ApolloClient, gql, InMemoryCache } from '@apollo/client';
import { PersistedQueryLink } from '@apollo/client/link/persisted-queries';
import { GraphQLWsLink } from '@apollo/client/link/subscriptions';
import { createClient, type Client } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import type { App } from '../src/app.js';
import type { Manifest } from '../src/graphql/trusted-documents/manifest.js';
import { freshDatabase, startApp, token } from './support/harness.js';

/** Persisted documents over graphql-ws, under the same rule as HTTP (prepareOperation → TrustedDocuments). */
let allow: App;
let only: App;
let manifest: Manifest;
const sockets: Client[] = [];

beforeAll(async () => {
  const databaseUrl = await freshDatabase();
  [allow, only] = await Promise.all([
    startApp(databaseUrl),
    startApp(databaseUrl, { GRAPHQL_TRUSTED_DOCUMENTS: 'only' }, { membershipSync: false }),
  ]);
  manifest = JSON.parse(await readFile(new URL('../trusted-documents.json', import.meta.url), 'utf8')) as Manifest;
});

afterAll(async () => {
  await Promise.all(sockets.map((socket) => socket.dispose()));
  await Promise.all([allow?.stop(), only?.stop()]);
});

const operation = (name: string) => manifest.operations.find((candidate) => candidate.name === name)!;

async function socket(app: App, user: string): Promise<Client> {
  const client = createClient({
    url: app.url.replace(/^http/, 'ws'),
    webSocketImpl: WebSocket,
    connectionParams: { authorization: `Bearer ${await token(user)}` },
    retryAttempts: 0,
  });
  sockets.push(client);
  return client;
}

async function first(client: Client, payload: Record<string, unknown>): Promise<any> {
  const stream = client.iterate(payload as never);
  try {
    return (await stream.next()).value;
  } finally {
    await stream.return?.();
  }
}

describe.each([['allow'], ['only']] as const)('over WebSocket, %s mode', (mode) => {
  const app = () => (mode === 'allow' ? allow : only);

  it('Apollo Client (default cache, persisted-query link, GraphQLWsLink) subscribes by the hash it computes', async () => {
    const link = new PersistedQueryLink({ sha256: (text) => createHash('sha256').update(text).digest('hex') }).concat(
      new GraphQLWsLink(await socket(app(), '951')),
    );
    const client = new ApolloClient({ cache: new InMemoryCache(), link });
    const value = await new Promise<any>((resolve, reject) => {
      const subscription = client.subscribe({ query: gql(operation('SettingsWatch').body) }).subscribe({
        next: (result) => {
          subscription.unsubscribe();
          resolve(result);
        },
        error: reject,
      });
    });
    expect(value.error).toBeUndefined();
    expect(value.data.communityLayerStatusChanged).toMatchObject({ __typename: 'CommunityMembership', userId: '951', status: 'ACTIVE' });
  });

  it('Relay’s id and codegen’s documentId name a manifest document; an unknown hash is PersistedQueryNotFound', async () => {
    const client = await socket(app(), '952');
    for (const key of ['id', 'documentId']) {
      const value = await first(client, { query: '', [key]: operation('SettingsWatch').id });
      expect(value.data.communityLayerStatusChanged).toMatchObject({ userId: '952', status: 'ACTIVE' });
    }
    const unknown = await first(client, { query: '', extensions: { persistedQuery: { version: 1, sha256Hash: '0'.repeat(64) } } }).then(
      (value) => JSON.stringify(value),
      (errors: unknown) => JSON.stringify(errors),
    );
    expect(unknown).toContain('PersistedQueryNotFound');
  });
});
