import { bareYogaEcho } from '../bare-yoga.js';
import type { Case } from '../case.js';
import { eventIdCost } from '../event-id-cost.js';
import { num, rate } from '../format.js';
import { cpuPerRequest, layerCosts } from '../layer-costs.js';
import { httpLoad, interleave, pgLoad } from '../load.js';
import { singleInsert } from '../raw-signal.js';
import { prepareSignalCase } from '../signal-setup.js';
import { body, SIGNAL, VALIDATE, withEventId } from '../workload.js';

const VS_HTTP = '1. single signal vs no-DB ceiling';
const VS_DB = '1. single signal vs raw pg INSERT';
const VS_ECHO = '1. single signal vs bare Yoga echo';
const EVENT_IDS = '1. single signal: cost of a client eventId';
const CPU = '18. single signal: server CPU per request vs bare Yoga echo';

/**
 * `signal` one per request against the same server answering `validateSignal` with the same
 * variables (HTTP + auth + GraphQL + validation, no database), against a bare Yoga server echoing
 * the same operation and variables (the framework alone), and against plain single-row
 * INSERTs of the same rows from as many pg clients as there are HTTP connections. And the same
 * signals each with a fresh client eventId: what sending one costs (a signal without one gets an id
 * the batcher generates, so both store and index one).
 */
export const singleSignal: Case = {
  labels: [VS_HTTP, VS_DB, VS_ECHO, EVENT_IDS, CPU],
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
    ).catch(async (error: unknown) => {
      await echo.close();
      throw error;
    });
    const vsEcho = measured.perSecond / bare.perSecond;

    // Server CPU per request, the app's apart from the echo's, then the app without each layer in turn.
    const cpuLoad = { token: cluster.token, bodies: inputs.map((input) => body(SIGNAL, { input })), connections: sizes.connections, durationSec: seconds };
    const echoCpu = await cpuPerRequest(echo, cpuLoad).finally(() => echo.close());
    const validateCpu = await cpuPerRequest(app, { ...cpuLoad, bodies: inputs.map((input) => body(VALIDATE, { input })) });
    await cluster.stopApp(app);
    // 27 apps in turn: each gets half an arm's time, so the breakdown stays a fraction of the case.
    const layers = await layerCosts(cluster, url, { ...cpuLoad, durationSec: Math.max(1, seconds / 2) }, sizes.warmupSec);
    const appCpu = layers.cpuUsPerRequest.all;
    const costliest = Object.entries(layers.layerUs).sort((a, b) => b[1] - a[1]).slice(0, 3);

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
        target: '≥ 0.90',
        met: vsEcho >= 0.9,
        details: { bareYogaEcho: bare },
      },
      eventIdCost(EVENT_IDS, measured, withIds, 1),
      {
        case: CPU,
        figure: `${num(appCpu)} µs (no database: ${num(validateCpu)} µs); costliest layers ${costliest.map(([layer, us]) => `${layer} ${num(us)} µs`).join(', ')}`,
        ceiling: `bare Yoga echo ${num(echoCpu)} µs`,
        ratio: echoCpu / appCpu,
        target: '≥ 0.90',
        met: echoCpu / appCpu >= 0.9,
        details: { cpuUsPerRequest: { ...layers.cpuUsPerRequest, validateSignal: validateCpu, bareYogaEcho: echoCpu }, layerUs: layers.layerUs },
      },
    ];
  },
};
