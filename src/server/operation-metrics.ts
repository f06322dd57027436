import { getOperationAST, type DocumentNode } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { Metrics } from '../observability/metrics.js';

const MAX_OPERATION_NAMES = 200;

type Observe = (seconds: number) => void;

/**
 * Times every execution by operation name. Names come from clients, so the label set is capped:
 * past MAX_OPERATION_NAMES distinct names, new ones are counted as "other". The labelled timer is
 * kept per parsed document (Yoga's parse cache hands the same one back), so a request neither
 * looks its operation up again nor hashes its labels.
 */
export function useOperationMetrics(metrics: Metrics): Plugin {
  const known = new Set<string>();
  const label = (name: string): string => {
    if (known.has(name)) return name;
    if (known.size >= MAX_OPERATION_NAMES) return 'other';
    known.add(name);
    return name;
  };
  const timers = new WeakMap<DocumentNode, Map<string | null | undefined, Observe>>();
  const timerOf = (document: DocumentNode, operationName: string | null | undefined): Observe => {
    let byName = timers.get(document);
    if (!byName) timers.set(document, (byName = new Map()));
    let observe = byName.get(operationName);
    if (!observe) {
      const operation = getOperationAST(document, operationName);
      const child = metrics.operationDuration.labels({ operation: label(operation?.name?.value ?? 'anonymous'), type: operation?.operation ?? 'unknown' });
      byName.set(operationName, (observe = (seconds) => child.observe(seconds)));
    }
    return observe;
  };
  return {
    onExecute({ args }) {
      const started = performance.now();
      const observe = timerOf(args.document, args.operationName);
      return {
        onExecuteDone() {
          observe((performance.now() - started) / 1000);
        },
      };
    },
  };
}
