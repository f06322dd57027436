import { readFileSync } from 'node:fs';
import { startOtlpReceiver } from '../../tooling/otlp-receiver.js';
import type { Case } from '../case.js';
import { ms, rate } from '../format.js';
import { httpLoad, interleave } from '../load.js';
import { body, createWorkload, SIGNALS } from '../workload.js';

const TRACED = '14. batched signals: tracing on (100% sampled) vs off';
const ACCESS_LOG = '14. batched signals: access log on vs off';

/**
 * What observability costs batched throughput: three server processes on one database, the same
 * `signals` calls against each in turn: one plain (no tracing, no access log), one exporting every
 * span over OTLP/HTTP to a receiver on loopback that discards them, one writing an access-log line
 * per request (to a discarded stdout). The ratio is server CPU per call (user + system time of
 * the process, from /proc), which a loaded machine disturbs far less than throughput; both are shown.
 */
export const tracingCost: Case = {
  labels: [TRACED, ACCESS_LOG],
  async run(cluster, sizes) {
    const url = await cluster.freshDatabase();
    const receiver = await startOtlpReceiver({ keep: false });
    try {
      const workload = createWorkload(sizes.workload);
      const batches = Array.from({ length: 16 }, () =>
        body(SIGNALS, { inputs: Array.from({ length: sizes.batchSize }, () => workload.nextSignal()) }),
      );
      // Budgets off: three processes share the bench token's budget, which full-size load outruns (case 22 measures the limiter).
      const room = { SIGNAL_QUEUE_MAX: '20000', FAIR_SHARE: 'false' };
      const [plain, traced, logged] = await Promise.all([
        cluster.startProcesses(url, 1, room),
        cluster.startProcesses(url, 1, {
          ...room,
          OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
          OTEL_TRACES_SAMPLER: 'always_on',
          OTEL_BSP_MAX_QUEUE_SIZE: '65536',
        }),
        cluster.startProcesses(url, 1, { ...room, LOG_LEVEL: 'info', ACCESS_LOG_SAMPLE: '1' }),
      ]);
      const cpuMs = new Map<number, { ms: number; calls: number }>();
      const load = (target: { urls: string[]; pids: number[] }, durationSec: number) => async () => {
        const before = processCpuMs(target.pids[0]!);
        const sample = await httpLoad({
          url: target.urls[0]!,
          token: cluster.token,
          bodies: batches,
          connections: sizes.batchCallers,
          durationSec,
        });
        const spent = cpuMs.get(target.pids[0]!) ?? { ms: 0, calls: 0 };
        cpuMs.set(target.pids[0]!, { ms: spent.ms + processCpuMs(target.pids[0]!) - before, calls: spent.calls + sample.requests });
        return sample;
      };
      for (const target of [plain, traced, logged]) await load(target, sizes.warmupSec)();
      cpuMs.clear();
      // At least three rounds, even in --quick: a 5% difference drowns in one round's drift.
      const rounds = Math.max(3, sizes.rounds);
      const seconds = sizes.durationSec / rounds;
      const [off, on, log] = await interleave([load(plain, seconds), load(traced, seconds), load(logged, seconds)], rounds);
      const exports = receiver.exports;
      const perCall = (target: { pids: number[] }) => {
        const spent = cpuMs.get(target.pids[0]!)!;
        return spent.ms / spent.calls;
      };
      const [offCpu, onCpu, logCpu] = [perCall(plain), perCall(traced), perCall(logged)];
      return [
        {
          case: TRACED,
          figure: `${ms(onCpu)} server CPU per call; ${rate(on, 'signals', sizes.batchSize)}`,
          ceiling: `off ${ms(offCpu)} per call; ${rate(off, 'signals', sizes.batchSize)}`,
          ratio: onCpu / offCpu,
          target: '≤ 1.05',
          met: onCpu / offCpu <= 1.05,
          details: {
            on,
            off,
            throughputRatio: on.perSecond / off.perSecond,
            cpuMsPerCall: { off: offCpu, on: onCpu, accessLog: logCpu },
            otlpExports: exports,
            inputsPerCall: sizes.batchSize,
            callers: sizes.batchCallers,
            rounds,
          },
        },
        {
          case: ACCESS_LOG,
          figure: `${ms(logCpu)} server CPU per call; ${rate(log, 'signals', sizes.batchSize)}`,
          ceiling: `off ${ms(offCpu)} per call; ${rate(off, 'signals', sizes.batchSize)}`,
          ratio: logCpu / offCpu,
          target: '—',
          met: null,
          details: { log, off, throughputRatio: log.perSecond / off.perSecond },
        },
      ];
    } finally {
      await receiver.close();
    }
  },
};

/** User + system CPU a process has used so far, from /proc/<pid>/stat (Linux). */
function processCpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  // utime and stime are fields 14 and 15 of the file, in clock ticks (USER_HZ, 100 on Linux).
  return (Number(fields[11]) + Number(fields[12])) * 10;
}
