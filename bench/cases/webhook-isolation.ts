import { fork } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { eventually } from '../../tooling/eventually.js';
import type { Case, Row } from '../case.js';
import { graphql } from '../cluster.js';
import { ms } from '../format.js';
import { summarize } from '../stats.js';

const NEIGHBOURS = {
  hanging: '25. webhook isolation: healthy endpoint delivery p99, beside 8 endpoints hanging from their first attempt vs alone',
  flapping: '25. webhook isolation: healthy endpoint delivery p99, beside 4 endpoints alternately answering 200 and hanging vs alone',
  endless: '25. webhook isolation: healthy endpoint delivery p99, beside an endpoint answering 200 with an endless body vs alone',
} as const;
type Neighbour = keyof typeof NEIGHBOURS;
const PATHS: Record<Neighbour, string[]> = {
  hanging: [1, 2, 3, 4, 5, 6, 7, 8].map((n) => `/hang/${n}`),
  flapping: [1, 2, 3, 4].map((n) => `/flap/${n}`),
  endless: ['/endless'],
};
const ALLOW = { WEBHOOK_ALLOWED_DESTINATIONS: '127.0.0.1' };
const REGISTER = `mutation ($u: String!) { registerWebhookEndpoint(url: $u, eventKinds: [LEFT]) { secret } }`;
const LEAVE = `mutation ($u: UInt64) { leaveCommunityLayer(userId: $u) { status } }`;
/** WEBHOOK_PROBATION_SUCCESSES' default: the healthy endpoint is trusted after these, before any neighbour comes. */
const PROBATION = 3;

/** The healthy receiver, in this process: when each user's delivery arrived. */
async function healthyReceiver() {
  const arrived = new Map<string, number>();
  const server = http.createServer((req, res) => {
    let body = '';
    req
      .setEncoding('utf8')
      .on('data', (part: string) => (body += part))
      .on('end', () => {
        const userId = (JSON.parse(body) as { data: { userId: string } }).data.userId;
        if (!arrived.has(userId)) arrived.set(userId, performance.now());
        res.writeHead(204).end();
      });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const close = () => {
    server.closeAllConnections();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/healthy`, arrived, close };
}

/**
 * 23: a healthy endpoint's delivery latency (leave sent → delivery received) on deployments of
 * their own (a database and one delivering server process each, the default 4 delivery workers and
 * 10 s timeout), in alternating rounds of one run: alone, and beside 8 endpoints that hang from their
 * first attempt, 4 that answer 200 and hang in turn, or one that streams an endless 200 body (the
 * hostile receivers in a process of their own). The healthy endpoint is trusted before its
 * neighbours are registered; they start on probation, as every new endpoint does. Each figure is
 * its p99 as a ratio to alone. A deployment is stopped after its last round, so its hanging
 * attempts do not load the arms measured after it.
 */
export const webhookIsolation: Case = {
  labels: Object.values(NEIGHBOURS),
  async run(cluster, sizes) {
    const healthy = await healthyReceiver();
    const hostile = fork(new URL('../hostile-webhook-receiver.ts', import.meta.url));
    let user = 9_700_000;
    const leave = async (app: { url: string }) => {
      const u = String(user++);
      await graphql(app, cluster.token, LEAVE, { u });
      return u;
    };
    try {
      const port = await new Promise<number>((resolve) =>
        hostile.once('message', (message) => resolve((message as { port: number }).port)),
      );
      const deploy = async (paths: string[]) => {
        const processes = await cluster.startProcesses(await cluster.freshDatabase(), 1, ALLOW);
        const app = { url: processes.urls[0]! };
        await graphql(app, cluster.token, REGISTER, { u: healthy.url });
        const warm: string[] = [];
        for (let i = 0; i < PROBATION; i++) warm.push(await leave(app));
        await eventually(() => warm.every((u) => healthy.arrived.has(u)), 60_000);
        for (const path of paths) await graphql(app, cluster.token, REGISTER, { u: `http://127.0.0.1:${port}${path}` });
        return { app, processes, latencies: [] as number[] };
      };
      // Deployed at once (the quick run stays short); each arm is measured on its own afterwards.
      const [alone, hanging, flapping, endless] = await Promise.all([
        deploy([]),
        deploy(PATHS.hanging),
        deploy(PATHS.flapping),
        deploy(PATHS.endless),
      ]);
      const arms = { alone: alone!, hanging: hanging!, flapping: flapping!, endless: endless! };
      for (let round = 0; round < sizes.rounds; round++) {
        for (const arm of Object.values(arms)) {
          const sent = new Map<string, number>();
          for (let i = 0; i < sizes.changes; i++) {
            const at = performance.now();
            sent.set(await leave(arm.app), at);
          }
          await eventually(() => [...sent.keys()].every((u) => healthy.arrived.has(u)), 300_000);
          for (const [u, at] of sent) arm.latencies.push(healthy.arrived.get(u)! - at);
          if (round === sizes.rounds - 1) await arm.processes.stop();
        }
      }
      const aloneP = summarize(arms.alone.latencies);
      return (Object.keys(NEIGHBOURS) as Neighbour[]).map((neighbour): Row => {
        const beside = summarize(arms[neighbour].latencies);
        const ratio = beside.p99 / aloneP.p99;
        return {
          case: NEIGHBOURS[neighbour],
          figure: `p99 ${ms(beside.p99)} beside vs ${ms(aloneP.p99)} alone (p50 ${ms(beside.p50)} vs ${ms(aloneP.p50)}, max ${ms(beside.max)})`,
          ceiling: '',
          ratio,
          target: '≤ 2×',
          met: ratio <= 2,
          details: { alone: aloneP, beside },
        };
      });
    } finally {
      hostile.disconnect();
      await healthy.close();
    }
  },
};
