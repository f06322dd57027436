import { getOperationAST, Kind, type ExecutionArgs } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { overloaded } from '../graphql/errors.js';
import { mutationAdmission } from '../graphql/field-admission.js';
import type { Metrics } from '../observability/metrics.js';
import type { SignalBatcher } from '../signals/signal-batcher.js';

/**
 * While the signal queue is full, a signal mutation is refused before its variables are coerced
 * and validated: under a flood, a refusal must cost next to nothing, or refusing alone would
 * saturate the server. (The batcher refuses too, for requests that got past this point.)
 */
export function useSignalShedding(batcher: SignalBatcher, metrics: Metrics, retryAfterSeconds: number): Plugin {
  return {
    onExecute({ args, setResultAndStopExecution }) {
      if (!batcher.full || !ingestsSignals(args)) return;
      metrics.shedRequests.inc();
      setResultAndStopExecution({ errors: [overloaded(retryAfterSeconds)] });
    },
  };
}

/** A mutation with a field that declares itself signal ingestion (`extensions.admission`). */
export function ingestsSignals(args: Pick<ExecutionArgs, 'schema' | 'document' | 'operationName'>): boolean {
  const operation = getOperationAST(args.document, args.operationName);
  if (operation?.operation !== 'mutation') return false;
  return operation.selectionSet.selections.some(
    (selection) => selection.kind === Kind.FIELD && mutationAdmission(args.schema, selection.name.value)?.kind === 'signalIngestion',
  );
}
