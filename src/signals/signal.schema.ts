import { rules } from '../auth/rules.js';
import { builder } from '../graphql/builder.js';
import { badUserInput } from '../graphql/errors.js';
import { MembershipStatusEnum } from '../membership/membership.schema.js';
import type { SignalOutcome } from './signal-batcher.js';
import { MAX_ABS_WEIGHT, MAX_COHORTS, MAX_ID_LENGTH } from './signal-input.js';
import { DEFAULT_WEIGHTS, SIGNAL_KINDS } from './signal-kind.js';
import { validatedSignals } from './signal-validation.js';

export const MAX_SIGNALS_PER_CALL = 1000;

const SignalKindEnum = builder.enumType('SignalKind', {
  description: `Kind of engagement. Default weights: ${Object.entries(DEFAULT_WEIGHTS)
    .map(([kind, weight]) => `${kind} ${weight}`)
    .join(', ')}.`,
  values: SIGNAL_KINDS,
});

const ID_RULES = `1–${MAX_ID_LENGTH} characters in Unicode NFC, without lone surrogates, control or format characters or line/paragraph separators (refused, never changed)`;

const SignalContextInput = builder.inputType('SignalContext', {
  fields: (t) => ({
    cohortIds: t.idList({ required: false, description: `Cohorts to attribute to (deduplicated; at most ${MAX_COHORTS}). Each: ${ID_RULES}.` }),
    surface: t.string({ required: false, description: 'Where the engagement happened (for the personal record only).' }),
  }),
});

const SignalInputRef = builder.inputType('SignalInput', {
  fields: (t) => ({
    userId: t.field({ type: 'UInt64', required: true }),
    itemId: t.id({ required: true, description: `${ID_RULES}.` }),
    kind: t.field({ type: SignalKindEnum, required: true }),
    weight: t.float({
      required: false,
      description: `Finite, |weight| ≤ ${MAX_ABS_WEIGHT}, kept to 6 decimals. Default per kind (see SignalKind).`,
    }),
    occurredAt: t.field({
      type: 'DateTime',
      required: false,
      description: "The client's event time: stored, never used for the boundary (that is the server's ingest time).",
    }),
    context: t.field({ type: SignalContextInput, required: false }),
    eventId: t.string({
      required: false,
      description:
        'Idempotency key, unique per user: 1–128 characters without control characters (a UUID or ULID is typical). A signal whose eventId this user already sent is not stored or counted again; the call returns the original outcome with `duplicate: true`. Send one whenever a request may be retried.',
    }),
  }),
});

const SignalResultRef = builder.objectRef<SignalOutcome>('SignalResult').implement({
  fields: (t) => ({
    signalId: t.exposeID('signalId'),
    status: t.expose('status', { type: MembershipStatusEnum, description: "The gate's decision." }),
    forwarded: t.exposeBoolean('forwarded', { description: 'Reached the community aggregate.' }),
    cohortsAttributed: t.exposeInt('cohortsAttributed', { description: 'Cohort aggregates it reached.' }),
    duplicate: t.exposeBoolean('duplicate', {
      description: 'This user had already sent a signal with this eventId: nothing was stored, and the fields above are that signal\'s original outcome.',
    }),
  }),
});

builder.mutationField('signal', (t) =>
  t.field({
    type: SignalResultRef,
    description: 'Stores the signal for its owner; forwards it to shared aggregates only if the owner is ACTIVE.',
    args: { input: t.arg({ type: SignalInputRef, required: true }) },
    authScopes: (_root, { input }) => rules.sendSignals([input.userId]),
    resolve: async (_root, { input }, { services, request }) => {
      const [outcome] = await services.signals.submit(validatedSignals([input], () => 'input', services.metrics), request.signal);
      return outcome!;
    },
  }),
);

builder.mutationField('signals', (t) =>
  t.field({
    type: [SignalResultRef],
    description: `Up to ${MAX_SIGNALS_PER_CALL} signals in one database round trip; same validation and gate per signal. Any invalid input rejects the whole call.`,
    args: { inputs: t.arg({ type: [SignalInputRef], required: true }) },
    authScopes: (_root, { inputs }) => rules.sendSignals(inputs.map((input) => input.userId)),
    resolve: async (_root, { inputs }, { services, request }) => {
      if (inputs.length === 0 || inputs.length > MAX_SIGNALS_PER_CALL) {
        throw badUserInput(`inputs must hold 1 to ${MAX_SIGNALS_PER_CALL} signals`, 'inputs');
      }
      return services.signals.submit(validatedSignals(inputs, (i) => `inputs[${i}]`, services.metrics), request.signal);
    },
  }),
);

builder.mutationField('validateSignal', (t) =>
  t.field({
    type: 'Boolean',
    description: 'Checks a signal exactly as `signal` would (validation and authorization) without storing it.',
    args: { input: t.arg({ type: SignalInputRef, required: true }) },
    authScopes: (_root, { input }) => rules.sendSignals([input.userId]),
    resolve: (_root, { input }, { services }) => validatedSignals([input], () => 'input', services.metrics, 0).length === 1,
  }),
);
