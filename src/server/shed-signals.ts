import { getOperationAST, Kind } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { overloaded } from '../graphql/errors.js';
import type { Metrics } from '../observability/metrics.js';
import type { SignalBatcher } from '../signals/signal-batcher.js';

const SIGNAL_FIELDS = new Set(['signal', 'signals']);

/**
 * While the signal queue is full, a signal mutation is refused before its variables are coerced
 * and validated: under a flood, a refusal must cost next to nothing, or refusing alone would
 * saturate the server. (The batcher refuses too, for requests that got past this point.)
 */
export function useSignalShedding(batcher: SignalBatcher, metrics: Metrics, retryAfterSeconds: number): Plugin {
  return {
    onExecute({ args, setResultAndStopExecution }) {
      if (!batcher.full) return;
      const operation = getOperationAST(args.document, args.operationName);
      if (operation?.operation !== 'mutation') return;
      const sendsSignals = operation.selectionSet.selections.some(
        (selection) => selection.kind === Kind.FIELD && SIGNAL_FIELDS.has(selection.name.value),
      );
      if (!sendsSignals) return;
      metrics.shedRequests.inc();
      setResultAndStopExecution({ errors: [overloaded(retryAfterSeconds)] });
    },
  };
}
