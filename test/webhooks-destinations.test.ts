import { randomBytes } from 'node:crypto';
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { hostname } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../src/app.js';
import { freePort } from '../src/util/free-port.js';
import { eventually, gql, startCluster, type Cluster } from './support/harness.js';
import { internalForms, loopbackForms } from './support/internal-addresses.js';

const REGISTER = `mutation ($url: String!) { registerWebhookEndpoint(url: $url, eventKinds: [LEFT]) { endpoint { id url } } }`;
const DELIVERIES = `query ($id: UInt64!) { webhookDeliveries(endpointId: $id) { status attempts lastStatusCode lastError } }`;
const QUICK = { WEBHOOK_POLL_MS: '100', WEBHOOK_BACKOFF_MIN_MS: '50', WEBHOOK_BACKOFF_MAX_MS: '200' };

/** A real receiver on loopback, IPv4 and IPv6 (dual stack): the paths it was sent. */
async function receiver() {
  const paths: string[] = [];
  const server = http.createServer((req, res) => req.resume().on('end', () => (paths.push(req.url!), res.writeHead(204).end())));
  await new Promise<void>((resolve) => server.listen(0, '::', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    paths,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

async function deliveries(app: App, endpointId: string) {
  const response = await gql<{
    webhookDeliveries: { status: string; attempts: number; lastStatusCode: number | null; lastError: string | null }[];
  }>(app, DELIVERIES, { id: endpointId });
  expect(response.errors).toBeUndefined();
  return response.data!.webhookDeliveries;
}

/** An endpoint written behind the API's back (an operator in psql, or a row from before this check). */
async function insertEndpoint(cluster: Cluster, url: string): Promise<string> {
  const { rows } = await cluster.db.query(
    `INSERT INTO webhook_endpoint (url, secret, event_kinds) VALUES ($1, $2, '{LEFT}') RETURNING id::text`,
    [url, `whsec_${randomBytes(24).toString('base64')}`],
  );
  return rows[0].id;
}

async function leave(app: App, userId: string): Promise<void> {
  expect((await gql(app, `mutation { leaveCommunityLayer(userId: "${userId}") { status } }`)).errors).toBeUndefined();
}

let hook: Awaited<ReturnType<typeof receiver>>;
beforeAll(async () => (hook = await receiver()));
afterAll(() => hook?.close());

describe('without an allow list', () => {
  let cluster: Cluster;
  beforeAll(async () => {
    cluster = await startCluster([]);
    cluster.apps.push(await cluster.startInstance(QUICK));
  });
  afterAll(() => cluster?.stop());

  it('refuses every spelling of an internal address, and user info, at registration, writing nothing', async () => {
    const app = cluster.apps[0]!;
    const ports = [hook.port, Number(new URL(app.metricsUrl).port), Number(new URL(cluster.databaseUrl).port)];
    for (const url of [...internalForms(hook.port), ...ports.map((port) => `http://127.0.0.1:${port}/`)]) {
      const refused = await gql(app, REGISTER, { url });
      expect(refused.errors?.[0]?.extensions?.['code'], url).toBe('BAD_USER_INPUT');
      expect(refused.errors?.[0]?.message, url).toMatch(/address not allowed/);
    }
    const long = `https://warehouse.example/${'x'.repeat(2048 - 'https://warehouse.example/'.length + 1)}`;
    const tooLong = await gql(app, REGISTER, { url: long });
    expect(tooLong.errors?.[0]).toMatchObject({
      message: 'url must be at most 2048 characters (it has 2049)',
      extensions: { code: 'BAD_USER_INPUT' },
    });
    const withUser = await gql(app, REGISTER, { url: 'https://user:password@warehouse.example/hook' });
    expect(withUser.errors?.[0]).toMatchObject({ message: expect.stringMatching(/user info/), extensions: { code: 'BAD_USER_INPUT' } });
    expect((await cluster.db.query(`SELECT count(*)::int AS n FROM webhook_endpoint`)).rows[0].n).toBe(0);
  });

  it('admits the public: a URL of 2048 characters, an IPv4 address mapped or behind NAT64 (kinds no event here has; removed after)', async () => {
    const app = cluster.apps[0]!;
    const urls = [
      `https://warehouse.example/${'x'.repeat(2048 - 'https://warehouse.example/'.length)}`,
      'http://[::ffff:8.8.8.8]/',
      'http://[64:ff9b::808:808]/',
    ];
    const kinds = `mutation ($url: String!) { registerWebhookEndpoint(url: $url, eventKinds: [PURGE_FINISHED]) { endpoint { id } } }`;
    for (const url of urls) expect((await gql(app, kinds, { url })).errors, url).toBeUndefined();
    // Never delivered to: no purge finishes in this cluster, and they are gone before the next test.
    await cluster.db.query(`DELETE FROM webhook_endpoint`);
  });

  it('refuses at delivery what resolves to an internal address, or was stored without the check: the same answer for every port', async () => {
    const app = cluster.apps[0]!;
    // A name is accepted at registration; this machine's own name resolves to one of its internal addresses.
    const byName = await gql<{ registerWebhookEndpoint: { endpoint: { id: string } } }>(app, REGISTER, {
      url: `http://${hostname()}:${hook.port}/by-name`,
    });
    expect(byName.errors).toBeUndefined();
    const stored = [
      `http://127.0.0.1:${hook.port}/listening`,
      `http://127.0.0.1:${await freePort()}/closed`,
      `http://127.0.0.1:${new URL(cluster.databaseUrl).port}/postgres`,
      `http://127.0.0.1:${new URL(app.metricsUrl).port}/metrics`,
      `http://[::ffff:7f00:1]:${hook.port}/mapped`,
    ];
    const ids = [byName.data!.registerWebhookEndpoint.endpoint.id];
    for (const url of stored) ids.push(await insertEndpoint(cluster, url));
    await leave(app, '8100');
    await eventually(
      async () => (await Promise.all(ids.map((id) => deliveries(app, id)))).every((list) => list[0] !== undefined && list[0].attempts > 0),
      30_000,
    );
    for (const id of ids) {
      const [delivery] = await deliveries(app, id);
      expect(delivery).toMatchObject({ lastStatusCode: null, lastError: 'no response' });
    }
    expect(hook.paths).toEqual([]);
  });
});

describe('with an allow list', () => {
  let cluster: Cluster;
  beforeAll(async () => {
    cluster = await startCluster([]);
    cluster.apps.push(
      await cluster.startInstance({ ...QUICK, WEBHOOK_TIMEOUT_MS: '1000', WEBHOOK_ALLOWED_DESTINATIONS: '127.0.0.0/8, ::1, localhost' }),
    );
  });
  afterAll(() => cluster?.stop());

  it('admits the internal receivers it names, in every spelling, and delivers to them', async () => {
    const app = cluster.apps[0]!;
    const forms = [...loopbackForms(hook.port), `http://${hostname()}:${hook.port}/by-name`];
    for (const url of forms) expect((await gql(app, REGISTER, { url })).errors, url).toBeUndefined();
    // Still refused: what the list does not name.
    expect((await gql(app, REGISTER, { url: 'http://169.254.169.254/' })).errors?.[0]?.extensions?.['code']).toBe('BAD_USER_INPUT');
    hook.paths.splice(0);
    await leave(app, '8200');
    // Each path once: an attempt slower than the 1 s timeout (a loaded machine) is sent again.
    const received = () => [...new Set(hook.paths)].sort();
    await eventually(() => received().length === forms.length, 30_000);
    expect(received()).toEqual(forms.map((url) => new URL(url).pathname).sort());
  });

  it('says "no response" whether nothing listens, something that is not HTTP answers, or a port is silent', async () => {
    const app = cluster.apps[0]!;
    // Accepts connections and never says a word (each attempt times out).
    const silent = net.createServer((socket) => void sockets.push(socket.on('error', () => undefined)));
    const sockets: net.Socket[] = [];
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const urls = [
      `http://127.0.0.1:${await freePort()}/closed`,
      `http://127.0.0.1:${new URL(cluster.databaseUrl).port}/postgres`,
      `http://127.0.0.1:${(silent.address() as AddressInfo).port}/silent`,
    ];
    const ids: string[] = [];
    for (const url of urls)
      ids.push(
        (await gql<{ registerWebhookEndpoint: { endpoint: { id: string } } }>(app, REGISTER, { url })).data!.registerWebhookEndpoint
          .endpoint.id,
      );
    await leave(app, '8201');
    await eventually(
      async () => (await Promise.all(ids.map((id) => deliveries(app, id)))).every((list) => list[0] !== undefined && list[0].attempts > 0),
      30_000,
    );
    for (const id of ids) expect((await deliveries(app, id))[0]).toMatchObject({ lastStatusCode: null, lastError: 'no response' });
    sockets.forEach((socket) => socket.destroy());
    await new Promise<void>((resolve) => silent.close(() => resolve()));
  });
});
