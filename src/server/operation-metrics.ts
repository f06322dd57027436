import { getOperationAST } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { Metrics } from '../observability/metrics.js';

const MAX_OPERATION_NAMES = 200;

/**
 * Times every execution by operation name. Names come from clients, so the label set is capped:
 * past MAX_OPERATION_NAMES distinct names, new ones are counted as "other".
 */
export function useOperationMetrics(metrics: Metrics): Plugin {
  const known = new Set<string>();
  const label = (name: string): string => {
    if (known.has(name)) return name;
    if (known.size >= MAX_OPERATION_NAMES) return 'other';
    known.add(name);
    return name;
  };
  return {
    onExecute({ args }) {
      const started = performance.now();
      const operation = getOperationAST(args.document, args.operationName);
      const labels = { operation: label(operation?.name?.value ?? 'anonymous'), type: operation?.operation ?? 'unknown' };
      return {
        onExecuteDone() {
          metrics.operationDuration.observe(labels, (performance.now() - started) / 1000);
        },
      };
    },
  };
}
