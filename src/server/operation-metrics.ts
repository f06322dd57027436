import { getOperationAST, type DocumentNode } from 'graphql';
import { isAsyncIterable, type Plugin } from 'graphql-yoga';
import { decidingCode, errorCodes, outcomeOf } from '../graphql/outcome.js';
import type { Metrics } from '../observability/metrics.js';

type Outcome = ReturnType<typeof outcomeOf>;
/** One operation's labelled children, kept per parsed document. */
interface Labelled {
  count(outcome: Outcome, code: string): void;
  observe(seconds: number, outcome: Outcome): void;
}

/**
 * Counts every operation by name, type, outcome and deciding error code (graphql_operations_total):
 * the ones refused at parse or validation too, on every transport (they all run Yoga's envelop); a
 * subscription counts once, by how it started. Times every execution by name, type and outcome.
 * Names come from clients, so only those of the trusted documents (the manifests: `trusted`) are
 * labels; any other is `other`, as is an operation refused before it was parsed or validated. The
 * labelled children are kept per parsed document (Yoga's parse cache hands the same one back), so
 * a request neither looks its operation up again nor hashes its name.
 */
export function useOperationMetrics(metrics: Metrics, trusted: ReadonlySet<string>): Plugin {
  const labelledBy = new WeakMap<DocumentNode, Map<string | null | undefined, Labelled>>();
  const labelled = (operation: string, type: string): Labelled => {
    const timers = new Map<string, (seconds: number) => void>();
    return {
      count: (outcome, code) => metrics.operations.inc({ operation, type, outcome, code }),
      observe(seconds, outcome) {
        let observe = timers.get(outcome);
        if (!observe) {
          const child = metrics.operationDuration.labels({ operation, type, outcome });
          timers.set(outcome, (observe = (value) => child.observe(value)));
        }
        observe(seconds);
      },
    };
  };
  const unparsed = labelled('other', 'unknown');
  const of = (document: DocumentNode, operationName: string | null | undefined): Labelled => {
    let byName = labelledBy.get(document);
    if (!byName) labelledBy.set(document, (byName = new Map()));
    let found = byName.get(operationName);
    if (!found) {
      const operation = getOperationAST(document, operationName);
      const name = operation?.name?.value;
      byName.set(
        operationName,
        (found = labelled(name !== undefined && trusted.has(name) ? name : 'other', operation?.operation ?? 'unknown')),
      );
    }
    return found;
  };
  type Errors = Parameters<typeof errorCodes>[0];
  const outcome = (errors: Errors, uncoded?: string) => {
    const codes = errorCodes(errors, uncoded);
    return { outcome: outcomeOf(codes), code: decidingCode(codes) };
  };
  const count = (target: Labelled, errors: Errors, uncoded?: string) => {
    const decided = outcome(errors, uncoded);
    target.count(decided.outcome, decided.code);
  };
  return {
    onParse:
      () =>
      ({ result }) => {
        // Named as Yoga names them in the answer.
        if (result instanceof Error) count(unparsed, [result as { extensions?: Record<string, unknown> }], 'GRAPHQL_PARSE_FAILED');
      },
    onValidate:
      () =>
      ({ valid, result }) => {
        if (!valid) count(unparsed, result as Errors, 'GRAPHQL_VALIDATION_FAILED');
      },
    onExecute({ args }) {
      const started = performance.now();
      const target = of(args.document, args.operationName);
      return {
        onExecuteDone({ result }) {
          const seconds = (performance.now() - started) / 1000;
          if (isAsyncIterable(result)) return target.observe(seconds, 'ok');
          const decided = outcome(result.errors);
          target.observe(seconds, decided.outcome);
          target.count(decided.outcome, decided.code);
        },
      };
    },
    onSubscribe({ args }) {
      const target = of(args.document, args.operationName);
      return {
        onSubscribeResult: ({ result }) => count(target, isAsyncIterable(result) ? undefined : result.errors),
        onSubscribeError: ({ error }) => count(target, [error as { extensions?: Record<string, unknown> }]),
      };
    },
  };
}
