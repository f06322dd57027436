import { EnvelopArmorPlugin } from '@escape.tech/graphql-armor';
import { parse } from 'graphql';
import { createCostMemo, measureOperation } from '../../src/graphql/limits/cost-model.js';
import type { OperationLimits } from '../../src/graphql/limits/operation-limits.js';
import { schema } from '../../src/api/schema.js';
import type { Case } from '../case.js';
import { num, rate } from '../format.js';
import { httpLoad, interleave } from '../load.js';
import { replacePlugin, secondServer } from '../second-server.js';
import { prepareSignalCase } from '../signal-setup.js';
import { body, SIGNAL, SIGNALS } from '../workload.js';

const LABEL = '11. signal: cost model vs previous limits';

/**
 * `signal` one per request on two servers of the same instance: the app's own with the cost model
 * (variables, list sizes, the per-request write budget), and a second one with the limits it
 * replaced (GraphQL Armor: depth, aliases, tokens, directives and a literal-only cost, which Yoga's
 * validation cache made free after the first request). Rounds alternate. The details add the
 * in-process time of one cost measurement, for `signal` and for a 1000-input `signals`.
 */
export const costModel: Case = {
  labels: [LABEL],
  async run(cluster, sizes) {
    const { app, workload } = await prepareSignalCase(cluster, sizes);
    const limits = app.transportOptions.config.graphql;
    const previous = await secondServer(app, (pipeline) => ({
      ...pipeline,
      plugins: replacePlugin(pipeline.plugins, 'operationLimits', previousLimits(limits)),
    }));
    const inputs = Array.from({ length: sizes.bodies }, () => workload.nextSignal());
    const bodies = inputs.map((input) => body(SIGNAL, { input }));
    const seconds = sizes.durationSec / sizes.rounds;
    const load = (target: { url: string }, durationSec: number) => () =>
      httpLoad({ url: target.url, token: cluster.token, bodies, connections: sizes.connections, durationSec });

    const measure = async () => {
      await interleave([load(previous, sizes.warmupSec), load(app, sizes.warmupSec)], 1);
      return interleave([load(previous, seconds), load(app, seconds)], sizes.rounds);
    };
    const [before, now] = await measure().finally(() => previous.close());

    const single = microseconds(SIGNAL, { input: inputs[0] });
    const batch = microseconds(SIGNALS, { inputs: inputs.slice(0, 1000) });
    const ratio = now.perSecond / before.perSecond;
    return [
      {
        case: LABEL,
        figure: `cost model ${rate(now, 'signals')}; measuring one signal ${num(single, 1)} µs`,
        ceiling: `previous limits ${rate(before, 'signals')}`,
        ratio,
        target: '≥ 0.95',
        met: ratio >= 0.95,
        details: { costModel: now, previousLimits: before, measureSignalUs: single, measureSignals1000Us: batch, rounds: sizes.rounds },
      },
    ];
  },
};

/** The limits as they were configured before the cost model (src/server/yoga.ts at the parent commit). */
function previousLimits(limits: Pick<OperationLimits, 'maxDepth' | 'maxAliases' | 'maxTokens' | 'maxCost'>) {
  return EnvelopArmorPlugin({
    maxDepth: { n: limits.maxDepth },
    maxAliases: { n: limits.maxAliases },
    maxTokens: { n: limits.maxTokens },
    maxDirectives: { n: 20 },
    costLimit: { maxCost: limits.maxCost },
    blockFieldSuggestion: { enabled: false },
  });
}

/** Median µs of one `measureOperation` (variables coerced, every field costed), after a warm-up. */
function microseconds(query: string, variables: Record<string, unknown>): number {
  const document = parse(query);
  const memo = createCostMemo(); // as an app's operation limits keep one
  const times: number[] = [];
  for (let i = 0; i < 2_000; i++) {
    const started = process.hrtime.bigint();
    if (!measureOperation(schema, document, null, variables, memo)) throw new Error('the operation did not measure');
    if (i >= 200) times.push(Number(process.hrtime.bigint() - started) / 1000);
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)]!;
}
