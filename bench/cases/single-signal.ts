import { bareYogaEcho } from '../bare-yoga.js';
import type { Case } from '../case.js';
import { eventIdCost } from '../event-id-cost.js';
import { num, rate } from '../format.js';
import { cpuPerRequest, layerCosts, REQUEST_LAYERS, withoutRequestLayers } from '../layer-costs.js';
import { httpLoad, interleave, pgLoad } from '../load.js';
import { singleInsert } from '../raw-signal.js';
import { secondServer } from '../second-server.js';
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
    const load =
      (query: string, durationSec: number, eventIds = false, url = app.url) =>
      () =>
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
    const warmups = [
      load(VALIDATE, sizes.warmupSec),
      load(SIGNAL, sizes.warmupSec),
      load(SIGNAL, sizes.warmupSec, true),
      load(SIGNAL, sizes.warmupSec, false, echo.url),
    ];
    for (const warm of warmups) await warm();
    const [ceiling, measured, raw, withIds, bare] = await interleave(
      [load(VALIDATE, seconds), load(SIGNAL, seconds), rawInsert, load(SIGNAL, seconds, true), load(SIGNAL, seconds, false, echo.url)],
      sizes.rounds,
    ).catch(async (error: unknown) => {
      await echo.close();
      throw error;
    });
    const vsEcho = measured.perSecond / bare.perSecond;

    // Server CPU per request, alternating: the echo, the app without the database, the app, and a
    // second server over the app with every request layer left out (their price together); then
    // one profile of the app splits its CPU by part.
    const cpuLoad = {
      token: cluster.token,
      bodies: inputs.map((input) => body(SIGNAL, { input })),
      connections: sizes.connections,
      durationSec: Math.max(1, seconds / 2),
    };
    const layerless = await secondServer(app, withoutRequestLayers);
    const cpu = { echo: [] as number[], validate: [] as number[], app: [] as number[], noLayers: [] as number[] };
    try {
      await httpLoad({ ...cpuLoad, url: layerless.url, durationSec: sizes.warmupSec });
      for (let round = 0; round < sizes.rounds; round++) {
        cpu.echo.push(await cpuPerRequest(echo, cpuLoad));
        cpu.validate.push(await cpuPerRequest(app, { ...cpuLoad, bodies: inputs.map((input) => body(VALIDATE, { input })) }));
        cpu.app.push(await cpuPerRequest(app, cpuLoad));
        cpu.noLayers.push(await cpuPerRequest(layerless, cpuLoad));
      }
    } finally {
      await Promise.all([echo.close(), layerless.close()]);
    }
    const [echoCpu, validateCpu, appCpu, noLayersCpu] = [cpu.echo, cpu.validate, cpu.app, cpu.noLayers].map(mean) as [
      number,
      number,
      number,
      number,
    ];
    const layers = await layerCosts(app, cpuLoad, appCpu);
    const costliest = Object.entries(layers.partUs)
      .filter(([part]) => (REQUEST_LAYERS as readonly string[]).includes(part))
      .slice(0, 3);

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
        figure: `${num(appCpu)} µs (no database: ${num(validateCpu)} µs; no request layers: ${num(noLayersCpu)} µs); costliest layers ${costliest.map(([layer, us]) => `${layer} ${num(us)} µs`).join(', ')}`,
        ceiling: `bare Yoga echo ${num(echoCpu)} µs`,
        ratio: echoCpu / appCpu,
        target: '≥ 0.90',
        met: echoCpu / appCpu >= 0.9,
        details: {
          cpuUsPerRequest: { app: cpu.app, validateSignal: cpu.validate, withoutRequestLayers: cpu.noLayers, bareYogaEcho: cpu.echo },
          partUs: layers.partUs,
          profileSamples: layers.samples,
        },
      },
    ];
  },
};

function mean(values: number[]): number {
  return values.reduce((sum, value) => sum + value, 0) / values.length;
}
