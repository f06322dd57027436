import type { Case } from '../case.js';
import { eventIdCost } from '../event-id-cost.js';
import { ms, num, rate } from '../format.js';
import { httpLoad, interleave, pgLoad, type LoadSample } from '../load.js';
import { ingestCall, multiInsert, sameRowsInsert } from '../raw-signal.js';
import { prepareSignalCase } from '../signal-setup.js';
import { body, SIGNALS, withEventId } from '../workload.js';

const LABEL = '2. batched signals vs raw multi-row INSERT';
const SAME_ROWS = '2. batched signals vs the same rows in one statement';
const CPU = '2. batched signals: server CPU vs database CPU per call';
const EVENT_IDS = '2. batched signals: cost of client eventIds';
const SQL_EVENT_IDS = '2. ingest_signals alone: event ids vs none';
const DISTINCT_BATCHES = 16;

/**
 * `signals` with `batchSize` inputs per call from a few callers, against two ceilings: the same
 * signal rows inserted unnest-style, and every row the service writes for them (signals, cohort
 * ledger, aggregate upserts) in one plain statement with no gate and no locks. During the `signals`
 * runs, the CPU the server (this process: the app shares the bench's loop, the load generator does
 * not) and PostgreSQL's sessions each spent per call (background work, such as autovacuum after the
 * ceilings' inserts, is in the details). Also the same calls with a fresh client eventId per signal;
 * and `ingest_signals` called directly with and without event ids. Through the service a signal
 * without a client eventId still gets one the batcher generates, so the direct calls are what
 * idempotency costs the database against storing signals without any id.
 */
export const batched: Case = {
  labels: [LABEL, SAME_ROWS, CPU, EVENT_IDS, SQL_EVENT_IDS],
  async run(cluster, sizes) {
    const { url, app, workload, left } = await prepareSignalCase(cluster, sizes);
    const batches = Array.from({ length: DISTINCT_BATCHES }, () => Array.from({ length: sizes.batchSize }, () => workload.nextSignal()));
    const statements = batches.map((inputs) => multiInsert(inputs, left));
    const seconds = sizes.durationSec / sizes.rounds;
    let next = 0;
    const signals =
      (eventIds: boolean, durationSec = seconds) =>
      () =>
        httpLoad({
          url: app.url,
          token: cluster.token,
          bodies: batches.map((inputs) => body(SIGNALS, { inputs: eventIds ? inputs.map(withEventId) : inputs })),
          connections: sizes.batchCallers,
          durationSec,
          freshEventIds: eventIds,
        });
    const ingest = (eventIds: boolean) => () =>
      pgLoad({
        url,
        clients: sizes.batchCallers,
        durationSec: seconds,
        next: () => ingestCall(batches[next++ % batches.length]!, left, eventIds),
      });

    // Both service paths warm, so neither pays for the JIT (warm-up results are not figures).
    for (const warm of [signals(false, sizes.warmupSec), signals(true, sizes.warmupSec)]) await warm();
    const cpu = { serverSec: 0, databaseSec: 0, databaseBackgroundSec: 0, calls: 0 };
    const metered = (arm: () => Promise<LoadSample>) => async () => {
      const [server, database] = [process.cpuUsage(), cluster.databaseCpuSeconds()];
      const sample = await arm();
      const used = process.cpuUsage(server);
      cpu.serverSec += (used.user + used.system) / 1e6;
      const databaseAfter = cluster.databaseCpuSeconds();
      cpu.databaseSec += databaseAfter.clients - database.clients;
      cpu.databaseBackgroundSec += databaseAfter.total - databaseAfter.clients - (database.total - database.clients);
      cpu.calls += sample.requests;
      return sample;
    };
    const [measured, raw, sameRows, withIds, ingestWithout, ingestWith] = await interleave(
      [
        metered(signals(false)),
        () => pgLoad({ url, clients: sizes.batchCallers, durationSec: seconds, next: () => statements[next++ % statements.length]! }),
        () =>
          pgLoad({
            url,
            clients: sizes.batchCallers,
            durationSec: seconds,
            next: () => sameRowsInsert(batches[next++ % batches.length]!, left),
          }),
        signals(true),
        ingest(false),
        ingest(true),
      ],
      sizes.rounds,
    );

    const ratio = measured.perSecond / raw.perSecond;
    const sameRowsRatio = measured.perSecond / sameRows.perSecond;
    const [serverMs, databaseMs] = [(cpu.serverSec * 1000) / cpu.calls, (cpu.databaseSec * 1000) / cpu.calls];
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
      {
        case: SAME_ROWS,
        figure: rate(measured, 'signals', sizes.batchSize),
        ceiling: `same rows, one statement ${rate(sameRows, 'signals', sizes.batchSize)}`,
        ratio: sameRowsRatio,
        // Issue 40's target.
        target: '≥ 0.90',
        met: sameRowsRatio >= 0.9,
        details: { sameRows },
      },
      {
        case: CPU,
        figure: `server ${ms(serverMs)} CPU per ${num(sizes.batchSize)}-signal call`,
        ceiling: `PostgreSQL sessions ${ms(databaseMs)} CPU per call`,
        ratio: serverMs / databaseMs,
        target: '≤ 0.40',
        met: serverMs / databaseMs <= 0.4,
        details: {
          ...cpu,
          serverMsPerCall: serverMs,
          databaseMsPerCall: databaseMs,
          ingestWithEventIdsMeanMs: 1000 / (ingestWith.perSecond / sizes.batchCallers),
        },
      },
      eventIdCost(EVENT_IDS, measured, withIds, sizes.batchSize),
      eventIdCost(SQL_EVENT_IDS, ingestWithout, ingestWith, sizes.batchSize),
    ];
  },
};
