import { randomUUID } from 'node:crypto';
import { Sender, type Outcome } from '@community-layer/sender';
import type { Case } from '../case.js';
import { num } from '../format.js';
import { prepareSignalCase } from '../signal-setup.js';
import { body, SIGNALS, type SignalInputJson } from '../workload.js';

const CONCURRENCY = 4;
const LABELS = [
  '15. sender library vs a raw signals loop (same batch size)',
  `15b. sender library, ${CONCURRENCY} requests in flight, vs ${CONCURRENCY} raw signals loops`,
  `15c. sender library, ${CONCURRENCY} requests in flight vs one`,
] as const;

/**
 * `batchSize` signals per request, fresh event ids in both: the sender library (buffering,
 * outcomes per signal, sendSignals with SKIP) against hand-written loops posting `signals` and
 * awaiting each answer. Row 15: one request in flight on each side; row 15b: `CONCURRENCY` on each
 * (the sender's `concurrency` against as many raw loops); row 15c: the library's 15b figure against
 * its 15 figure. Alternating rounds, ratios within one run.
 */
export const sender: Case = {
  labels: [...LABELS],
  async run(cluster, sizes) {
    const { app, workload } = await prepareSignalCase(cluster, sizes);
    const seconds = sizes.durationSec / sizes.rounds;
    const batch = (): SignalInputJson[] => Array.from({ length: sizes.batchSize }, () => ({ ...workload.nextSignal(), eventId: randomUUID() }));

    const raw = async (durationSec: number, loops: number) => {
      const until = performance.now() + durationSec * 1000;
      const loop = async () => {
        let signals = 0;
        while (performance.now() < until) {
          const response = await fetch(app.url, {
            method: 'POST',
            headers: { 'content-type': 'application/json', authorization: `Bearer ${cluster.token}` },
            body: body(SIGNALS, { inputs: batch() }),
          });
          const result = (await response.json()) as { errors?: unknown[] };
          if (result.errors) throw new Error(`raw loop: ${JSON.stringify(result.errors).slice(0, 200)}`);
          signals += sizes.batchSize;
        }
        return signals;
      };
      const counts = await Promise.all(Array.from({ length: loops }, loop));
      return counts.reduce((sum, count) => sum + count, 0) / durationSec;
    };
    const library = async (durationSec: number, concurrency: number) => {
      const client = new Sender({ url: app.url, token: cluster.token, concurrency, maxBatchSize: sizes.batchSize, maxBatchBytes: 10_000_000, maxBufferedSignals: sizes.batchSize * (concurrency + 1) });
      let signals = 0;
      const until = performance.now() + durationSec * 1000;
      // Each batch's last outcome; a new batch goes when fewer than `concurrency` are unanswered.
      const unanswered: Promise<Outcome>[] = [];
      const settle = async () => {
        const last = await unanswered.shift()!;
        if (last.result === 'failed' || last.result === 'invalid') throw new Error(`sender: ${JSON.stringify(last)}`);
        signals += sizes.batchSize;
      };
      while (performance.now() < until) {
        const outcomes = batch().map((signal) => client.send(signal));
        unanswered.push(outcomes[outcomes.length - 1]!);
        if (unanswered.length >= concurrency) await settle();
      }
      while (unanswered.length > 0) await settle();
      await client.close();
      return signals / durationSec;
    };

    const mean = (values: number[]) => values.reduce((sum, value) => sum + value, 0) / values.length;
    const rows = [];
    const libraryRates: number[] = [];
    for (const [label, inFlight] of [[LABELS[0], 1], [LABELS[1], CONCURRENCY]] as const) {
      await raw(sizes.warmupSec, inFlight);
      await library(sizes.warmupSec, inFlight);
      const rates = { raw: [] as number[], library: [] as number[] };
      for (let round = 0; round < sizes.rounds; round++) {
        rates.raw.push(await raw(seconds, inFlight));
        rates.library.push(await library(seconds, inFlight));
      }
      const ratio = mean(rates.library) / mean(rates.raw);
      rows.push({
        case: label,
        figure: `${num(mean(rates.library))} signals/s`,
        ceiling: `${inFlight === 1 ? 'raw loop' : `${inFlight} raw loops`} ${num(mean(rates.raw))} signals/s`,
        ratio,
        target: inFlight === 1 ? '≥ 0.95×' : '≥ 0.9×',
        met: ratio >= (inFlight === 1 ? 0.95 : 0.9),
        details: { batchSize: sizes.batchSize, inFlight, rounds: rates },
      });
      libraryRates.push(mean(rates.library));
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
    });
    return rows;
  },
};
