import type { Case, Row } from '../case.js';
import { num, rate } from '../format.js';
import { httpLoad, interleave, mergeSamples } from '../load.js';
import type { ServerProcesses } from '../processes.js';
import { body, createWorkload, SIGNAL, SIGNALS } from '../workload.js';

const COUNTS = [1, 2, 4] as const;
const LABELS = COUNTS.flatMap((n) => [
  `10. single signals, ${n} process${n > 1 ? 'es' : ''}`,
  `10. batched signals, ${n} process${n > 1 ? 'es' : ''}`,
]);

/**
 * Signal throughput against 1, 2 and 4 real server processes on one database, the load spread
 * evenly (one load generator per process, the same total connections). The ratio is against one
 * process in the same run: where it stops rising, the database (or the two shared cores), not one
 * Node.js event loop, is the limit.
 */
export const processThroughput: Case = {
  labels: LABELS,
  async run(cluster, sizes) {
    const url = await cluster.freshDatabase();
    const workload = createWorkload(sizes.workload);
    const singles = Array.from({ length: sizes.bodies }, () => body(SIGNAL, { input: workload.nextSignal() }));
    const batches = Array.from({ length: 16 }, () =>
      body(SIGNALS, { inputs: Array.from({ length: sizes.batchSize }, () => workload.nextSignal()) }),
    );
    const seconds = sizes.durationSec / sizes.rounds;
    const groups: ServerProcesses[] = [];
    const rows: Row[] = [];
    let baseline: { single: number; batched: number } | null = null;
    for (const count of COUNTS) {
      const running = () => groups.flatMap((group) => group.urls);
      // Room for every caller's whole call: shedding is the overload case's subject, not this one's.
      if (running().length < count) groups.push(await cluster.startProcesses(url, count - running().length, { SIGNAL_QUEUE_MAX: '20000' }));
      const urls = running().slice(0, count);
      const spread = (bodies: string[], connections: number) => () =>
        Promise.all(
          urls.map((target, i) =>
            httpLoad({
              url: target,
              token: cluster.token,
              bodies: bodies.filter((_, k) => k % urls.length === i),
              connections: Math.max(1, Math.round(connections / urls.length)),
              durationSec: seconds,
            }),
          ),
        ).then(mergeSamples);
      const [single, batched] = await interleave([spread(singles, sizes.connections), spread(batches, sizes.batchCallers)], sizes.rounds);
      baseline ??= { single: single.perSecond, batched: batched.perSecond };
      const suffix = `${count} process${count > 1 ? 'es' : ''}`;
      rows.push(
        {
          case: `10. single signals, ${suffix}`,
          figure: rate(single, 'signals'),
          ceiling: `1 process ${num(baseline.single)} signals/s`,
          ratio: single.perSecond / baseline.single,
          target: '—',
          met: null,
          details: { single, processes: count, connections: sizes.connections },
        },
        {
          case: `10. batched signals, ${suffix}`,
          figure: rate(batched, 'signals', sizes.batchSize),
          ceiling: `1 process ${num(baseline.batched * sizes.batchSize)} signals/s`,
          ratio: batched.perSecond / baseline.batched,
          target: '—',
          met: null,
          details: { batched, processes: count, callers: sizes.batchCallers, inputsPerCall: sizes.batchSize },
        },
      );
    }
    return rows;
  },
};
