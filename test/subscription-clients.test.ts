import { ApolloClient, gql as apolloGql, HttpLink, InMemoryCache } from '@apollo/client';
import { createClient as createSseClient } from 'graphql-sse';
import { createClient as createWsClient, type Client as WsClient } from 'graphql-ws';
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import type { App } from '../src/app.js';
import { eventually, gql, startApp, token, useCluster, type Cluster } from './support/harness.js';

let app: App;
let cluster: Cluster;
useCluster([{}], (started) => {
  cluster = started;
  app = started.apps[0]!;
});

const WATCH = 'subscription Watch($u: UInt64) { communityLayerStatusChanged(userId: $u) { userId status leftAtNs } }';
type Change = {
  data?: { communityLayerStatusChanged: { userId: string; status: string; leftAtNs: string | null } } | null;
  errors?: readonly { message: string; extensions?: Record<string, unknown> }[];
};

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

const wsUrl = (target: App) => target.url.replace(/^http/, 'ws');

function wsClient(target: App, connectionParams: Record<string, unknown> | undefined): WsClient {
  const client = createWsClient({ url: wsUrl(target), webSocketImpl: WebSocket, connectionParams, retryAttempts: 0, lazy: true });
  cleanups.push(() => client.dispose());
  return client;
}

/** Leaves, then rejoins, user `userId` through the API, checking that `next` sees both. */
async function followsChanges(userId: string, next: () => Promise<Change | undefined>): Promise<void> {
  const first = await next();
  expect(first?.data?.communityLayerStatusChanged).toMatchObject({ userId, status: 'ACTIVE' });
  const left = (await gql(app, `mutation { leaveCommunityLayer(userId: "${userId}") { leftAtNs } }`)).data!.leaveCommunityLayer;
  expect((await next())?.data?.communityLayerStatusChanged).toMatchObject({ status: 'LEFT', leftAtNs: left.leftAtNs });
  await gql(app, `mutation { rejoinCommunityLayer(userId: "${userId}") { status } }`);
  expect((await next())?.data?.communityLayerStatusChanged.status).toBe('ACTIVE');
}

async function released(): Promise<void> {
  await eventually(() => app.services.statusFeed.subscribers === 0);
}

describe('graphql-sse (the official client)', () => {
  it('distinct connections mode', async () => {
    const client = createSseClient({ url: app.url, headers: { authorization: `Bearer ${await token('801')}` }, retryAttempts: 0 });
    cleanups.push(() => client.dispose());
    const stream = client.iterate<Change['data']>({ query: WATCH });
    await followsChanges('801', async () => (await stream.next()).value as Change);
    await stream.return?.();
    await released();
  });

  it('single connection mode (it used to get 403, then 405)', async () => {
    const client = createSseClient({
      url: app.url,
      singleConnection: true,
      headers: { authorization: `Bearer ${await token('802')}` },
      retryAttempts: 0,
    });
    cleanups.push(() => client.dispose());
    const stream = client.iterate<Change['data']>({ query: WATCH });
    await followsChanges('802', async () => (await stream.next()).value as Change);
    // Queries and mutations run on the same connection, through the same authorization.
    const denied = await client.iterate({ query: 'mutation { leaveCommunityLayer(userId: "803") { status } }' }).next();
    expect((denied.value as Change).errors?.[0]?.extensions?.['code']).toBe('FORBIDDEN');
    await stream.return?.();
    await released();
  });

  it('single connection mode needs a valid token to reserve a stream', async () => {
    const response = await fetch(app.url, { method: 'PUT' });
    expect(response.status).toBe(401);
    const reserved = await fetch(app.url, { method: 'PUT', headers: { authorization: `Bearer ${await token('804')}` } });
    expect(reserved.status).toBe(201);
  });
});

describe('graphql-ws over WebSocket on the same port and path', () => {
  it('subscribes with the token in connectionParams', async () => {
    const client = wsClient(app, { authorization: `Bearer ${await token('811')}` });
    const stream = client.iterate<Change['data']>({ query: WATCH });
    await followsChanges('811', async () => (await stream.next()).value as Change);
    await stream.return?.();
    await released();
  });

  it('runs queries and mutations too, with the same authorization as HTTP', async () => {
    const client = wsClient(app, { authorization: `Bearer ${await token('812')}` });
    const own = await client.iterate({ query: 'mutation { leaveCommunityLayer { userId status } }' }).next();
    // Beside the data, the fair share's extensions.cost (test/fair-share.test.ts checks it).
    expect(own.value).toMatchObject({ data: { leaveCommunityLayer: { userId: '812', status: 'LEFT' } } });
    expect((own.value as Change).errors).toBeUndefined();
    const other = await client.iterate({ query: 'mutation { leaveCommunityLayer(userId: "813") { status } }' }).next();
    expect((other.value as Change).errors?.[0]?.extensions).toEqual({ code: 'FORBIDDEN' });
    const { rows } = await cluster.db.query(`SELECT count(*)::int AS n FROM community_membership WHERE user_id = 813`);
    expect(rows[0].n).toBe(0);
  });

  it('without a token, or with a bad one, operations are UNAUTHENTICATED', async () => {
    const anonymous = await wsClient(app, undefined)
      .iterate({ query: WATCH, variables: { u: '814' } })
      .next();
    expect((anonymous.value as Change).errors?.[0]?.extensions?.['code']).toBe('UNAUTHENTICATED');
    const forged = await wsClient(app, { authorization: 'Bearer not.a.token' }).iterate({ query: WATCH }).next();
    expect((forged.value as Change).errors?.[0]).toMatchObject({ extensions: { code: 'UNAUTHENTICATED' } });
  });

  it('ends a subscription when its token expires', async () => {
    const client = wsClient(app, { authorization: `Bearer ${await token('815', undefined, '5s')}` });
    const stream = client.iterate<Change['data']>({ query: WATCH });
    expect(((await stream.next()).value as Change).data?.communityLayerStatusChanged.status).toBe('ACTIVE');
    const expired = (await stream.next()).value as Change;
    expect(expired.errors?.[0]?.extensions?.['code']).toBe('UNAUTHENTICATED');
    expect(expired.errors?.[0]?.message).toContain('expired');
    expect((await stream.next()).done).toBe(true);
    await released();
  });

  it('applies the same limits as HTTP (aliases, cost) and reports them without Yoga internals', async () => {
    const client = wsClient(app, { authorization: `Bearer ${await token('1', 'community:admin')}` });
    const aliases = `{ ${Array.from({ length: 31 }, (_, i) => `a${i}: __typename`).join(' ')} }`;
    const tooMany = await client
      .iterate({ query: aliases })
      .next()
      .catch((errors: unknown) => ({ value: { errors } }));
    expect(JSON.stringify(tooMany.value)).toContain('TOO_MANY_ALIASES');
    expect(JSON.stringify(tooMany.value)).not.toContain('"http"');
    const page = (alias: string) => `${alias}: communityContributions(userId: "1", first: $n) { edges { node { signalId } } }`;
    const costly = await client
      .iterate({ query: `query ($n: Int) { ${['a', 'b', 'c', 'd', 'e', 'f'].map(page).join(' ')} }`, variables: { n: 500 } })
      .next();
    expect((costly.value as Change).errors?.[0]?.extensions?.['code']).toBe('QUERY_TOO_COMPLEX');
    expect(JSON.stringify(costly.value)).not.toContain('"http"');
  });

  it('refuses browser pages from other origins, and other paths', async () => {
    const foreign = new WebSocket(wsUrl(app), 'graphql-transport-ws', { origin: 'https://evil.example' });
    const refused = await new Promise<number>((resolve) =>
      foreign.once('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0)),
    );
    expect(refused).toBe(403);
    const elsewhere = new WebSocket(wsUrl(app).replace('/graphql', '/other'), 'graphql-transport-ws');
    const missing = await new Promise<number>((resolve) =>
      elsewhere.once('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0)),
    );
    expect(missing).toBe(404);
  });

  it('closes its sockets on shutdown, ending their subscriptions', async () => {
    const other = await startApp(cluster.databaseUrl);
    const client = wsClient(other, { authorization: `Bearer ${await token('816')}` });
    const stream = client.iterate<Change['data']>({ query: WATCH });
    expect(((await stream.next()).value as Change).data?.communityLayerStatusChanged.status).toBe('ACTIVE');
    const ended = stream.next().then(
      (result) => result.done,
      () => true,
    );
    await other.stop();
    expect(await ended).toBe(true);
    expect(other.services.statusFeed.subscribers).toBe(0);
  });
});

describe('multipart HTTP subscriptions (Apollo Client HttpLink)', () => {
  it('subscribes through @apollo/client with its bearer header', async () => {
    const client = new ApolloClient({
      link: new HttpLink({ uri: app.url, headers: { authorization: `Bearer ${await token('821')}` } }),
      cache: new InMemoryCache(),
    });
    cleanups.push(() => client.stop());
    const queue: Change[] = [];
    let wake: (() => void) | null = null;
    const subscription = client.subscribe({ query: apolloGql(WATCH) }).subscribe({
      next: (result) => {
        queue.push(result as Change);
        wake?.();
      },
      error: (error: unknown) => {
        queue.push({ errors: [{ message: String(error) }] });
        wake?.();
      },
    });
    const next = async () => {
      while (queue.length === 0) await new Promise<void>((resolve) => (wake = resolve));
      return queue.shift();
    };
    await followsChanges('821', next);
    subscription.unsubscribe();
    await released();
  });
});
