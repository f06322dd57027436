import { getOperationAST, type DocumentNode } from 'graphql';
import { isAsyncIterable, type Plugin } from 'graphql-yoga';
import { decidingCode, errorCodes, outcomeOf } from '../graphql/outcome.js';
import type { Metrics } from '../observability/metrics.js';

const MAX_OPERATION_NAMES = 200;

type Observe = (seconds: number) => void;

/**
 * Counts every operation by type, outcome and deciding error code (graphql_operations_total): the
 * ones refused at parse or validation too, on every transport (they all run Yoga's envelop); a
 * subscription counts once, by how it started. Times every execution by operation name. Names come from clients, so the label set is capped:
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
  const count = (type: string, errors: Parameters<typeof errorCodes>[0], uncoded?: string) => {
    const codes = errorCodes(errors, uncoded);
    metrics.operations.inc({ type, outcome: outcomeOf(codes), code: decidingCode(codes) });
  };
  const typeOf = (document: DocumentNode, operationName: string | null | undefined) => getOperationAST(document, operationName)?.operation ?? 'unknown';
  return {
    onParse: () => ({ result }) => {
      // Named as Yoga names them in the answer.
      if (result instanceof Error) count('unknown', [result as { extensions?: Record<string, unknown> }], 'GRAPHQL_PARSE_FAILED');
    },
    onValidate: () => ({ valid, result }) => {
      if (!valid) count('unknown', result as Parameters<typeof errorCodes>[0], 'GRAPHQL_VALIDATION_FAILED');
    },
    onExecute({ args }) {
      const started = performance.now();
      const observe = timerOf(args.document, args.operationName);
      return {
        onExecuteDone({ result }) {
          observe((performance.now() - started) / 1000);
          if (!isAsyncIterable(result)) count(typeOf(args.document, args.operationName), result.errors);
        },
      };
    },
    onSubscribe({ args }) {
      const type = typeOf(args.document, args.operationName);
      return {
        onSubscribeResult: ({ result }) => count(type, isAsyncIterable(result) ? undefined : result.errors),
        onSubscribeError: ({ error }) => count(type, [error as { extensions?: Record<string, unknown> }]),
      };
    },
  };
}
