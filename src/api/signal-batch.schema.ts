import { rules } from './auth-rules.js';
import { builder } from './builder.js';
import { badUserInput } from '../graphql/errors.js';
import type { SignalOutcome } from '../signals/queued-request.js';
import type { SignalInput } from '../signals/signal-input.js';
import { distinctCohorts, MAX_SIGNALS_PER_CALL, SIGNAL_INGESTION, SignalInputRef, SignalResultRef } from './signal.schema.js';
import { refusedItemsOf } from './per-item-coercion.js';
import { checkSignals, countRefused, validatedSignals, type CheckedSignals, type InvalidSignal } from './signal-validation.js';

const InvalidSignalsEnum = builder.enumType('InvalidSignals', {
  description: 'What a batch does with invalid signals.',
  values: {
    REJECT_ALL: { description: 'Store nothing: the call fails with BAD_USER_INPUT, `extensions.invalid` listing every invalid signal.' },
    SKIP: {
      description:
        'Store the valid signals; each invalid one is an InvalidSignal in the result, in input order. With `inputs` as a variable, that includes values GraphQL cannot coerce (a date that does not exist, an unknown kind).',
    },
  },
});

const InvalidSignalRef = builder.objectRef<InvalidSignal>('InvalidSignal').implement({
  description: 'A signal the server refused: nothing of it was stored. Resending it unchanged is refused again.',
  fields: (t) => ({
    index: t.exposeInt('index', { description: 'Its position in `inputs`.' }),
    argument: t.exposeString('argument', { description: 'The offending field, e.g. `inputs[2].itemId`.' }),
    code: t.exposeString('code', { description: 'BAD_USER_INPUT.' }),
    message: t.exposeString('message', { description: 'Why.' }),
  }),
});

type Item = SignalOutcome | InvalidSignal;

const SignalItemUnion = builder.unionType('SignalItem', {
  description: 'What became of one signal of a batch: its result, or why it was refused.',
  types: [SignalResultRef, InvalidSignalRef],
  resolveType: (item) => ('argument' in item ? InvalidSignalRef : SignalResultRef) as never,
});

const SignalBatchRef = builder.objectRef<{ items: Item[] }>('SignalBatch').implement({
  description: 'A batch, signal by signal.',
  fields: (t) => ({
    items: t.field({ type: [SignalItemUnion], description: 'One per input, in input order.', resolve: ({ items }) => items }),
    storedCount: t.int({
      description: 'Signals stored now (not duplicates).',
      resolve: ({ items }) => items.filter((item) => 'signalId' in item && !item.duplicate).length,
    }),
    invalidCount: t.int({
      description: 'Signals refused as invalid.',
      resolve: ({ items }) => items.filter((item) => 'argument' in item).length,
    }),
  }),
});

const path = (index: number) => `inputs[${index}]`;

/** The call's signals checked, with the items coercion already refused (per-item-coercion.ts) put back in place. */
function checkedBatch(inputs: readonly SignalInput[], refused: ReturnType<typeof refusedItemsOf>): CheckedSignals & { total: number } {
  if (inputs.length + (refused?.refused.length ?? 0) === 0 || (refused?.total ?? inputs.length) > MAX_SIGNALS_PER_CALL) {
    throw badUserInput(`inputs must hold 1 to ${MAX_SIGNALS_PER_CALL} signals`, 'inputs');
  }
  const checked = checkSignals(inputs, path, refused?.kept);
  if (!refused) return { ...checked, total: inputs.length };
  return {
    valid: checked.valid,
    invalid: [...refused.refused, ...checked.invalid].sort((a, b) => a.index - b.index),
    total: refused.total,
  };
}

builder.mutationField('sendSignals', (t) =>
  t.field({
    type: SignalBatchRef,
    description: `Like \`signals\` (up to ${MAX_SIGNALS_PER_CALL}, one database round trip), with a choice for invalid signals: REJECT_ALL (default, as \`signals\`) or SKIP.`,
    args: {
      inputs: t.arg({ type: [SignalInputRef], required: true, description: `1 to ${MAX_SIGNALS_PER_CALL} signals.` }),
      invalid: t.arg({
        type: InvalidSignalsEnum,
        required: false,
        defaultValue: 'REJECT_ALL',
        description: 'What to do with invalid signals.',
      }),
    },
    extensions: {
      cost: {
        listSize: ({ inputs }) => inputs.length,
        writes: ({ inputs }) => ({
          signals: inputs.length,
          cohortAttributions: inputs.reduce((sum, input) => sum + distinctCohorts(input), 0),
        }),
      },
      admission: SIGNAL_INGESTION,
    },
    authScopes: (_root, { inputs }) => rules.sendSignals(inputs.map((input) => input.userId)),
    resolve: async (_root, { inputs, invalid }, context, info) => {
      const { services, signal } = context;
      if (invalid !== 'SKIP') {
        if (inputs.length === 0 || inputs.length > MAX_SIGNALS_PER_CALL)
          throw badUserInput(`inputs must hold 1 to ${MAX_SIGNALS_PER_CALL} signals`, 'inputs');
        return { items: await services.signals.submit(validatedSignals(inputs, path, services.metrics), signal) };
      }
      const checked = checkedBatch(inputs, refusedItemsOf(context, info));
      countRefused(services.metrics, checked.invalid.length, 0);
      const outcomes =
        checked.valid.length > 0
          ? await services.signals.submit(
              checked.valid.map(({ signal: valid }) => valid),
              signal,
            )
          : [];
      const items: Item[] = new Array<Item>(checked.total);
      checked.valid.forEach(({ index }, i) => (items[index] = outcomes[i]!));
      for (const refused of checked.invalid) items[refused.index] = refused;
      return { items };
    },
  }),
);

builder.mutationField('validateSignals', (t) =>
  t.field({
    type: [InvalidSignalRef],
    description:
      'Checks a batch exactly as `sendSignals(invalid: SKIP)` would (validation, coercion of a variable item by item, and authorization) without storing anything: the invalid signals, in input order (none: all valid).',
    args: { inputs: t.arg({ type: [SignalInputRef], required: true, description: `1 to ${MAX_SIGNALS_PER_CALL} signals.` }) },
    extensions: { cost: { listSize: ({ inputs }) => inputs.length } },
    authScopes: (_root, { inputs }) => rules.sendSignals(inputs.map((input) => input.userId)),
    resolve: (_root, { inputs }, context, info) => checkedBatch(inputs, refusedItemsOf(context, info)).invalid,
  }),
);
