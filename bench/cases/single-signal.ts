import type { Case } from '../case.js';
import { eventIdCost } from '../event-id-cost.js';
import { rate } from '../format.js';
import { httpLoad, interleave, pgLoad } from '../load.js';
import { singleInsert } from '../raw-signal.js';
import { prepareSignalCase } from '../signal-setup.js';
import { body, SIGNAL, VALIDATE, withEventId } from '../workload.js';

const VS_HTTP = '1. single signal vs no-DB ceiling';
const VS_DB = '1. single signal vs raw pg INSERT';
const EVENT_IDS = '1. single signal: cost of a client eventId';

/**
 * `signal` one per request against the same server answering `validateSignal` with the same
 * variables (HTTP + auth + GraphQL + validation, no database), and against plain single-row
 * INSERTs of the same rows from as many pg clients as there are HTTP connections. And the same
 * signals each with a fresh client eventId: what sending one costs (a signal without one gets an id
 * the batcher generates, so both store and index one).
 */
export const singleSignal: Case = {
  labels: [VS_HTTP, VS_DB, EVENT_IDS],
  async run(cluster, sizes) {
    const { url, app, workload, left } = await prepareSignalCase(cluster, sizes);
    const inputs = Array.from({ length: sizes.bodies }, () => workload.nextSignal());
    const seconds = sizes.durationSec / sizes.rounds;
    const load = (query: string, durationSec: number, eventIds = false) => () =>
      httpLoad({
        url: app.url,
        token: cluster.token,
        bodies: inputs.map((input) => body(query, { input: eventIds ? withEventId(input) : input })),
        connections: sizes.connections,
        durationSec,
        freshEventIds: eventIds,
      });
    let next = 0;
    const rawInsert = () =>
      pgLoad({ url, clients: sizes.connections, durationSec: seconds, next: () => singleInsert(inputs[next++ % inputs.length]!, left) });

    // Every path warm, so no figure pays for the JIT. Warm-up results are not figures: on a busy
    // machine a short warm-up may see no response, and that must not end the case.
    for (const warm of [load(VALIDATE, sizes.warmupSec), load(SIGNAL, sizes.warmupSec), load(SIGNAL, sizes.warmupSec, true)]) await warm();
    const [ceiling, measured, raw, withIds] = await interleave(
      [load(VALIDATE, seconds), load(SIGNAL, seconds), rawInsert, load(SIGNAL, seconds, true)],
      sizes.rounds,
    );

    const vsHttp = measured.perSecond / ceiling.perSecond;
    return [
      {
        case: VS_HTTP,
        figure: rate(measured, 'signals'),
        ceiling: `validateSignal ${rate(ceiling, 'req')}`,
        ratio: vsHttp,
        target: '≥ 0.90',
        met: vsHttp >= 0.9,
        details: { signal: measured, validateSignal: ceiling, connections: sizes.connections, rounds: sizes.rounds },
      },
      {
        case: VS_DB,
        figure: rate(measured, 'signals'),
        ceiling: `INSERT ${rate(raw, 'rows')}`,
        ratio: measured.perSecond / raw.perSecond,
        target: '—',
        met: null,
        details: { rawInsert: raw, clients: sizes.connections },
      },
      eventIdCost(EVENT_IDS, measured, withIds, 1),
    ];
  },
};
