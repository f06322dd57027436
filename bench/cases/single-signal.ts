import type { Case } from '../case.js';
import { rate } from '../format.js';
import { httpLoad, interleave, pgLoad } from '../load.js';
import { singleInsert } from '../raw-signal.js';
import { prepareSignalCase } from '../signal-setup.js';
import { body, SIGNAL, VALIDATE } from '../workload.js';

const VS_HTTP = '1. single signal vs no-DB ceiling';
const VS_DB = '1. single signal vs raw pg INSERT';

/**
 * `signal` one per request against the same server answering `validateSignal` with the same
 * variables (HTTP + auth + GraphQL + validation, no database), and against plain single-row
 * INSERTs of the same rows from as many pg clients as there are HTTP connections.
 */
export const singleSignal: Case = {
  labels: [VS_HTTP, VS_DB],
  async run(cluster, sizes) {
    const { url, app, workload, left } = await prepareSignalCase(cluster, sizes);
    const inputs = Array.from({ length: sizes.bodies }, () => workload.nextSignal());
    const seconds = sizes.durationSec / sizes.rounds;
    const load = (query: string, durationSec: number) => () =>
      httpLoad({
        url: app.url,
        token: cluster.token,
        bodies: inputs.map((input) => body(query, { input })),
        connections: sizes.connections,
        durationSec,
      });
    let next = 0;
    const rawInsert = () =>
      pgLoad({ url, clients: sizes.connections, durationSec: seconds, next: () => singleInsert(inputs[next++ % inputs.length]!, left) });

    // Both paths warm, so neither figure pays for the JIT.
    await interleave([load(VALIDATE, sizes.warmupSec), load(SIGNAL, sizes.warmupSec)], 1);
    const [ceiling, measured, raw] = await interleave([load(VALIDATE, seconds), load(SIGNAL, seconds), rawInsert], sizes.rounds);

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
    ];
  },
};
