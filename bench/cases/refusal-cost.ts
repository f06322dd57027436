import type { Case, Row } from '../case.js';
import { startFlood, type FloodResult } from '../flood.js';
import { ms, num } from '../format.js';
import { openLoop, type OpenLoopSample } from '../open-loop.js';
import { startRefusers } from '../refuser.js';
import { summarize } from '../stats.js';
import { body, createWorkload, SIGNAL } from '../workload.js';
import { ENVIRONMENT, STEADY_PER_SEC } from './fair-share-settings.js';

const LABEL = "24. fair share: others' p99 beside a flood refused whole by the service vs by a bare HTTP server";
/** Requests a second the flood asks for: a hundred times the flooder's budget (20 points a second). */
const FLOOD_PER_SEC = 2_000;
/** Each flood runs this long before the others' latencies count: its caller's burst is spent first. */
const FLOOD_WARMUP_SEC = 1;

/**
 * Issue 45's "refusing is not free": one user token sends single signals at a hundred times its
 * budget, so all but its refill is refused, while other users send a steady open-loop load to the
 * same server process. In alternating windows the same flood goes to a bare Node.js server that
 * answers every request 429 with the service's own headers and body (refuser.ts) instead, the
 * steady load still to the service. The ratio of the two windows' p99: what the service's refusal
 * costs the others beyond what answering the flood over HTTP at all costs them on these cores.
 */
export const refusalCost: Case = {
  labels: [LABEL],
  async run(cluster, sizes) {
    const url = await cluster.freshDatabase();
    const workload = createWorkload(sizes.workload);
    const bodies = Array.from({ length: sizes.bodies }, () => body(SIGNAL, { input: workload.nextSignal() }));
    const flooderToken = await cluster.tokenFor('888888', 'none');
    const [processes, refusers] = await Promise.all([cluster.startProcesses(url, 1, ENVIRONMENT), startRefusers(1)]);
    try {
      const target = processes.urls[0]!;
      const steady = (durationSec: number) =>
        openLoop({ url: target, token: cluster.token, bodies, ratePerSec: STEADY_PER_SEC, durationSec, timeoutMs: 10_000 });
      const flooding = async (urls: string[], windowSec: number): Promise<[OpenLoopSample, FloodResult]> => {
        const flood = await startFlood({
          urls,
          token: flooderToken,
          userId: '888888',
          pointsPerSec: FLOOD_PER_SEC,
          batchSize: 1,
          singlesOnly: true,
        });
        await steady(FLOOD_WARMUP_SEC);
        const sample = await steady(windowSec);
        return [sample, await flood.stop()];
      };
      await steady(sizes.warmupSec);
      const rounds = Math.max(2, 2 * sizes.rounds);
      const windowSec = Math.max(2, (2 * sizes.durationSec) / rounds);
      const service: [OpenLoopSample, FloodResult][] = [];
      const bare: [OpenLoopSample, FloodResult][] = [];
      for (let round = 0; round < rounds; round++) {
        service.push(await flooding([target], windowSec));
        bare.push(await flooding(refusers.urls, windowSec));
      }
      return [rowOf(service, bare, rounds, windowSec)];
    } finally {
      await Promise.all([processes.stop(), refusers.stop()]);
    }
  },
};

function rowOf(service: [OpenLoopSample, FloodResult][], bare: [OpenLoopSample, FloodResult][], rounds: number, windowSec: number): Row {
  const latencies = (arm: [OpenLoopSample, FloodResult][]) => summarize(arm.flatMap(([sample]) => sample.okMs));
  const floods = (arm: [OpenLoopSample, FloodResult][]) => {
    const [sent, refused, seconds] = arm.reduce(
      ([s, r, t], [, flood]) => [s + flood.sent, r + flood.refused, t + flood.seconds],
      [0, 0, 0],
    );
    return { sent, refused, perSec: sent / Math.max(1, seconds) };
  };
  const failures = (arm: [OpenLoopSample, FloodResult][]) => arm.reduce((sum, [sample]) => sum + sample.failures, 0);
  const [byService, byBare] = [latencies(service), latencies(bare)];
  const ratio = byService.p99 / byBare.p99;
  const [serviceFlood, bareFlood] = [floods(service), floods(bare)];
  return {
    case: LABEL,
    figure: `p99 ${ms(byService.p99)} (p50 ${ms(byService.p50)}); flood ${num(serviceFlood.perSec)}/s, ${num(serviceFlood.refused)} of ${num(serviceFlood.sent)} refused`,
    ceiling: `refused by a bare server p99 ${ms(byBare.p99)} (p50 ${ms(byBare.p50)}); flood ${num(bareFlood.perSec)}/s; ${rounds} rounds each`,
    ratio,
    target: '≤ 1.2',
    met: ratio <= 1.2 && failures(service) === 0,
    details: {
      serviceFlood,
      bareFlood,
      failures: { service: failures(service), bare: failures(bare) },
      windowSec,
      steadyPerSec: STEADY_PER_SEC,
      floodPerSec: FLOOD_PER_SEC,
    },
  };
}
