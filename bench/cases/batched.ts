import type { Case } from '../case.js';
import { rate } from '../format.js';
import { httpLoad, interleave, pgLoad } from '../load.js';
import { multiInsert } from '../raw-signal.js';
import { prepareSignalCase } from '../signal-setup.js';
import { body, SIGNALS } from '../workload.js';

const LABEL = '2. batched signals vs raw multi-row INSERT';
const DISTINCT_BATCHES = 16;

/** `signals` with `batchSize` inputs per call from a few callers, against the same rows inserted unnest-style. */
export const batched: Case = {
  labels: [LABEL],
  async run(cluster, sizes) {
    const { url, app, workload, left } = await prepareSignalCase(cluster, sizes);
    const batches = Array.from({ length: DISTINCT_BATCHES }, () => Array.from({ length: sizes.batchSize }, () => workload.nextSignal()));
    const statements = batches.map((inputs) => multiInsert(inputs, left));
    const seconds = sizes.durationSec / sizes.rounds;
    let next = 0;

    const [measured, raw] = await interleave(
      [
        () =>
          httpLoad({
            url: app.url,
            token: cluster.token,
            bodies: batches.map((inputs) => body(SIGNALS, { inputs })),
            connections: sizes.batchCallers,
            durationSec: seconds,
          }),
        () => pgLoad({ url, clients: sizes.batchCallers, durationSec: seconds, next: () => statements[next++ % statements.length]! }),
      ],
      sizes.rounds,
    );

    const ratio = measured.perSecond / raw.perSecond;
    return [
      {
        case: LABEL,
        figure: rate(measured, 'signals', sizes.batchSize),
        ceiling: `INSERT…unnest ${rate(raw, 'rows', sizes.batchSize)}`,
        ratio,
        target: '≥ 0.50',
        met: ratio >= 0.5,
        details: { signals: measured, rawInsert: raw, inputsPerCall: sizes.batchSize, callers: sizes.batchCallers, rounds: sizes.rounds },
      },
    ];
  },
};
