import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../src/app.js';
import { capturedLog, eventually, gql, metric, startCluster, type Cluster } from './support/harness.js';
import { idRecordingReceiver } from './support/webhook-receivers.js';

const REGISTER = `mutation ($url: String!) { registerWebhookEndpoint(url: $url, eventKinds: [LEFT]) { endpoint { id } } }`;
const ENDPOINTS = `{ webhookEndpoints { id disabled disabledReason failingSince consecutiveFailures } }`;
const DELIVERIES = `query ($id: UInt64!) { webhookDeliveries(endpointId: $id, last: 100) { messageId status } }`;

async function register(app: App, url: string): Promise<string> {
  const response = await gql<{ registerWebhookEndpoint: { endpoint: { id: string } } }>(app, REGISTER, { url });
  expect(response.errors).toBeUndefined();
  return response.data!.registerWebhookEndpoint.endpoint.id;
}

async function leave(app: App, userId: number): Promise<void> {
  expect((await gql(app, `mutation { leaveCommunityLayer(userId: "${userId}") { status } }`)).errors).toBeUndefined();
}

/** WEBHOOK_PROBATION_SUCCESSES' default: quick successes in a row before an endpoint leaves the slow lane. */
const PROBATION = 3;

/** Delivers events to an endpoint alone (users from `firstUser` on) until it is trusted; returns how many (a slow attempt starts the count again). */
async function trust(cluster: Cluster, endpoint: { id: string; ids: string[] }, firstUser: number): Promise<number> {
  let sent = 0;
  for (; sent < PROBATION; sent++) await leave(cluster.apps[0]!, firstUser + sent);
  const trusted = `SELECT fast_successes >= ${PROBATION} AS trusted FROM webhook_endpoint WHERE id = $1`;
  await eventually(async () => {
    if ((await cluster.db.query(trusted, [endpoint.id])).rows[0].trusted) return true;
    if (new Set(endpoint.ids).size >= sent) await leave(cluster.apps[0]!, firstUser + sent++);
    return false;
  }, 60_000);
  return sent;
}

describe('one endpoint, one lane', () => {
  let cluster: Cluster;
  beforeAll(async () => {
    cluster = await startCluster([]);
    // Two delivery workers, and attempts that never time out: a hanging receiver holds what it takes.
    cluster.apps.push(
      await cluster.startInstance({
        WEBHOOK_ALLOWED_DESTINATIONS: '127.0.0.1',
        WEBHOOK_CONCURRENCY: '2',
        WEBHOOK_TIMEOUT_MS: '3600000',
        // Never cut for slowness: a healthy attempt slow on a loaded machine would be retried, and arrive twice.
        WEBHOOK_SLOW_MS: '3600000',
        WEBHOOK_POLL_MS: '100',
      }),
    );
  });
  afterAll(() => cluster?.stop());

  it('a healthy endpoint receives every delivery, in order, while its neighbour hangs on one worker', async () => {
    const app = cluster.apps[0]!;
    const hanging = await idRecordingReceiver(() => null);
    const healthy = await idRecordingReceiver(() => 204);
    // Trusted first (a new endpoint is on probation, in the slow lane the hanging one will hold).
    const healthyId = await register(app, healthy.url);
    const trustedAfter = await trust(cluster, { id: healthyId, ids: healthy.ids }, 82_900);
    await register(app, hanging.url);
    try {
      const LEAVES = 30;
      for (let user = 0; user < LEAVES; user++) await leave(app, 8300 + user);
      await eventually(() => healthy.ids.length === LEAVES + trustedAfter, 60_000);
      const expected = (await gql<{ webhookDeliveries: { messageId: string }[] }>(app, DELIVERIES, { id: healthyId }))
        .data!.webhookDeliveries.map((d) => d.messageId)
        .reverse();
      expect(healthy.ids).toEqual(expected);
      // The hanging endpoint holds one worker, with one delivery: its lane (on a loaded machine its
      // first attempt may come after the healthy endpoint's last delivery).
      await eventually(() => hanging.held.length >= 1, 60_000);
      expect(hanging.held.length).toBe(1);
    } finally {
      await hanging.close();
      await healthy.close();
    }
  });
});

describe('failing endpoints, a fair share', () => {
  let cluster: Cluster;
  beforeAll(async () => {
    cluster = await startCluster([]);
    // Two workers: failing endpoints may hold one of them. Each attempt to a hanging receiver times out after 1 s.
    const environment = {
      WEBHOOK_ALLOWED_DESTINATIONS: '127.0.0.1',
      WEBHOOK_CONCURRENCY: '2',
      WEBHOOK_TIMEOUT_MS: '1000',
      WEBHOOK_BACKOFF_MIN_MS: '50',
      WEBHOOK_BACKOFF_MAX_MS: '200',
      WEBHOOK_POLL_MS: '100',
    };
    cluster.apps.push(await cluster.startInstance(environment));
  });
  afterAll(() => cluster?.stop());

  it('as many hanging endpoints as workers hold one worker at a time, and a healthy endpoint gets the other', async () => {
    const app = cluster.apps[0]!;
    // Counts the attempts it holds open (each until the sender gives up), and the most at once.
    let open = 0;
    let mostAtOnce = 0;
    const sockets = new Set<import('node:net').Socket>();
    const hanging = http.createServer((req) => {
      open++;
      mostAtOnce = Math.max(mostAtOnce, open);
      req.socket.once('close', () => open--);
      sockets.add(req.socket);
    });
    await new Promise<void>((resolve) => hanging.listen(0, '127.0.0.1', resolve));
    const healthy = await idRecordingReceiver(() => 204);
    try {
      const hangingUrl = `http://127.0.0.1:${(hanging.address() as AddressInfo).port}`;
      const trustedAfter = await trust(cluster, { id: await register(app, healthy.url), ids: healthy.ids }, 85_900);
      const hangingIds = [await register(app, `${hangingUrl}/a`), await register(app, `${hangingUrl}/b`)];
      await leave(app, 8600);
      const failing = async () =>
        (await gql<{ webhookEndpoints: Record<string, any>[] }>(app, ENDPOINTS)).data!.webhookEndpoints.filter(
          (e) => hangingIds.includes(e.id) && e.failingSince !== null,
        );
      await eventually(async () => (await failing()).length === 2 && open <= 1, 30_000);
      mostAtOnce = open;
      const LEAVES = 10;
      for (let user = 1; user <= LEAVES; user++) await leave(app, 8600 + user);
      // Distinct ids: an attempt slower than the 1 s timeout is tried again.
      await eventually(() => new Set(healthy.ids).size === trustedAfter + LEAVES + 1, 60_000);
      expect(mostAtOnce).toBe(1);
    } finally {
      for (const socket of sockets) socket.destroy();
      hanging.closeAllConnections();
      await new Promise<void>((resolve) => hanging.close(() => resolve()));
      await healthy.close();
    }
  });
});

describe('an endpoint failing too long', () => {
  let cluster: Cluster;
  const log = capturedLog();
  beforeAll(async () => {
    cluster = await startCluster([]);
    const environment = {
      WEBHOOK_ALLOWED_DESTINATIONS: '127.0.0.1',
      WEBHOOK_DISABLE_AFTER_MS: '1000',
      WEBHOOK_BACKOFF_MIN_MS: '50',
      WEBHOOK_BACKOFF_MAX_MS: '200',
      WEBHOOK_POLL_MS: '100',
    };
    cluster.apps.push(await cluster.startInstance(environment, { logger: log.logger }));
  });
  afterAll(() => cluster?.stop());

  it('is disabled with its reason (state, metric, log line); enabled again, it receives what it missed, in order', async () => {
    const app = cluster.apps[0]!;
    let failing = true;
    const hook = await idRecordingReceiver(() => (failing ? 503 : 204));
    const id = await register(app, hook.url);
    await leave(app, 8400);
    const endpoint = async () =>
      (await gql<{ webhookEndpoints: Record<string, any>[] }>(app, ENDPOINTS)).data!.webhookEndpoints.find((e) => e.id === id)!;
    await eventually(async () => (await endpoint()).disabled === true, 30_000);
    expect((await endpoint()).disabledReason).toMatch(/^failing for \d+ s \(\d+ consecutive failed deliveries\); last: HTTP 503$/);
    expect(await metric(app, 'community_webhook_endpoints_disabled_total')).toBe(1);
    expect(log.entries.find((entry) => entry.msg === 'webhook endpoint disabled')).toMatchObject({
      endpointId: id,
      reason: expect.stringMatching(/^failing for/),
    });

    // Changes while it is disabled: dispatched, with no delivery for it.
    await leave(app, 8401);
    await leave(app, 8402);
    await eventually(
      async () =>
        (await cluster.db.query(`SELECT (SELECT position FROM webhook_dispatch) = (SELECT max(position) FROM membership_event) AS done`))
          .rows[0].done,
      30_000,
    );
    failing = false;
    const before = hook.ids.length;
    const enabled = await gql(
      app,
      `mutation ($id: UInt64!) { enableWebhookEndpoint(id: $id) { disabled failingSince consecutiveFailures } }`,
      { id },
    );
    expect(enabled.data).toEqual({ enableWebhookEndpoint: { disabled: false, failingSince: null, consecutiveFailures: 0 } });
    const events = (
      await cluster.db.query(`SELECT 'msg_' || position AS id FROM membership_event WHERE kind = 'LEFT' ORDER BY position`)
    ).rows.map((r) => r.id);
    await eventually(() => hook.ids.length === before + events.length, 30_000);
    expect(hook.ids.slice(before)).toEqual(events);
    // A delivery is marked after its receiver answered: wait for the marks, not only the arrivals.
    const statuses = async () =>
      (await gql<{ webhookDeliveries: { status: string }[] }>(app, DELIVERIES, { id })).data!.webhookDeliveries.map((d) => d.status);
    await eventually(async () => (await statuses()).every((status) => status === 'DELIVERED'), 30_000);
    expect(await statuses()).toEqual(events.map(() => 'DELIVERED'));
    await hook.close();
  });
});
