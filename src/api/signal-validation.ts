import { badUserInput } from '../graphql/errors.js';
import type { Metrics } from '../observability/metrics.js';
import { SignalInputError, validateSignal, validId, type SignalInput, type ValidSignal } from '../signals/signal-input.js';

/**
 * Validates a call's signals for GraphQL: the first invalid one rejects the whole call (counted as
 * `callSize` rejected signals) with BAD_USER_INPUT naming its field.
 */
export function validatedSignals(inputs: readonly SignalInput[], path: (index: number) => string, metrics: Metrics, callSize = inputs.length): ValidSignal[] {
  return inputs.map((input, index) => {
    try {
      return validateSignal(input, path(index));
    } catch (error) {
      if (!(error instanceof SignalInputError)) throw error;
      metrics.signals.inc({ outcome: 'rejected' }, callSize);
      throw badUserInput(error.message, error.field);
    }
  });
}

/** Read arguments obey the same id rules as writes: an id that could never be stored is an input error. */
export function validIdArgument(value: string | number, argument: string): string {
  try {
    return validId(String(value), argument);
  } catch (error) {
    if (!(error instanceof SignalInputError)) throw error;
    throw badUserInput(error.message, error.field);
  }
}
