import { monitorEventLoopDelay } from 'node:perf_hooks';
import type { Case } from '../case.js';
import { ms, num } from '../format.js';
import { exposeGc, settle } from '../memory.js';
import { httpLoad, interleave } from '../load.js';
import { openLoop } from '../open-loop.js';
import { prepareSignalCase } from '../signal-setup.js';
import { summarize } from '../stats.js';
import { body, SIGNALS } from '../workload.js';

const STATUS = '7. overload: status p99 at 5× capacity vs at rest';
const SHED = '7. overload: shed-request p99';
const RSS = '7. overload: RSS after vs before';
const LOST = '7. overload: acknowledged signals lost';
const LOOP = '7. overload: server event-loop delay p99';
const BATCH = 100;
const DISTINCT_BATCHES = 16;
const CALLERS = 8;

/**
 * 100-signal batches at five times the measured capacity, open loop (requests leave on schedule,
 * answered or not), with a status reader beside them: what shedding costs the users who are not
 * sending the flood, how fast a refusal is, whether memory comes back, and whether anything that
 * was acknowledged went missing.
 */
export const overload: Case = {
  labels: [STATUS, SHED, RSS, LOST, LOOP],
  async run(cluster, sizes) {
    const { app, db, workload } = await prepareSignalCase(cluster, sizes);
    const bodies = Array.from({ length: DISTINCT_BATCHES }, () =>
      body(SIGNALS, { inputs: Array.from({ length: BATCH }, () => workload.nextSignal()) }),
    );
    const probeBody = body(`query ($userId: UInt64) { communityLayerStatus(userId: $userId) { status } }`, { userId: workload.userIds[0] });
    const seconds = sizes.durationSec / sizes.rounds;

    const [capacity] = await interleave(
      [() => httpLoad({ url: app.url, token: cluster.token, bodies, connections: CALLERS, durationSec: seconds })],
      1,
    );
    const rest = await openLoop({
      url: app.url,
      token: cluster.token,
      bodies,
      ratePerSec: 0,
      durationSec: seconds,
      timeoutMs: 10_000,
      probeBody,
    });
    const gc = exposeGc();
    const rssBefore = settle(gc).rss;
    const ratePerSec = Math.ceil(capacity.perSecond * 5);
    const loopDelay = monitorEventLoopDelay({ resolution: 10 });
    loopDelay.enable();
    const flood = await openLoop({
      url: app.url,
      token: cluster.token,
      bodies,
      ratePerSec,
      durationSec: sizes.overloadSec,
      timeoutMs: 10_000,
      probeBody,
    });
    loopDelay.disable();
    await app.services.signals.drained();
    const rssAfter = settle(gc).rss;

    const { rows } = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM signal WHERE id = ANY($1::bigint[])', [
      flood.acknowledgedIds,
    ]);
    const lost = flood.acknowledgedIds.length - rows[0]!.n;
    const probeRest = summarize(rest.probeMs);
    const probeFlood = summarize(flood.probeMs);
    const shed = summarize(flood.shedMs);
    const statusRatio = probeFlood.p99 / probeRest.p99;
    const rssRatio = rssAfter / rssBefore;
    const details = {
      capacityRequestsPerSec: capacity.perSecond,
      offeredRequestsPerSec: ratePerSec,
      sent: flood.sent,
      acknowledged: flood.okMs.length,
      shed: flood.shedMs.length,
      failures: flood.failures,
      firstFailure: flood.firstFailure,
      okP99Ms: summarize(flood.okMs).p99,
      serverLoopDelayP99Ms: loopDelay.percentile(99) / 1e6,
      serverLoopDelayMaxMs: loopDelay.max / 1e6,
      bodyBytes: Buffer.byteLength(bodies[0]!),
    };
    return [
      {
        case: STATUS,
        figure: `p99 ${ms(probeFlood.p99)} (p50 ${ms(probeFlood.p50)}), ${num(flood.probeFailures)} of ${num(probeFlood.n)} not answered, at ${num(ratePerSec)} req/s of ${BATCH} signals`,
        ceiling: `at rest p99 ${ms(probeRest.p99)} (p50 ${ms(probeRest.p50)}); capacity ${num(capacity.perSecond)} req/s`,
        ratio: statusRatio,
        target: '≤ 4, none refused',
        met: statusRatio <= 4 && flood.probeFailures === 0,
        details,
      },
      {
        case: SHED,
        figure: `p99 ${ms(shed.p99)} (p50 ${ms(shed.p50)}) over ${num(shed.n)} refusals`,
        ceiling: '—',
        ratio: null,
        target: '≤ 10 ms',
        met: shed.n > 0 && shed.p99 <= 10,
      },
      {
        case: RSS,
        figure: `${num(rssAfter / 2 ** 20)} MiB after`,
        ceiling: `${num(rssBefore / 2 ** 20)} MiB before`,
        ratio: rssRatio,
        target: '≤ 1.2',
        met: rssRatio <= 1.2,
      },
      {
        case: LOST,
        figure: `${num(lost)} of ${num(flood.acknowledgedIds.length)} acknowledged signals missing (${num(flood.failures)} other failures)`,
        ceiling: '—',
        ratio: null,
        target: '0',
        met: lost === 0 && flood.failures === 0,
      },
      {
        // What bounds the refusal: it is made on headers, but waits for the turn in progress.
        case: LOOP,
        figure: `p99 ${ms(details.serverLoopDelayP99Ms)} (max ${ms(details.serverLoopDelayMaxMs)}) during the flood`,
        ceiling: '—',
        ratio: null,
        target: '≤ 5 ms',
        met: details.serverLoopDelayP99Ms <= 5,
      },
    ];
  },
};
