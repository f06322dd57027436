import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { eventually } from '../../tooling/eventually.js';
import type { Case, Row } from '../case.js';
import { graphql, type Cluster } from '../cluster.js';
import { ms } from '../format.js';
import { summarize } from '../stats.js';

const LANES_LABEL = '20. healthy endpoint delivery p99, beside a hanging endpoint vs alone';
const CRASH_LABEL = '21. kill -9 of the delivering process to the first redelivery';
const ALLOW = { WEBHOOK_ALLOWED_DESTINATIONS: '127.0.0.1' };
const REGISTER = `mutation ($u: String!) { registerWebhookEndpoint(url: $u, eventKinds: [LEFT]) { secret } }`;

/** A receiver on loopback in this process: when each user's delivery arrived, or every request held open (`hang`). */
async function receiver(hang: boolean) {
  const arrived = new Map<string, number>();
  const held = new Set<http.ServerResponse>();
  const server = http.createServer((req, res) => {
    let body = '';
    req
      .setEncoding('utf8')
      .on('data', (chunk: string) => (body += chunk))
      .on('end', () => {
        if (hang) return void held.add(res);
        const userId = (JSON.parse(body) as { data: { userId: string } }).data.userId;
        if (!arrived.has(userId)) arrived.set(userId, performance.now());
        res.writeHead(204).end();
      });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const close = () => {
    for (const res of held) res.destroy();
    server.closeAllConnections();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, arrived, held, close };
}

/**
 * 20: a healthy endpoint's delivery latency (leave sent → delivery received) on two deployments
 * of their own (a database and a server process each), in alternating rounds of one run: the
 * healthy endpoint alone, and beside an endpoint that never answers (each attempt runs into
 * WEBHOOK_TIMEOUT_MS). Lanes keep the hanging one on one worker, so the ratio should be near 1.
 * 21: a process delivering to a receiver that holds the third delivery is killed with SIGKILL
 * mid-job; a new process starts on its database; the figure is the time from the kill to the
 * first delivery that arrives after it (the restart included), the worst of the rounds.
 */
export const webhookLanes: Case = {
  labels: [LANES_LABEL, CRASH_LABEL],
  async run(cluster, sizes) {
    const healthy = await receiver(false);
    const hanging = await receiver(true);
    try {
      const deploy = async (neighbour: boolean) => {
        const app = { url: (await cluster.startProcesses(await cluster.freshDatabase(), 1, ALLOW)).urls[0]! };
        await graphql(app, cluster.token, REGISTER, { u: healthy.url });
        if (neighbour) await graphql(app, cluster.token, REGISTER, { u: hanging.url });
        return { app, latencies: [] as number[] };
      };
      const arms = { alone: await deploy(false), beside: await deploy(true) };
      let user = 9_500_000;
      for (let round = 0; round < sizes.rounds; round++) {
        for (const arm of Object.values(arms)) {
          const sent = new Map<string, number>();
          for (let i = 0; i < sizes.changes; i++) {
            const u = String(user++);
            sent.set(u, performance.now());
            await graphql(arm.app, cluster.token, `mutation ($u: UInt64) { leaveCommunityLayer(userId: $u) { status } }`, { u });
          }
          await eventually(() => [...sent.keys()].every((u) => healthy.arrived.has(u)), 300_000);
          for (const [u, at] of sent) arm.latencies.push(healthy.arrived.get(u)! - at);
        }
      }
      const alone = summarize(arms.alone.latencies);
      const beside = summarize(arms.beside.latencies);
      const ratio = beside.p99 / alone.p99;
      const lanes: Row = {
        case: LANES_LABEL,
        figure: `p99 ${ms(beside.p99)} beside a hanging endpoint vs ${ms(alone.p99)} alone (p50 ${ms(beside.p50)} vs ${ms(alone.p50)}; ${hanging.held.size} attempts held)`,
        ceiling: '',
        ratio,
        target: '≤ 1.5×',
        met: ratio <= 1.5,
        details: { alone, beside, heldAttempts: hanging.held.size },
      };
      const recoveries: number[] = [];
      for (let round = 0; round < sizes.rounds; round++) recoveries.push(await killAndRecover(cluster, 9_900_000 + round * 100));
      const worst = Math.max(...recoveries);
      const crash: Row = {
        case: CRASH_LABEL,
        figure: `${(worst / 1000).toFixed(1)} s to the first redelivery (restart included; rounds: ${recoveries.map((r) => (r / 1000).toFixed(1)).join(', ')} s)`,
        ceiling: '',
        ratio: null,
        target: '≤ 30 s',
        met: worst <= 30_000,
        details: { recoveriesMs: recoveries },
      };
      return [lanes, crash];
    } finally {
      await healthy.close();
      await hanging.close();
    }
  },
};

/** One kill: milliseconds from SIGKILL to the first delivery received after it. */
async function killAndRecover(cluster: Cluster, firstUser: number): Promise<number> {
  const database = await cluster.freshDatabase();
  let received = 0;
  let firstAfterKill: number | null = null;
  let killedAt: number | null = null;
  const held: http.ServerResponse[] = [];
  const server = http.createServer((req, res) =>
    req.resume().on('end', () => {
      received++;
      if (killedAt !== null) firstAfterKill ??= performance.now();
      if (killedAt === null && received === 3) return void held.push(res);
      res.writeHead(204).end();
    }),
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const crashing = await cluster.startProcesses(database, 1, { ...ALLOW, WEBHOOK_CONCURRENCY: '1' });
    const app = { url: crashing.urls[0]! };
    await graphql(app, cluster.token, REGISTER, { u: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook` });
    for (let i = 0; i < 10; i++)
      await graphql(app, cluster.token, `mutation ($u: UInt64) { leaveCommunityLayer(userId: $u) { status } }`, {
        u: String(firstUser + i),
      });
    await eventually(() => held.length === 1, 60_000);
    process.kill(crashing.pids[0]!, 'SIGKILL');
    killedAt = performance.now();
    held.splice(0).forEach((res) => res.destroy());
    await cluster.startProcesses(database, 1, ALLOW);
    await eventually(() => firstAfterKill !== null, 300_000);
    return firstAfterKill! - killedAt;
  } finally {
    held.splice(0).forEach((res) => res.destroy());
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}
