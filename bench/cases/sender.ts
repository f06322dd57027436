import { randomUUID } from 'node:crypto';
import { Sender } from '@community-layer/sender';
import type { Case } from '../case.js';
import { num } from '../format.js';
import { prepareSignalCase } from '../signal-setup.js';
import { body, SIGNALS, type SignalInputJson } from '../workload.js';

const LABEL = '15. sender library vs a raw signals loop (same batch size)';

/**
 * One caller each, one request at a time, `batchSize` signals per request, fresh event ids in both:
 * the sender library (buffering, outcomes per signal, sendSignals with SKIP) against a hand-written
 * loop posting `signals` and awaiting each answer. Alternating rounds, ratios within one run.
 */
export const sender: Case = {
  labels: [LABEL],
  async run(cluster, sizes) {
    const { app, workload } = await prepareSignalCase(cluster, sizes);
    const seconds = sizes.durationSec / sizes.rounds;
    const batch = (): SignalInputJson[] => Array.from({ length: sizes.batchSize }, () => ({ ...workload.nextSignal(), eventId: randomUUID() }));

    const raw = async (durationSec: number) => {
      let signals = 0;
      const until = performance.now() + durationSec * 1000;
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
      return signals / durationSec;
    };
    const library = async (durationSec: number) => {
      const client = new Sender({ url: app.url, token: cluster.token, maxBatchSize: sizes.batchSize, maxBatchBytes: 10_000_000, maxBufferedSignals: sizes.batchSize * 2 });
      let signals = 0;
      const until = performance.now() + durationSec * 1000;
      while (performance.now() < until) {
        const outcomes = batch().map((signal) => client.send(signal));
        const last = await outcomes[outcomes.length - 1]!;
        if (last.result === 'failed' || last.result === 'invalid') throw new Error(`sender: ${JSON.stringify(last)}`);
        signals += sizes.batchSize;
      }
      await client.close();
      return signals / durationSec;
    };

    await raw(sizes.warmupSec);
    await library(sizes.warmupSec);
    const rates = { raw: [] as number[], library: [] as number[] };
    for (let round = 0; round < sizes.rounds; round++) {
      rates.raw.push(await raw(seconds));
      rates.library.push(await library(seconds));
    }
    const mean = (values: number[]) => values.reduce((sum, value) => sum + value, 0) / values.length;
    const ratio = mean(rates.library) / mean(rates.raw);
    return [
      {
        case: LABEL,
        figure: `${num(mean(rates.library))} signals/s`,
        ceiling: `raw loop ${num(mean(rates.raw))} signals/s`,
        ratio,
        target: '≥ 0.9×',
        met: ratio >= 0.9,
        details: { batchSize: sizes.batchSize, rounds: rates },
      },
    ];
  },
};
