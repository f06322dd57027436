import {
  SettingsClient,
  type SettingsClientError,
  type LiveState,
  type Membership,
  type PurgeReceipt,
} from '@community-layer/settings-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../../src/app.js';
import { eventually, freshDatabase, startApp, token } from '../../../test/support/harness.js';

/**
 * The settings client against the real server over HTTP, in GRAPHQL_TRUSTED_DOCUMENTS=only mode: it
 * sends only the ids built into it. One stream per instance, so a second one meets the 503 cap.
 */
const ENVIRONMENT = { GRAPHQL_TRUSTED_DOCUMENTS: 'only', SUBSCRIPTIONS_MAX: '1', SHUTDOWN_TIMEOUT_MS: '200' };
const RECONNECT_MS = { initial: 20, max: 200 };

let databaseUrl: string;
let app: App;

beforeAll(async () => {
  databaseUrl = await freshDatabase();
  app = await startApp(databaseUrl, ENVIRONMENT);
});

afterAll(() => app?.stop());

async function clientFor(user: string): Promise<SettingsClient> {
  const bearer = await token(user);
  return new SettingsClient({ url: app.url, token: () => bearer, reconnectMs: RECONNECT_MS });
}

const refusal = (promise: Promise<unknown>) =>
  promise.then(
    () => expect.fail('expected a refusal'),
    (error: unknown) => error,
  );

/** A live stream's values, states and errors, as they came. */
function record<T>(
  watch: (handlers: {
    next(value: T): void;
    state(state: LiveState): void;
    error(error: SettingsClientError): void;
    complete(): void;
  }) => () => void,
) {
  const seen = { values: [] as T[], states: [] as LiveState[], errors: [] as SettingsClientError[], completed: false, close: () => {} };
  seen.close = watch({
    next: (value) => seen.values.push(value),
    state: (state) => seen.states.push(state),
    error: (error) => seen.errors.push(error),
    complete: () => (seen.completed = true),
  });
  return seen;
}

describe('the settings client, by trusted-document id only', () => {
  it('leaves and rejoins with a reason and policy version, and reads Global Privacy Control', async () => {
    const client = await clientFor('9601');
    const left = await client.leave({ reason: 'GLOBAL_PRIVACY_CONTROL', policyVersion: '2026-11' });
    expect(left.status).toBe('LEFT');
    expect((await client.rejoin({ reasonText: 'changed my mind' })).status).toBe('ACTIVE');
    expect(await client.leave()).toMatchObject({ status: 'LEFT', leaveCount: 2 });
    // Outside a browser (no navigator.globalPrivacyControl): false.
    expect(client.globalPrivacyControl()).toBe(false);
  });

  it('status, leave, purge with its progress, and rejoin; refusals come back typed', async () => {
    const client = await clientFor('7001');
    expect(await client.status()).toMatchObject({ userId: '7001', status: 'ACTIVE', leaveCount: 0, history: [] });
    expect(await refusal(client.purge())).toMatchObject({ name: 'SettingsClientError', code: 'NOT_LEFT', retryable: false });
    const stranger = new SettingsClient({ url: app.url, token: 'not-a-token' });
    expect(await refusal(stranger.status())).toMatchObject({ code: 'UNAUTHENTICATED', retryable: false });

    const left = await client.leave();
    expect(left).toMatchObject({ status: 'LEFT', leaveCount: 1, leftAtNs: expect.stringMatching(/^\d+$/) });
    const receipt = await client.purge();
    expect(receipt.boundaryNs).toBe(left.leftAtNs);

    // Progress until FINISHED, then the stream completes by itself.
    const progress = record<PurgeReceipt>((handlers) => client.watchPurge(handlers));
    await eventually(() => progress.completed);
    expect(progress.values.at(-1)).toMatchObject({ purgeId: receipt.purgeId, status: 'FINISHED' });
    expect(progress.states.at(-1)).toBe('stopped');
    expect(await client.latestPurge()).toMatchObject({ purgeId: receipt.purgeId, status: 'FINISHED' });

    expect(await client.rejoin()).toMatchObject({
      status: 'ACTIVE',
      leftAtNs: null,
      history: [{ leftAtNs: left.leftAtNs, rejoinedAtNs: expect.any(String) }],
    });
  });

  it('follows the status live across a leave, and reconnects by itself after the server restarts', async () => {
    const client = await clientFor('7002');
    const live = record<Membership>((handlers) => client.watchStatus(handlers));
    try {
      await eventually(() => live.values.length === 1 && live.states.at(-1) === 'live');
      expect(live.values[0]!.status).toBe('ACTIVE');
      const left = await client.leave();
      await eventually(() => live.values.at(-1)?.leftAtNs === left.leftAtNs);

      // A real failure: the instance goes away (its streams cut) and comes back on the same port.
      const port = new URL(app.url).port;
      await app.stop();
      app = await startApp(databaseUrl, { ...ENVIRONMENT, PORT: port });
      await eventually(() => live.states.includes('reconnecting') && live.states.at(-1) === 'live', 30_000);
      expect(live.errors.every((error) => error.retryable)).toBe(true);

      const rejoined = await client.rejoin();
      await eventually(() => live.values.at(-1)?.status === 'ACTIVE');
      expect(live.values.at(-1)).toEqual(rejoined);
    } finally {
      live.close();
    }
    expect(live.states.at(-1)).toBe('stopped');
  });

  it('meets a full instance with a retryable 503 (TOO_MANY_SUBSCRIPTIONS, Retry-After) and gets through once a slot frees', async () => {
    const [one, other] = await Promise.all([clientFor('7003'), clientFor('7004')]);
    const first = record<Membership>((handlers) => one.watchStatus(handlers));
    await eventually(() => first.states.at(-1) === 'live');
    const second = record<Membership>((handlers) => other.watchStatus(handlers));
    try {
      await eventually(() => second.errors.length > 0);
      expect(second.errors[0]).toMatchObject({ code: 'TOO_MANY_SUBSCRIPTIONS', status: 503, retryable: true, retryAfterSeconds: 1 });
      expect(second.states).not.toContain('live');
      first.close();
      await eventually(() => second.values.length === 1, 30_000);
      expect(second.values[0]).toMatchObject({ userId: '7004', status: 'ACTIVE' });
    } finally {
      first.close();
      second.close();
    }
  });
});
