import type { Case } from '../case.js';
import { eventIdCost } from '../event-id-cost.js';
import { rate } from '../format.js';
import { httpLoad, interleave, pgLoad } from '../load.js';
import { ingestCall, multiInsert } from '../raw-signal.js';
import { prepareSignalCase } from '../signal-setup.js';
import { body, SIGNALS, withEventId } from '../workload.js';

const LABEL = '2. batched signals vs raw multi-row INSERT';
const EVENT_IDS = '2. batched signals: cost of client eventIds';
const SQL_EVENT_IDS = '2. ingest_signals alone: event ids vs none';
const DISTINCT_BATCHES = 16;

/**
 * `signals` with `batchSize` inputs per call from a few callers, against the same rows inserted
 * unnest-style; the same calls with a fresh client eventId per signal; and `ingest_signals` called
 * directly with and without event ids. Through the service a signal without a client eventId still
 * gets one the batcher generates, so the direct calls are what idempotency costs the database
 * against storing signals without any id.
 */
export const batched: Case = {
  labels: [LABEL, EVENT_IDS, SQL_EVENT_IDS],
  async run(cluster, sizes) {
    const { url, app, workload, left } = await prepareSignalCase(cluster, sizes);
    const batches = Array.from({ length: DISTINCT_BATCHES }, () => Array.from({ length: sizes.batchSize }, () => workload.nextSignal()));
    const statements = batches.map((inputs) => multiInsert(inputs, left));
    const seconds = sizes.durationSec / sizes.rounds;
    let next = 0;
    const signals = (eventIds: boolean, durationSec = seconds) => () =>
      httpLoad({
        url: app.url,
        token: cluster.token,
        bodies: batches.map((inputs) => body(SIGNALS, { inputs: eventIds ? inputs.map(withEventId) : inputs })),
        connections: sizes.batchCallers,
        durationSec,
        freshEventIds: eventIds,
      });
    const ingest = (eventIds: boolean) => () =>
      pgLoad({ url, clients: sizes.batchCallers, durationSec: seconds, next: () => ingestCall(batches[next++ % batches.length]!, left, eventIds) });

    // Both service paths warm, so neither pays for the JIT (warm-up results are not figures).
    for (const warm of [signals(false, sizes.warmupSec), signals(true, sizes.warmupSec)]) await warm();
    const [measured, raw, withIds, ingestWithout, ingestWith] = await interleave(
      [
        signals(false),
        () => pgLoad({ url, clients: sizes.batchCallers, durationSec: seconds, next: () => statements[next++ % statements.length]! }),
        signals(true),
        ingest(false),
        ingest(true),
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
      eventIdCost(EVENT_IDS, measured, withIds, sizes.batchSize),
      eventIdCost(SQL_EVENT_IDS, ingestWithout, ingestWith, sizes.batchSize),
    ];
  },
};
