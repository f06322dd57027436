import type { Case } from '../case.js';
import { ms, num } from '../format.js';
import { startHostile } from '../hostile.js';
import { httpLoad, interleave } from '../load.js';
import { openLoop } from '../open-loop.js';
import { prepareSignalCase } from '../signal-setup.js';
import { summarize } from '../stats.js';
import { body, SIGNALS } from '../workload.js';

const THROUGHPUT = '12. hostile: legitimate batches answered, under trickles + WebSocket flood vs at rest';
const STATUS = '12. hostile: status p99 under trickles + WebSocket flood vs at rest';
const BATCH = 100;
const DISTINCT_BATCHES = 16;
const CALLERS = 4;
/** The legitimate load, as a share of the batch capacity measured first: room to spare at rest. */
const LOAD_SHARE = 0.5;

/**
 * Issue 25's attack with a valid token of its own: 32 sockets that announce a 60 kB body and send
 * a byte a second (each cut one reconnects), and 8 graphql-ws sockets keeping 4 mutations of 1,000
 * signals each in flight. Beside it, the same open-loop load of legitimate 100-signal batches and
 * the same status reader as at rest, in the same run: what the attack costs the others.
 */
export const hostile: Case = {
  labels: [THROUGHPUT, STATUS],
  async run(cluster, sizes) {
    const { app, workload } = await prepareSignalCase(cluster, sizes);
    const bodies = Array.from({ length: DISTINCT_BATCHES }, () =>
      body(SIGNALS, { inputs: Array.from({ length: BATCH }, () => workload.nextSignal()) }),
    );
    const probeBody = body(`query ($userId: UInt64) { communityLayerStatus(userId: $userId) { status } }`, { userId: workload.userIds[0] });
    const seconds = sizes.durationSec;
    const [capacity] = await interleave(
      [() => httpLoad({ url: app.url, token: cluster.token, bodies, connections: CALLERS, durationSec: seconds })],
      1,
    );
    const ratePerSec = Math.max(1, Math.floor(capacity.perSecond * LOAD_SHARE));
    const legitimate = () =>
      openLoop({ url: app.url, token: cluster.token, bodies, ratePerSec, durationSec: seconds, timeoutMs: 10_000, probeBody });

    const rest = await legitimate();
    const attackerToken = await cluster.tokenFor('666', 'signals:write');
    const flood = { query: SIGNALS, variables: { inputs: Array.from({ length: 1000 }, () => workload.nextSignal()) } };
    const attack = startHostile({
      url: app.url,
      token: attackerToken,
      trickles: 32,
      trickleContentLength: 60_000,
      floodSockets: 8,
      floodInFlight: 4,
      floodBody: flood,
    });
    // The trickles connect and the flood starts before the legitimate load is measured.
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const underAttack = await legitimate();
    const attacked = await attack.stop();

    const throughputRatio = underAttack.okMs.length / Math.max(1, rest.okMs.length);
    const probeRest = summarize(rest.probeMs);
    const probeAttack = summarize(underAttack.probeMs);
    const statusRatio = probeAttack.p99 / probeRest.p99;
    const details = {
      capacityRequestsPerSec: capacity.perSecond,
      offeredRequestsPerSec: ratePerSec,
      rest: { sent: rest.sent, ok: rest.okMs.length, shed: rest.shedMs.length, failures: rest.failures },
      underAttack: {
        sent: underAttack.sent,
        ok: underAttack.okMs.length,
        shed: underAttack.shedMs.length,
        failures: underAttack.failures,
        firstFailure: underAttack.firstFailure,
      },
      attack: attacked,
    };
    return [
      {
        case: THROUGHPUT,
        figure: `${num(underAttack.okMs.length)} of ${num(underAttack.sent)} answered (${num(underAttack.shedMs.length)} shed) at ${num(ratePerSec)} req/s of ${BATCH}; attack: ${num(attacked.tricklesEnded)} trickles cut (${num(attacked.tricklesRefused)} refused at once), WebSocket ${num(attacked.floodOverloaded)} OVERLOADED / ${num(attacked.floodAdmitted)} admitted`,
        ceiling: `at rest ${num(rest.okMs.length)} of ${num(rest.sent)} answered; capacity ${num(capacity.perSecond)} req/s`,
        ratio: throughputRatio,
        target: '≥ 0.8',
        met: throughputRatio >= 0.8,
        details,
      },
      {
        case: STATUS,
        figure: `p99 ${ms(probeAttack.p99)} (p50 ${ms(probeAttack.p50)}), ${num(underAttack.probeFailures)} of ${num(probeAttack.n)} not answered`,
        ceiling: `at rest p99 ${ms(probeRest.p99)} (p50 ${ms(probeRest.p50)})`,
        ratio: statusRatio,
        target: '≤ 3, none refused',
        met: statusRatio <= 3 && underAttack.probeFailures === 0,
      },
    ];
  },
};
