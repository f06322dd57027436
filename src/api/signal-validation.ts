import { badUserInput } from '../graphql/errors.js';
import type { Metrics } from '../observability/metrics.js';
import { SignalInputError, validateSignal, validId, type SignalInput, type ValidSignal } from '../signals/signal-input.js';

/** One signal the server refused: where it was in the call and why. */
export interface InvalidSignal {
  index: number;
  /** The path of the offending field, e.g. `inputs[2].itemId`. */
  argument: string;
  code: 'BAD_USER_INPUT';
  message: string;
}

export interface CheckedSignals {
  valid: { index: number; signal: ValidSignal }[];
  invalid: InvalidSignal[];
}

/**
 * Every signal of a call checked, none stored: all problems at once, in input order. `indexes`: each
 * input's position in the call as sent, when coercion took some out (per-item-coercion.ts).
 */
export function checkSignals(inputs: readonly SignalInput[], path: (index: number) => string, indexes?: readonly number[]): CheckedSignals {
  const checked: CheckedSignals = { valid: [], invalid: [] };
  inputs.forEach((input, position) => {
    const index = indexes?.[position] ?? position;
    try {
      checked.valid.push({ index, signal: validateSignal(input, path(index)) });
    } catch (error) {
      if (!(error instanceof SignalInputError)) throw error;
      checked.invalid.push({ index, argument: error.field, code: 'BAD_USER_INPUT', message: error.message });
    }
  });
  return checked;
}

/**
 * Validates a call's signals for GraphQL, all or none: any invalid one rejects the call with
 * BAD_USER_INPUT naming the first offending field and listing every one (`extensions.invalid`), so a
 * sender drops them all in one round trip. Each signal counts once: the invalid ones `rejected`, the
 * valid ones refused with them `withheld`.
 */
export function validatedSignals(
  inputs: readonly SignalInput[],
  path: (index: number) => string,
  metrics: Metrics,
  count = true,
): ValidSignal[] {
  const { valid, invalid } = checkSignals(inputs, path);
  if (invalid.length === 0) return valid.map(({ signal }) => signal);
  if (count) countRefused(metrics, invalid.length, valid.length);
  const [first] = invalid;
  throw badUserInput(first!.message, first!.argument, undefined, {
    invalid: invalid.map(({ argument, message }) => ({ argument, message })),
  });
}

export function countRefused(metrics: Metrics, invalid: number, withheld: number): void {
  metrics.signals.inc({ outcome: 'rejected' }, invalid);
  if (withheld > 0) metrics.signals.inc({ outcome: 'withheld' }, withheld);
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
