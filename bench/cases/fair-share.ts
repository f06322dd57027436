import type { Case, Row } from '../case.js';
import { startFlood } from '../flood.js';
import { openLoop } from '../open-loop.js';
import { processCpuMs } from '../process-cpu.js';
import { startRefusers } from '../refuser.js';
import { body, createWorkload, SIGNAL } from '../workload.js';
import { cpuPerRequest, cpuRow } from './fair-share-cpu.js';
import { rowsFor, type Samples } from './fair-share-rows.js';
import { ADMITTED, BUDGET, COUNTS, CPU, ENVIRONMENT, FLOOD_WARMUP_SEC, FLOOR, P99, STEADY_PER_SEC } from './fair-share-settings.js';

/** Each quiet window is at least this long, so the flooder's bucket is full again when its next flood starts. */
const MIN_WINDOW_SEC = BUDGET.capacity / BUDGET.rate + 0.5;

/**
 * Issue 37's flood: one user token at ten times its budget (single signals, batches of 10, leaves
 * and rejoins), spread over 1 and over 4 real server processes, while other users send a steady
 * open-loop load to the first process. Ratios in the same run: the others' p99 against the same
 * load without the flood, measured in alternating rounds on the same processes (quiet, flooded,
 * quiet, flooded…) so that the machine's drift falls on both; what the flooder got in against
 * what its bucket allows (capacity + rate × seconds, each round); and the server CPU per request
 * of the steady load, limits on against FAIR_SHARE=false, side by side. Each round also floods
 * bare servers that refuse everything (refuser.ts) beside the quiet ones: the others' p99 then is
 * the floor of theirs, what the flood's HTTP alone costs them on these cores.
 */
export const fairShare: Case = {
  labels: [CPU, ...COUNTS.flatMap((n) => [P99(n), FLOOR(n), ADMITTED(n)])],
  async run(cluster, sizes) {
    const url = await cluster.freshDatabase();
    const workload = createWorkload(sizes.workload);
    const bodies = Array.from({ length: sizes.bodies }, () => body(SIGNAL, { input: workload.nextSignal() }));
    const probeBody = body('query ($userId: UInt64) { communityLayerStatus(userId: $userId) { status } }', { userId: workload.userIds[0] });
    const flooderToken = await cluster.tokenFor('777777', 'none');
    const steady = (target: string, durationSec: number, probe = true) =>
      openLoop({
        url: target,
        token: cluster.token,
        bodies,
        ratePerSec: STEADY_PER_SEC,
        durationSec,
        timeoutMs: 10_000,
        ...(probe ? { probeBody } : {}),
      });
    const rows: Row[] = [cpuRow(CPU, await cpuPerRequest(cluster, url, ENVIRONMENT, steady, sizes, bodies), STEADY_PER_SEC)];
    // Twice the usual rounds, as long each: a p99 of 1,500 answers moved 30% between runs on its own.
    const rounds = Math.max(2, 2 * sizes.rounds);
    const window = Math.max(MIN_WINDOW_SEC, (2 * sizes.durationSec) / rounds);
    for (const count of COUNTS) {
      const processes = await cluster.startProcesses(url, count, ENVIRONMENT);
      const refusers = await startRefusers(count);
      try {
        const target = processes.urls[0]!;
        await steady(target, sizes.warmupSec);
        const samples: Samples = {
          quiet: [],
          flooded: [],
          floor: [],
          burst: [],
          floods: [],
          spanSec: 0,
          windowSec: window,
          cpuMs: { quiet: 0, flooded: 0 },
        };
        const cpu = () => processes.pids.reduce((sum, pid) => sum + processCpuMs(pid), 0);
        const from = performance.now();
        for (let round = 0; round < rounds; round++) {
          let before = cpu();
          samples.quiet.push(await steady(target, window));
          samples.cpuMs.quiet += cpu() - before;
          const flood = await startFlood({
            urls: processes.urls,
            token: flooderToken,
            userId: '777777',
            pointsPerSec: 10 * BUDGET.rate,
            batchSize: 10,
          });
          samples.burst.push(await steady(target, FLOOD_WARMUP_SEC));
          before = cpu();
          samples.flooded.push(await steady(target, window));
          samples.cpuMs.flooded += cpu() - before;
          samples.floods.push(await flood.stop());
          // The same flood at servers that refuse it all for the price of HTTP alone: what any limiter pays at least.
          const refused = await startFlood({
            urls: refusers.urls,
            token: flooderToken,
            userId: '777777',
            pointsPerSec: 10 * BUDGET.rate,
            batchSize: 10,
          });
          await steady(target, FLOOD_WARMUP_SEC);
          samples.floor.push(await steady(target, window));
          await refused.stop();
        }
        samples.spanSec = (performance.now() - from) / 1000;
        rows.push(...rowsFor(count, samples));
      } finally {
        await Promise.all([processes.stop(), refusers.stop()]);
      }
    }
    return rows;
  },
};
