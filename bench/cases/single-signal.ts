import { bareYogaEcho } from '../bare-yoga.js';
import type { Case } from '../case.js';
import { eventIdCost } from '../event-id-cost.js';
import { rate } from '../format.js';
import { httpLoad, interleave, pgLoad } from '../load.js';
import { singleInsert } from '../raw-signal.js';
import { prepareSignalCase } from '../signal-setup.js';
import { body, SIGNAL, VALIDATE, withEventId } from '../workload.js';

const VS_HTTP = '1. single signal vs no-DB ceiling';
const VS_DB = '1. single signal vs raw pg INSERT';
const VS_ECHO = '1. single signal vs bare Yoga echo';
const EVENT_IDS = '1. single signal: cost of a client eventId';

/**
 * `signal` one per request against the same server answering `validateSignal` with the same
 * variables (HTTP + auth + GraphQL + validation, no database), against a bare Yoga server echoing
 * the same operation and variables (the framework alone), and against plain single-row
 * INSERTs of the same rows from as many pg clients as there are HTTP connections. And the same
 * signals each with a fresh client eventId: what sending one costs (a signal without one gets an id
 * the batcher generates, so both store and index one).
 */
export const singleSignal: Case = {
  labels: [VS_HTTP, VS_DB, VS_ECHO, EVENT_IDS],
  async run(cluster, sizes) {
    const { url, app, workload, left } = await prepareSignalCase(cluster, sizes);
    const inputs = Array.from({ length: sizes.bodies }, () => workload.nextSignal());
    const seconds = sizes.durationSec / sizes.rounds;
    const echo = await bareYogaEcho();
    const load = (query: string, durationSec: number, eventIds = false, url = app.url) => () =>
      httpLoad({
        url,
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
    const warmups = [load(VALIDATE, sizes.warmupSec), load(SIGNAL, sizes.warmupSec), load(SIGNAL, sizes.warmupSec, true), load(SIGNAL, sizes.warmupSec, false, echo.url)];
    for (const warm of warmups) await warm();
    const [ceiling, measured, raw, withIds, bare] = await interleave(
      [load(VALIDATE, seconds), load(SIGNAL, seconds), rawInsert, load(SIGNAL, seconds, true), load(SIGNAL, seconds, false, echo.url)],
      sizes.rounds,
    ).finally(() => echo.close());
    const vsEcho = measured.perSecond / bare.perSecond;

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
      {
        case: VS_ECHO,
        figure: rate(measured, 'signals'),
        ceiling: `bare Yoga echo ${rate(bare, 'req')}`,
        ratio: vsEcho,
        target: '—',
        met: null,
        details: { bareYogaEcho: bare },
      },
      eventIdCost(EVENT_IDS, measured, withIds, 1),
    ];
  },
};
