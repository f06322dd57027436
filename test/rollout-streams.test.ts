import { ApolloClient, ApolloLink, gql as apolloGql, HttpLink, InMemoryCache } from '@apollo/client';
import { RetryLink } from '@apollo/client/link/retry';
import { SettingsClient, type SettingsClientError } from '@community-layer/settings-client';
import { createClient as createSseClient } from 'graphql-sse';
import { createClient as createWsClient } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import type { App } from '../src/app.js';
import { ServerProcess, startServerProcess, type ServerOptions } from '../tooling/server-process.js';
import { eventually, freshDatabase, gql, startApp, TEST_SECRET, token } from './support/harness.js';

/**
 * A rollout as clients live it (issue 38): a real server process is stopped with SIGTERM while
 * every standard client follows a status stream on it, a leave and a rejoin happen on another
 * instance meanwhile, and the process comes back on the same port. Each client, configured as
 * docs/api.md says, resubscribes by itself and receives the state made during the restart.
 */

const WATCH = 'subscription Watch { communityLayerStatusChanged { userId status leaveCount history { leftAtNs rejoinedAtNs } } }';

interface State {
  userId: string;
  status: string;
  leaveCount: number;
  history: { leftAtNs: string; rejoinedAtNs: string | null }[];
}

/** What one client saw: the states, and whatever ended its stream (nothing should). */
class Seen {
  readonly states: State[] = [];
  readonly failures: unknown[] = [];
  completed = false;
  take(result: { data?: { communityLayerStatusChanged?: State } | null; errors?: unknown; error?: unknown }): void {
    const state = result.data?.communityLayerStatusChanged;
    if (state) this.states.push(state);
    else this.failures.push(result.errors ?? result.error);
  }
}

// The clients' own backoff, kept short so the test waits on the restart, not on their delays.
const pause = () => new Promise<void>((resolve) => setTimeout(resolve, 100));

let databaseUrl: string;
let other: App;
let options: ServerOptions;
let server: ServerProcess;
const closers: (() => unknown)[] = [];

beforeAll(async () => {
  databaseUrl = await freshDatabase();
  other = await startApp(databaseUrl);
  options = { environment: { NODE_ENV: 'production', DATABASE_URL: databaseUrl, AUTH_JWT_SECRET: TEST_SECRET, LOG_LEVEL: 'warn' } };
  server = await startServerProcess(options);
});

afterAll(async () => {
  for (const close of closers) await close();
  await server?.stop('SIGKILL');
  await other?.stop();
});

async function follow(client: string, userId: string): Promise<Seen> {
  const seen = new Seen();
  const authorization = `Bearer ${await token(userId)}`;
  const sink = {
    next: (result: never) => seen.take(result),
    error: (error: unknown) => void seen.failures.push(error),
    complete: () => void (seen.completed = true),
  };
  if (client === 'graphql-sse' || client === 'graphql-sse single connection') {
    const sse = createSseClient({
      url: server.url,
      headers: { authorization },
      singleConnection: client !== 'graphql-sse',
      retryAttempts: 1000,
      retry: pause,
    });
    closers.push(() => sse.dispose());
    sse.subscribe({ query: WATCH }, sink);
  } else if (client === 'graphql-ws') {
    const ws = createWsClient({
      url: server.url.replace(/^http/, 'ws'),
      webSocketImpl: WebSocket,
      connectionParams: { authorization },
      retryAttempts: 1000,
      retryWait: pause,
      // A refused connection (the instance restarting) is an error, not a close: retried only when asked.
      shouldRetry: () => true,
    });
    closers.push(() => ws.dispose());
    ws.subscribe({ query: WATCH }, sink);
  } else if (client === 'Apollo Client (multipart, RetryLink)') {
    const retry = new RetryLink({ delay: { initial: 100, max: 500 }, attempts: { max: 1000 } });
    const apollo = new ApolloClient({
      link: ApolloLink.from([retry, new HttpLink({ uri: server.url, headers: { authorization } })]),
      cache: new InMemoryCache(),
    });
    closers.push(() => apollo.stop());
    const subscription = apollo.subscribe<{ communityLayerStatusChanged: State }>({ query: apolloGql(WATCH) }).subscribe(sink as never);
    closers.push(() => subscription.unsubscribe());
  } else {
    const settings = new SettingsClient({
      url: server.url,
      token: authorization.slice('Bearer '.length),
      reconnectMs: { initial: 20, max: 200 },
    });
    closers.push(
      settings.watchStatus({
        next: (state) => void seen.states.push(state as State),
        // Retryable failures are followed by a reconnect: only the others end the stream.
        error: (error: SettingsClientError) => void (error.retryable || seen.failures.push(error)),
        complete: () => void (seen.completed = true),
      }),
    );
  }
  return seen;
}

const CLIENTS = ['graphql-sse', 'graphql-sse single connection', 'Apollo Client (multipart, RetryLink)', 'graphql-ws', 'settings client'];

describe('streams across a rollout', () => {
  it('every client resumes its stream after SIGTERM and a restart on the same port, with the leave and rejoin made meanwhile', async () => {
    const users = CLIENTS.map((_, i) => String(7101 + i));
    const seen = await Promise.all(CLIENTS.map((client, i) => follow(client, users[i]!)));
    // Each stream starts with the current state.
    await eventually(() => seen.every((client) => client.states.length >= 1), 30_000).catch(() => {
      throw new Error(
        `no first state: ${CLIENTS.filter((_, i) => seen[i]!.states.length === 0).join(', ')}; failures: ${JSON.stringify(seen.map((client) => String(client.failures)))}`,
      );
    });
    for (const [i, client] of seen.entries()) expect(client.states[0]).toMatchObject({ userId: users[i], status: 'ACTIVE', leaveCount: 0 });

    const port = Number(new URL(server.url).port);
    expect(await server.stop('SIGTERM')).toBe(0);
    // While the instance is away: every user leaves and rejoins, through another instance.
    for (const userId of users) {
      expect((await gql(other, `mutation { leaveCommunityLayer(userId: "${userId}") { status } }`)).errors).toBeUndefined();
      expect((await gql(other, `mutation { rejoinCommunityLayer(userId: "${userId}") { status } }`)).errors).toBeUndefined();
    }
    server = new ServerProcess(port, options);
    await server.ready();

    // Each client resubscribed by itself; its first state after the restart shows the leave and the rejoin.
    const resumed = (client: Seen) => client.states.some((state) => state.leaveCount === 1);
    await eventually(() => seen.every(resumed), 60_000).catch(() => {
      throw new Error(
        `not resumed: ${CLIENTS.filter((_, i) => !resumed(seen[i]!)).join(', ')}; failures: ${JSON.stringify(seen.map((client) => client.failures.map(String)))} ${JSON.stringify(seen.map((client) => client.failures))}`,
      );
    });
    for (const client of seen) {
      expect(client.states.at(-1)).toMatchObject({ status: 'ACTIVE', leaveCount: 1, history: [{ rejoinedAtNs: expect.any(String) }] });
      expect(client.failures).toEqual([]);
      expect(client.completed).toBe(false);
    }
  }, 180_000);
});
