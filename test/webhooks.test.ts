import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, gql, startCluster, type Cluster } from './support/harness.js';

interface Received {
  headers: Record<string, string>;
  body: string;
}

/** A real HTTP receiver on loopback; `answer` decides each response's status. */
async function receiver(answer: (count: number) => number) {
  const received: Received[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (body += chunk));
    req.on('end', () => {
      received.push({ headers: req.headers as Record<string, string>, body });
      res.writeHead(answer(received.length)).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  return { url, received, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

const REGISTER = `mutation Register($url: String!, $kinds: [MembershipChangeKind!]!) {
  registerWebhookEndpoint(url: $url, eventKinds: $kinds) { secret endpoint { id } }
}`;
const DELIVERIES = `query Deliveries($id: UInt64!) { webhookDeliveries(endpointId: $id) { id messageId cursor status attempts lastStatusCode lastError } }`;
const ENDPOINTS = `{ webhookEndpoints { id disabledReason consecutiveFailures } }`;

let cluster: Cluster;
beforeAll(async () => {
  cluster = await startCluster([]);
  // The receivers are on loopback: allowed explicitly, as an operator allows internal receivers.
  const environment = {
    WEBHOOK_ALLOWED_DESTINATIONS: '127.0.0.1',
    WEBHOOK_BACKOFF_MIN_MS: '20',
    WEBHOOK_BACKOFF_MAX_MS: '200',
    WEBHOOK_POLL_MS: '100',
    WEBHOOK_DISABLE_AFTER_FAILURES: '4',
  };
  cluster.apps.push(await cluster.startInstance(environment), await cluster.startInstance(environment));
});
afterAll(() => cluster?.stop());

async function register(url: string, kinds: string[]): Promise<{ id: string; secret: string }> {
  const response = await gql<{ registerWebhookEndpoint: { secret: string; endpoint: { id: string } } }>(cluster.apps[0]!, REGISTER, {
    url,
    kinds,
  });
  expect(response.errors).toBeUndefined();
  return { id: response.data!.registerWebhookEndpoint.endpoint.id, secret: response.data!.registerWebhookEndpoint.secret };
}

async function deliveries(endpointId: string) {
  const response = await gql<{
    webhookDeliveries: { id: string; messageId: string; cursor: string; status: string; attempts: number; lastError: string | null }[];
  }>(cluster.apps[0]!, DELIVERIES, { id: endpointId });
  expect(response.errors).toBeUndefined();
  return response.data!.webhookDeliveries;
}

describe('webhooks', () => {
  it('are retried through a receiver that fails, then recovers; signatures verify with standardwebhooks', async () => {
    const hook = await receiver((count) => (count <= 3 ? 503 : 200));
    const { id, secret } = await register(hook.url, ['LEFT', 'REJOINED']);
    const left = await gql(cluster.apps[1]!, `mutation { leaveCommunityLayer(userId: "5100") { leftAtNs } }`);
    expect(left.errors).toBeUndefined();
    await eventually(async () => (await deliveries(id)).some((d) => d.status === 'DELIVERED'), 30_000);
    const [delivery] = await deliveries(id);
    expect(delivery).toMatchObject({ status: 'DELIVERED', attempts: 4, messageId: `msg_${delivery!.cursor}` });
    expect(hook.received).toHaveLength(4);
    // Every attempt carries the same webhook-id, and each is signed afresh per the specification.
    const webhook = new Webhook(secret);
    for (const { headers, body } of hook.received) {
      expect(headers['webhook-id']).toBe(delivery!.messageId);
      const payload = webhook.verify(body, headers) as { type: string; data: { userId: string; leftAtNs: string; kind: string } };
      expect(payload).toMatchObject({
        type: 'community.membership.left',
        data: { kind: 'LEFT', userId: '5100', leftAtNs: left.data!.leaveCommunityLayer.leftAtNs },
      });
    }
    expect(() => new Webhook(secret).verify(hook.received[0]!.body.replace('5100', '5101'), hook.received[0]!.headers)).toThrow();
    await hook.close();
  });

  it('a leave completes and enqueues while the receiver is down; a failing endpoint is disabled with its reason, and replays deliver', async () => {
    // One server for the whole test, so its port cannot be taken meanwhile: it resets every
    // connection (each attempt fails) until the receiver "comes back".
    let up = false;
    const back = http.createServer((req, res) => void req.resume().on('end', () => res.writeHead(204).end()));
    back.on('connection', (socket) => up || socket.destroy());
    await new Promise<void>((resolve) => back.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(back.address() as AddressInfo).port}/hook`;
    const { id } = await register(url, ['LEFT']);
    const left = await gql(cluster.apps[1]!, `mutation { leaveCommunityLayer(userId: "5200") { status } }`);
    expect(left.data).toEqual({ leaveCommunityLayer: { status: 'LEFT' } });
    await eventually(async () => (await deliveries(id)).length === 1);
    await gql(cluster.apps[1]!, `mutation { leaveCommunityLayer(userId: "5201") { status } }`);
    const disabled = async () =>
      (
        await gql<{ webhookEndpoints: { id: string; disabledReason: string | null }[] }>(cluster.apps[0]!, ENDPOINTS)
      ).data!.webhookEndpoints.find((e) => e.id === id)!;
    await eventually(async () => (await disabled()).disabledReason !== null, 30_000);
    expect((await disabled()).disabledReason).toMatch(/^4 consecutive failed deliveries; last: .+/);
    await eventually(async () => (await deliveries(id)).every((d) => d.status === 'FAILED'), 30_000);

    // The receiver comes back; the operator enables the endpoint and replays.
    up = true;
    expect((await gql(cluster.apps[0]!, `mutation { enableWebhookEndpoint(id: "${id}") { disabledReason } }`)).data).toEqual({
      enableWebhookEndpoint: { disabledReason: null },
    });
    for (const delivery of await deliveries(id)) {
      const replayed = await gql(cluster.apps[0]!, `mutation { replayWebhookDelivery(deliveryId: "${delivery.id}") { status } }`);
      expect(replayed.data).toEqual({ replayWebhookDelivery: { status: 'PENDING' } });
    }
    await eventually(async () => (await deliveries(id)).every((d) => d.status === 'DELIVERED'), 30_000);
    await new Promise<void>((resolve) => back.close(() => resolve()));
  });

  it('registration is for community:admin, with a valid URL', async () => {
    const bad = await gql(cluster.apps[0]!, REGISTER, { url: 'ftp://x', kinds: ['LEFT'] });
    expect(bad.errors?.[0]?.extensions?.['code']).toBe('BAD_USER_INPUT');
    const { rows } = await cluster.db.query(`SELECT count(*)::int AS n FROM webhook_endpoint WHERE url = 'ftp://x'`);
    expect(rows[0].n).toBe(0);
  });

  it('an id beyond every stored one (above int8) names nothing: null or empty, never an internal error', async () => {
    const huge = '18446744073709551615';
    const answer = await gql(
      cluster.apps[0]!,
      `mutation {
      enable: enableWebhookEndpoint(id: "${huge}") { id }
      disable: disableWebhookEndpoint(id: "${huge}", reason: "gone") { id }
      replay: replayWebhookDelivery(deliveryId: "${huge}") { id }
    }`,
    );
    expect(answer.errors).toBeUndefined();
    expect(answer.data).toEqual({ enable: null, disable: null, replay: null });
    expect((await gql(cluster.apps[0]!, DELIVERIES, { id: huge })).data).toEqual({ webhookDeliveries: [] });
  });
});
