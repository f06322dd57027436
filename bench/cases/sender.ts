import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Sender, type Outcome } from '@community-layer/sender';
import type { Case } from '../case.js';
import { leaveUsers } from '../cluster.js';
import { num } from '../format.js';
import { body, createWorkload, type SignalInputJson } from '../workload.js';

/** The library's one operation (`sendSignals(invalid: SKIP)`, an outcome per signal): the raw loops post it too. */
const SEND_SIGNALS = readFileSync(new URL('../../packages/sender/src/operations.graphql', import.meta.url), 'utf8');

const CONCURRENCY = 4;
const LABELS = [
  '15. sender library vs a raw signals loop (same batch size)',
  `15b. sender library, ${CONCURRENCY} requests in flight, vs ${CONCURRENCY} raw signals loops`,
  `15c. sender library, ${CONCURRENCY} requests in flight vs one`,
] as const;

/**
 * `batchSize` signals per request, fresh event ids in both: the sender library (buffering,
 * outcomes per signal) against hand-written loops posting the same `sendSignals(invalid: SKIP)`
 * operation and awaiting each answer, so that the ratio is the library's own cost. Row 15: one request in flight on each side; row 15b: `CONCURRENCY` on each
 * (the sender's `concurrency` against as many raw loops); row 15c: the library's 15b figure against
 * its 15 figure. Alternating rounds, ratios within one run. The server is a process of its own, as a
 * back-end sender meets it: in the bench's event loop, client and server took turns on one thread
 * and requests in flight could overlap only PostgreSQL's part.
 */
export const sender: Case = {
  labels: [...LABELS],
  async run(cluster, sizes) {
    const url = await cluster.freshDatabase();
    const workload = createWorkload(sizes.workload);
    await leaveUsers(await cluster.sqlClient(url), workload.leftUserIds, []);
    const app = { url: (await cluster.startProcesses(url, 1)).urls[0]! };
    const seconds = sizes.durationSec / sizes.rounds;
    const batch = (): SignalInputJson[] =>
      Array.from({ length: sizes.batchSize }, () => ({ ...workload.nextSignal(), eventId: randomUUID() }));

    const raw = async (durationSec: number, loops: number) => {
      const until = performance.now() + durationSec * 1000;
      const loop = async () => {
        let signals = 0;
        while (performance.now() < until) {
          const response = await fetch(app.url, {
            method: 'POST',
            headers: { 'content-type': 'application/json', authorization: `Bearer ${cluster.token}` },
            body: body(SEND_SIGNALS, { inputs: batch() }),
          });
          const result = (await response.json()) as { errors?: unknown[]; data?: { sendSignals: { items: { signalId?: string }[] } } };
          if (result.errors || result.data?.sendSignals.items.some((item) => !item.signalId))
            throw new Error(`raw loop: ${JSON.stringify(result).slice(0, 200)}`);
          signals += sizes.batchSize;
        }
        return signals;
      };
      const counts = await Promise.all(Array.from({ length: loops }, loop));
      return counts.reduce((sum, count) => sum + count, 0) / durationSec;
    };
    const library = async (durationSec: number, concurrency: number) => {
      const client = new Sender({
        url: app.url,
        token: cluster.token,
        concurrency,
        maxBatchSize: sizes.batchSize,
        maxBatchBytes: 10_000_000,
        maxBufferedSignals: sizes.batchSize * (concurrency + 1),
      });
      let signals = 0;
      const until = performance.now() + durationSec * 1000;
      // Each batch's last outcome. The producer keeps one batch buffered beyond the `concurrency` in flight, as a
      // producer that does not wait on each outcome does: the next batch is built and serialized while one is answered.
      const unanswered: Promise<Outcome>[] = [];
      const settle = async () => {
        const last = await unanswered.shift()!;
        if (last.result === 'failed' || last.result === 'invalid') throw new Error(`sender: ${JSON.stringify(last)}`);
        signals += sizes.batchSize;
      };
      while (performance.now() < until) {
        const outcomes = batch().map((signal) => client.send(signal));
        unanswered.push(outcomes[outcomes.length - 1]!);
        if (unanswered.length > concurrency) await settle();
      }
      while (unanswered.length > 0) await settle();
      await client.close();
      return signals / durationSec;
    };

    const mean = (values: number[]) => values.reduce((sum, value) => sum + value, 0) / values.length;
    const rows = [];
    const libraryRates: number[] = [];
    const rawRates: number[] = [];
    for (const [label, inFlight] of [
      [LABELS[0], 1],
      [LABELS[1], CONCURRENCY],
    ] as const) {
      await raw(sizes.warmupSec, inFlight);
      await library(sizes.warmupSec, inFlight);
      const rates = { raw: [] as number[], library: [] as number[] };
      // This process's CPU over the rounds (the client's; the server is another process), per arm.
      const clientCpu = { raw: { ms: 0, signals: 0 }, library: { ms: 0, signals: 0 } };
      const timed = async (arm: 'raw' | 'library', run: () => Promise<number>) => {
        const before = process.cpuUsage();
        const rate = await run();
        const used = process.cpuUsage(before);
        clientCpu[arm].ms += (used.user + used.system) / 1000;
        clientCpu[arm].signals += rate * seconds;
        return rate;
      };
      const perThousand = (arm: 'raw' | 'library') => (1000 * clientCpu[arm].ms) / clientCpu[arm].signals;
      for (let round = 0; round < sizes.rounds; round++) {
        rates.raw.push(await timed('raw', () => raw(seconds, inFlight)));
        rates.library.push(await timed('library', () => library(seconds, inFlight)));
      }
      const ratio = mean(rates.library) / mean(rates.raw);
      rows.push({
        case: label,
        figure: `${num(mean(rates.library))} signals/s`,
        ceiling: `${inFlight === 1 ? 'raw loop' : `${inFlight} raw loops`} ${num(mean(rates.raw))} signals/s`,
        ratio,
        target: inFlight === 1 ? '≥ 0.95×' : '≥ 0.9×',
        met: ratio >= (inFlight === 1 ? 0.95 : 0.9),
        details: {
          batchSize: sizes.batchSize,
          inFlight,
          rounds: rates,
          clientCpuMsPer1000Signals: { raw: perThousand('raw'), library: perThousand('library') },
        },
      });
      libraryRates.push(mean(rates.library));
      rawRates.push(mean(rates.raw));
    }
    // What concurrency buys: the same library, CONCURRENCY requests in flight against one (issue 39).
    const gain = libraryRates[1]! / libraryRates[0]!;
    rows.push({
      case: LABELS[2],
      figure: `${num(libraryRates[1]!)} signals/s`,
      ceiling: `one in flight ${num(libraryRates[0]!)} signals/s`,
      ratio: gain,
      target: '≥ 1.5×',
      met: gain >= 1.5,
      // What concurrency buys hand-written loops on the same server and machine: the bound the library meets.
      details: { rawLoopsGain: rawRates[1]! / rawRates[0]! },
    });
    return rows;
  },
};
