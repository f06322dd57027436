import type { Case, Row } from '../case.js';
import { startFlood, type FloodResult } from '../flood.js';
import { ms, num } from '../format.js';
import { openLoop, type OpenLoopSample } from '../open-loop.js';
import { processCpuMs } from '../process-cpu.js';
import { summarize } from '../stats.js';
import { body, createWorkload, SIGNAL } from '../workload.js';

const COUNTS = [1, 4] as const;
const suffix = (n: number) => `${n} process${n > 1 ? 'es' : ''}`;
const P99 = (n: number) => `22. fair share: other users' p99 with one credential flooding at 10× its budget, ${suffix(n)}`;
const ADMITTED = (n: number) => `22. fair share: flooder admitted vs its budget, ${suffix(n)}`;
const CPU = '22. fair share: server CPU per request, limits on vs off';

/** The flooder's budget, small so a short run spends it many times over. */
const BUDGET = { capacity: 200, rate: 100 };
const MEMBERSHIP = { changes: 60, windowSec: 60 };
const ENVIRONMENT = {
  SIGNAL_QUEUE_MAX: '20000',
  FAIR_SHARE_USER_CAPACITY: String(BUDGET.capacity),
  FAIR_SHARE_USER_RATE: String(BUDGET.rate),
  FAIR_SHARE_MEMBERSHIP_CHANGES: String(MEMBERSHIP.changes),
  FAIR_SHARE_MEMBERSHIP_WINDOW_SECONDS: String(MEMBERSHIP.windowSec),
  FAIR_SHARE_INSTANCES: '4',
};
/** The other users' steady load: single signals of many users, well under capacity. */
const STEADY_PER_SEC = 100;

/**
 * Issue 37's flood: one user token at ten times its budget (single signals, batches of 10, leaves
 * and rejoins), spread over 1 and over 4 real server processes, while other users send a steady
 * open-loop load to the first process. Ratios in the same run: the others' p99 against the same
 * load without the flood; what the flooder got in against what its bucket allows over the run
 * (capacity + rate × seconds); and the server CPU per request of the steady load, limits on
 * against FAIR_SHARE=false.
 */
export const fairShare: Case = {
  labels: [CPU, ...COUNTS.flatMap((n) => [P99(n), ADMITTED(n)])],
  async run(cluster, sizes) {
    const url = await cluster.freshDatabase();
    const workload = createWorkload(sizes.workload);
    const bodies = Array.from({ length: sizes.bodies }, () => body(SIGNAL, { input: workload.nextSignal() }));
    const probeBody = body('query ($userId: UInt64) { communityLayerStatus(userId: $userId) { status } }', { userId: workload.userIds[0] });
    const flooderToken = await cluster.tokenFor('777777', 'none');
    const steady = (target: string, durationSec: number) =>
      openLoop({ url: target, token: cluster.token, bodies, ratePerSec: STEADY_PER_SEC, durationSec, timeoutMs: 10_000, probeBody });
    const rows: Row[] = [cpuRow(await cpuPerRequest(cluster, url, steady, sizes))];
    for (const count of COUNTS) {
      const processes = await cluster.startProcesses(url, count, ENVIRONMENT);
      try {
        await steady(processes.urls[0]!, sizes.warmupSec);
        const quiet = await steady(processes.urls[0]!, sizes.durationSec);
        const flood = startFlood({ urls: processes.urls, token: flooderToken, userId: '777777', pointsPerSec: 10 * BUDGET.rate, batchSize: 10 });
        const flooded = await steady(processes.urls[0]!, sizes.durationSec);
        rows.push(...rowsFor(count, quiet, flooded, await flood.stop()));
      } finally {
        await processes.stop();
      }
    }
    return rows;
  },
};

type Steady = (target: string, durationSec: number) => Promise<OpenLoopSample>;
type Cpu = { on: { ms: number; requests: number }; off: { ms: number; requests: number }; rounds: number };

/** The steady load alone against one process with limits on and one with them off, in alternating rounds. */
async function cpuPerRequest(cluster: Parameters<Case['run']>[0], url: string, steady: Steady, sizes: Parameters<Case['run']>[1]): Promise<Cpu> {
  const [on, off] = await Promise.all([cluster.startProcesses(url, 1, ENVIRONMENT), cluster.startProcesses(url, 1, { ...ENVIRONMENT, FAIR_SHARE: 'false' })]);
  try {
    const spent = { on: { ms: 0, requests: 0 }, off: { ms: 0, requests: 0 } };
    for (const target of [on, off]) await steady(target.urls[0]!, sizes.warmupSec);
    // At least three rounds, even in --quick: a few percent drown in one round's drift.
    const rounds = Math.max(3, sizes.rounds);
    for (let round = 0; round < rounds; round++) {
      for (const [arm, target] of [['on', on], ['off', off]] as const) {
        const before = processCpuMs(target.pids[0]!);
        const sample = await steady(target.urls[0]!, sizes.durationSec / rounds);
        spent[arm].ms += processCpuMs(target.pids[0]!) - before;
        // The probe's back-to-back status reads are requests too.
        spent[arm].requests += sample.okMs.length + sample.probeMs.length;
      }
    }
    return { ...spent, rounds };
  } finally {
    await Promise.all([on.stop(), off.stop()]);
  }
}

function cpuRow(cpu: Cpu): Row {
  const [onCpu, offCpu] = [cpu.on.ms / Math.max(1, cpu.on.requests), cpu.off.ms / Math.max(1, cpu.off.requests)];
  return {
    case: CPU,
    figure: `${ms(onCpu)} per request (${num(cpu.on.requests)} requests)`,
    ceiling: `limits off ${ms(offCpu)} per request (${num(cpu.off.requests)} requests)`,
    ratio: onCpu / offCpu,
    target: '≤ 1.03',
    met: onCpu / offCpu <= 1.03,
    details: { ...cpu, steadyPerSec: STEADY_PER_SEC },
  };
}

function rowsFor(count: number, quiet: OpenLoopSample, flooded: OpenLoopSample, flood: FloodResult): Row[] {
  const [calm, stormy] = [summarize(quiet.okMs), summarize(flooded.okMs)];
  const allowed = BUDGET.capacity + BUDGET.rate * flood.seconds;
  const changesAllowed = MEMBERSHIP.changes + (MEMBERSHIP.changes / MEMBERSHIP.windowSec) * flood.seconds;
  const latencyRatio = stormy.p99 / calm.p99;
  const admittedRatio = flood.admittedPoints / allowed;
  const others = (sample: OpenLoopSample) => ({ sent: sample.sent, ok: sample.okMs.length, shed: sample.shedMs.length, failures: sample.failures, firstFailure: sample.firstFailure });
  return [
    {
      case: P99(count),
      figure: `p99 ${ms(stormy.p99)} (p50 ${ms(stormy.p50)}), ${num(flooded.okMs.length)} of ${num(flooded.sent)} answered`,
      ceiling: `no flood p99 ${ms(calm.p99)} (p50 ${ms(calm.p50)})`,
      ratio: latencyRatio,
      target: '≤ 1.5',
      met: latencyRatio <= 1.5 && flooded.failures === 0,
      details: { quiet: others(quiet), flooded: others(flooded), steadyPerSec: STEADY_PER_SEC },
    },
    {
      case: ADMITTED(count),
      figure: `${num(flood.admittedPoints)} points in ${num(flood.seconds, 1)} s (${num(flood.refused)} of ${num(flood.sent)} requests refused 429); ${num(flood.admittedChanges)} membership changes`,
      ceiling: `budget ${num(allowed)} points (${BUDGET.capacity} + ${BUDGET.rate}/s); ${num(changesAllowed)} changes`,
      ratio: admittedRatio,
      target: '≤ 1.2',
      met: admittedRatio <= 1.2 && flood.admittedChanges <= 1.2 * changesAllowed,
      details: { flood, budget: BUDGET, membership: MEMBERSHIP, offeredPointsPerSec: 10 * BUDGET.rate },
    },
  ];
}
