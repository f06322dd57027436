import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../src/app.js';
import { eventually, gql, startCluster, type Cluster } from './support/harness.js';
import { endlessBody, receiver, type Receiver } from './support/webhook-receivers.js';

const REGISTER = `mutation ($url: String!) { registerWebhookEndpoint(url: $url, eventKinds: [LEFT]) { endpoint { id } } }`;
const ENDPOINTS = `{ webhookEndpoints { id disabled disabledReason } }`;
const DELIVERIES = `query ($id: UInt64!) { webhookDeliveries(endpointId: $id) { status attempts lastStatusCode lastError } }`;
const ALLOW = { WEBHOOK_ALLOWED_DESTINATIONS: '127.0.0.1', WEBHOOK_POLL_MS: '100' };

async function register(app: App, url: string): Promise<string> {
  const response = await gql<{ registerWebhookEndpoint: { endpoint: { id: string } } }>(app, REGISTER, { url });
  expect(response.errors).toBeUndefined();
  return response.data!.registerWebhookEndpoint.endpoint.id;
}

async function leave(app: App, userId: number): Promise<void> {
  expect((await gql(app, `mutation { leaveCommunityLayer(userId: "${userId}") { status } }`)).errors).toBeUndefined();
}

describe('endpoints are isolated whatever they do', () => {
  let cluster: Cluster;
  const receivers: Receiver[] = [];
  beforeAll(async () => {
    cluster = await startCluster([]);
    // Four workers (two of them the slow lane); a hanging attempt times out only after a minute.
    const environment = {
      ...ALLOW,
      WEBHOOK_CONCURRENCY: '4',
      WEBHOOK_TIMEOUT_MS: '60000',
      WEBHOOK_SLOW_MS: '500',
      WEBHOOK_BACKOFF_MIN_MS: '100',
      WEBHOOK_BACKOFF_MAX_MS: '1000',
    };
    cluster.apps.push(await cluster.startInstance(environment));
  });
  afterAll(async () => {
    await Promise.all(receivers.map((r) => r.close()));
    await cluster?.stop();
  });

  it('a healthy endpoint gets every event, in order, before the first hanging attempt times out', async () => {
    const app = cluster.apps[0]!;
    // One log of what happened, in the order it happened.
    const log: string[] = [];
    const healthy = await receiver((req, res) => void (log.push(`healthy ${req.headers['webhook-id']}`), res.writeHead(204).end()));
    let flapping = false;
    const flappers = await Promise.all(
      [1, 2, 3, 4].map(() => receiver((_req, res, nth) => (flapping && nth % 2 === 0 ? 'hold' : void res.writeHead(200).end()))),
    );
    const endless = await endlessBody();
    receivers.push(healthy, endless, ...flappers);
    // Trusted first (three quick successes each): the flappers turn on it afterwards.
    const trusted = [await register(app, healthy.url), await register(app, endless.url)];
    for (const flapper of flappers) trusted.push(await register(app, flapper.url));
    let sent = 0;
    for (; sent < 3; sent++) await leave(app, 9100 + sent);
    const fast = `SELECT count(*)::int AS n FROM webhook_endpoint WHERE fast_successes >= 3 AND id = ANY ($1::bigint[])`;
    await eventually(async () => {
      if ((await cluster.db.query(fast, [trusted])).rows[0].n === trusted.length) return true;
      // All answered and one not trusted yet: a success slower than WEBHOOK_SLOW_MS (a loaded machine) started its count again.
      if ([healthy, endless, ...flappers].every((r) => r.requests >= sent)) await leave(app, 9100 + sent++);
      return false;
    }, 60_000);

    // Then: four endpoints flap (hang, answer, hang…), eight hang from their first attempt.
    flapping = true;
    for (let n = 0; n < 8; n++) {
      const hanging = await receiver(
        () => 'hold',
        () => log.push('hanging attempt timed out'),
      );
      receivers.push(hanging);
      await register(app, hanging.url);
    }
    const LEAVES = 20;
    for (let user = 0; user < LEAVES; user++) await leave(app, 9200 + user);
    const expected = (
      await cluster.db.query(`SELECT 'healthy msg_' || position AS line FROM membership_event WHERE kind = 'LEFT' ORDER BY position`)
    ).rows.map((r) => r.line);
    // Each once: an attempt slower than WEBHOOK_SLOW_MS while the slow lane is full is cut and sent again (same id).
    const once = () => [...new Set(log)];
    await eventually(() => once().filter((line) => line.startsWith('healthy')).length === expected.length, 60_000);
    expect(once()).toEqual(expected);
    // The endless bodies' connections were closed by the sender (a few KiB read), not drained until the timeout.
    await eventually(() => endless.requests >= sent + LEAVES && endless.closed() === endless.requests, 60_000);
    expect(once()).toEqual(expected);
  });
});

describe('what a receiver asks for', () => {
  let cluster: Cluster;
  beforeAll(async () => {
    cluster = await startCluster([]);
    cluster.apps.push(await cluster.startInstance({ ...ALLOW, WEBHOOK_BACKOFF_MIN_MS: '20', WEBHOOK_BACKOFF_MAX_MS: '4000' }));
  });
  afterAll(() => cluster?.stop());

  it('410 Gone disables the endpoint at once, with the reason; nothing is attempted again', async () => {
    const app = cluster.apps[0]!;
    const gone = await receiver((_req, res) => void res.writeHead(410).end());
    const id = await register(app, gone.url);
    await leave(app, 9300);
    await leave(app, 9301);
    const endpoint = async () =>
      (await gql<{ webhookEndpoints: Record<string, any>[] }>(app, ENDPOINTS)).data!.webhookEndpoints.find((e) => e.id === id)!;
    await eventually(async () => (await endpoint()).disabled === true, 30_000);
    expect((await endpoint()).disabledReason).toBe('the receiver answered 410 Gone (it asks for no more deliveries)');
    // Its deliveries are skipped (enabling it replays them) and no job is left in its lane.
    const statuses = async () => (await gql<{ webhookDeliveries: Record<string, any>[] }>(app, DELIVERIES, { id })).data!.webhookDeliveries;
    // One delivery, or two when the second event was dispatched before the 410 came back (events of a
    // disabled endpoint are not dispatched to it); every one of them failed.
    await eventually(async () => {
      const all = await statuses();
      return all.length >= 1 && all.every((d) => d.status === 'FAILED');
    }, 60_000);
    const jobs = await cluster.db.query(`SELECT count(*)::int AS n FROM graphile_worker.jobs WHERE queue_name = $1`, [`webhook:${id}`]);
    expect(jobs.rows[0].n).toBe(0);
    expect(gone.requests).toBe(1);
    await gone.close();
  });

  it('Retry-After on 429 and 503 is honoured (seconds or a date), and bounded by WEBHOOK_BACKOFF_MAX_MS', async () => {
    const app = cluster.apps[0]!;
    const arrivals: number[] = [];
    const notBefore: number[] = [];
    const answers: [number, () => string][] = [
      [429, () => '2'],
      [503, () => new Date(Math.ceil(Date.now() / 1000) * 1000 + 2000).toUTCString()],
      [429, () => '3600'], // an hour: bounded by WEBHOOK_BACKOFF_MAX_MS (4 s) here
    ];
    // Counted: this leave's deliveries only (a change of an earlier test dispatched late, on a loaded
    // machine, to every endpoint, is answered 204 and left out).
    const hook = await receiver((_req, res, _nth, body) => {
      if (!body.includes('"userId":"9400"')) return void res.writeHead(204).end();
      arrivals.push(Date.now());
      const answer = answers[arrivals.length - 1];
      if (answer === undefined) return void res.writeHead(204).end();
      const retryAfter = answer[1]();
      notBefore.push(/^\d+$/.test(retryAfter) ? Date.now() + Number(retryAfter) * 1000 : Date.parse(retryAfter));
      res.writeHead(answer[0], { 'retry-after': retryAfter }).end();
    });
    const id = await register(app, hook.url);
    await leave(app, 9400);
    // This leave's delivery: past the three refusals, delivered, its attempts the arrivals counted here
    // (another change's delivery to this endpoint made one attempt).
    const delivered = async () =>
      (await gql<{ webhookDeliveries: Record<string, any>[] }>(app, DELIVERIES, { id })).data!.webhookDeliveries.find(
        (delivery) => arrivals.length >= 4 && delivery.status === 'DELIVERED' && delivery.attempts === arrivals.length,
      );
    await eventually(async () => (await delivered()) !== undefined, 60_000);
    // Four attempts, or more when a loaded machine let an answer arrive past the sender's deadline
    // (delivered again, at least once); every refusal's retry waited for its Retry-After.
    expect(arrivals.length).toBeGreaterThanOrEqual(4);
    expect(arrivals[1]).toBeGreaterThanOrEqual(notBefore[0]!);
    expect(arrivals[2]).toBeGreaterThanOrEqual(notBefore[1]!);
    await hook.close();
  });
});
