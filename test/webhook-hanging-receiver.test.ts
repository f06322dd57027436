import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { eventually, gql, startCluster, type Cluster } from './support/harness.js';

const CONCURRENCY = 4;
const LEAVES = 20;

let cluster: Cluster;
beforeAll(async () => {
  cluster = await startCluster([]);
  // Attempts never time out here, nor count as slow: every delivery the receiver takes stays in flight until it answers.
  // An endpoint is trusted after one quick success (so, unlike a new one, it may hold a worker outside the slow lane).
  const environment = {
    WEBHOOK_CONCURRENCY: String(CONCURRENCY),
    WEBHOOK_TIMEOUT_MS: '3600000',
    WEBHOOK_SLOW_MS: '3600000',
    WEBHOOK_PROBATION_SUCCESSES: '1',
  };
  cluster.apps.push(await cluster.startInstance({ ...environment, WEBHOOK_ALLOWED_DESTINATIONS: '127.0.0.1', WEBHOOK_POLL_MS: '100' }));
});
afterAll(() => cluster?.stop());

it('leaves complete while a receiver holds every delivery open, and their deliveries wait, then arrive', async () => {
  // A receiver that never answers, until released.
  const held: http.ServerResponse[] = [];
  let released = true;
  let answered = 0;
  const answer = (res: http.ServerResponse) => {
    answered++;
    res.writeHead(204).end();
  };
  const server = http.createServer((req, res) => req.resume().on('end', () => (released ? answer(res) : held.push(res))));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  const app = cluster.apps[0]!;
  // An endpoint holds one delivery worker at most (its lane): one endpoint per slot fills them all.
  for (let endpoint = 1; endpoint <= CONCURRENCY; endpoint++) {
    const registered = await gql(
      app,
      `mutation ($u: String!) { registerWebhookEndpoint(url: $u, eventKinds: [LEFT, REJOINED]) { secret } }`,
      { u: `${url}/${endpoint}` },
    );
    expect(registered.errors).toBeUndefined();
  }
  const leave = async (user: number) =>
    expect((await gql(app, `mutation { leaveCommunityLayer(userId: "${user}") { status } }`)).data).toEqual({
      leaveCommunityLayer: { status: 'LEFT' },
    });
  const rejoin = async (user: number) =>
    expect((await gql(app, `mutation { rejoinCommunityLayer(userId: "${user}") { status } }`)).data).toEqual({
      rejoinCommunityLayer: { status: 'ACTIVE' },
    });

  // Trusted: one delivery each answered at once (a new endpoint's attempts share the slow lane, half the workers).
  await leave(7000);
  const trusted = async () =>
    (await cluster.db.query(`SELECT count(*)::int AS n FROM webhook_endpoint WHERE fast_successes >= 1`)).rows[0].n;
  await eventually(async () => (await trusted()) === CONCURRENCY, 30_000);
  released = false;
  answered = 0;
  // One leave: every endpoint's delivery of it is taken, and every delivery slot waits on the receiver.
  await leave(7001);
  await eventually(() => held.length === CONCURRENCY, 30_000);
  // With all delivery stuck, leaves (and rejoins) still return, each with its answer.
  for (let user = 7100; user < 7100 + LEAVES; user++) {
    await leave(user);
    await rejoin(user);
  }
  expect(held.length).toBe(CONCURRENCY);
  expect(answered).toBe(0);
  const expected = CONCURRENCY * (1 + 2 * LEAVES);
  // Their deliveries are recorded and wait their turn: none lost, none given up.
  const statuses = async () =>
    (
      await cluster.db.query(
        `SELECT status, count(*)::int AS n FROM webhook_delivery d JOIN membership_event e ON e.position = d.event_position WHERE e.user_id <> 7000 GROUP BY status`,
      )
    ).rows;
  await eventually(async () => JSON.stringify(await statuses()) === JSON.stringify([{ status: 'PENDING', n: expected }]), 30_000);

  // Released, the receiver gets every one.
  released = true;
  held.splice(0).forEach(answer);
  await eventually(async () => JSON.stringify(await statuses()) === JSON.stringify([{ status: 'DELIVERED', n: expected }]), 60_000);
  await new Promise<void>((resolve) => server.close(() => resolve()));
});
