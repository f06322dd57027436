import { rules } from './auth-rules.js';
import { builder } from './builder.js';
import { badUserInput } from '../graphql/errors.js';
import type { FieldAdmission } from '../graphql/field-admission.js';
import { MembershipStatusEnum } from './membership.schema.js';
import type { SignalOutcome } from '../signals/queued-request.js';
import { MAX_ABS_WEIGHT, MAX_COHORTS, MAX_ID_LENGTH, type SignalInput } from '../signals/signal-input.js';
import type { SignalKind } from '../db/schema.js';
import { DEFAULT_WEIGHTS } from '../signals/signal-kind.js';
import { validatedSignals } from './signal-validation.js';

export const MAX_SIGNALS_PER_CALL = 1000;
/** Declared by every field that stores signals: shed early while the signal queue is full (src/graphql/field-admission.ts). */
export const SIGNAL_INGESTION: FieldAdmission = { kind: 'signalIngestion' };

const KIND_VALUES = {
  VIEW: { description: 'Saw the item.' },
  CLICK: { description: 'Opened the item.' },
  LIKE: { description: 'Liked the item.' },
  SHARE: { description: 'Shared the item.' },
  SAVE: { description: 'Saved the item for later.' },
  SKIP: { description: 'Passed over the item.' },
  DISLIKE: { description: 'Disliked the item.' },
} as const satisfies Record<SignalKind, { description: string }>;

/** Cohort aggregates a signal can reach, for the request budget (the gate may reach fewer). */
export function distinctCohorts(input: SignalInput): number {
  const cohortIds = input.context?.cohortIds;
  // Most signals name no cohort or one: no set to build for them.
  if (!cohortIds || cohortIds.length < 2) return cohortIds?.length ?? 0;
  return new Set(cohortIds).size;
}

const SignalKindEnum = builder.enumType('SignalKind', {
  description: `Kind of engagement. Default weights: ${Object.entries(DEFAULT_WEIGHTS)
    .map(([kind, weight]) => `${kind} ${weight}`)
    .join(', ')}.`,
  values: KIND_VALUES,
});

const ID_RULES = `1–${MAX_ID_LENGTH} characters in Unicode NFC, without lone surrogates, control or format characters or line/paragraph separators (refused, never changed)`;

const SignalContextInput = builder.inputType('SignalContext', {
  description: 'Where a signal happened: the cohorts it counts for, and the surface.',
  fields: (t) => ({
    cohortIds: t.idList({
      required: false,
      description: `Cohorts to attribute to (deduplicated; at most ${MAX_COHORTS}). Each: ${ID_RULES}.`,
    }),
    surface: t.string({ required: false, description: 'Where the engagement happened (for the personal record only).' }),
  }),
});

export const SignalInputRef = builder.inputType('SignalInput', {
  description: 'One engagement of one user with one item.',
  fields: (t) => ({
    userId: t.field({ type: 'UInt64', required: true, description: 'Whose engagement (the owner of the signal).' }),
    itemId: t.id({ required: true, description: `${ID_RULES}.` }),
    kind: t.field({ type: SignalKindEnum, required: true, description: 'What the user did.' }),
    weight: t.float({
      required: false,
      description: `Finite, |weight| ≤ ${MAX_ABS_WEIGHT}, kept to 6 decimals. Default per kind (see SignalKind).`,
    }),
    occurredAt: t.field({
      type: 'DateTime',
      required: false,
      description: "The client's event time: stored, never used for the boundary (that is the server's ingest time).",
    }),
    context: t.field({
      type: SignalContextInput,
      required: false,
      description: 'Cohorts and surface; none: the community aggregate only.',
    }),
    eventId: t.string({
      required: false,
      description:
        'Idempotency key, unique per user: 1–128 characters without control characters (a UUID or ULID is typical). A signal whose eventId this user already sent is not stored or counted again; the call returns the original outcome with `duplicate: true`. Send one whenever a request may be retried.',
    }),
  }),
});

export const SignalResultRef = builder.objectRef<SignalOutcome>('SignalResult').implement({
  description: 'What became of one signal: always stored, forwarded only if its owner is ACTIVE.',
  fields: (t) => ({
    signalId: t.exposeID('signalId', { description: 'The stored signal.' }),
    status: t.expose('status', { type: MembershipStatusEnum, description: "The gate's decision." }),
    forwarded: t.exposeBoolean('forwarded', { description: 'Reached the community aggregate.' }),
    cohortsAttributed: t.exposeInt('cohortsAttributed', { description: 'Cohort aggregates it reached.' }),
    duplicate: t.exposeBoolean('duplicate', {
      description:
        "This user had already sent a signal with this eventId: nothing was stored, and the fields above are that signal's original outcome.",
    }),
  }),
});

builder.mutationField('signal', (t) =>
  t.field({
    type: SignalResultRef,
    description: 'Stores the signal for its owner; forwards it to shared aggregates only if the owner is ACTIVE.',
    args: { input: t.arg({ type: SignalInputRef, required: true, description: 'The signal.' }) },
    extensions: {
      cost: { writes: ({ input }) => ({ signals: 1, cohortAttributions: distinctCohorts(input) }) },
      admission: SIGNAL_INGESTION,
    },
    authScopes: (_root, { input }) => rules.sendSignals([input.userId]),
    resolve: async (_root, { input }, { services, signal }) => {
      const [outcome] = await services.signals.submit(
        validatedSignals([input], () => 'input', services.metrics),
        signal,
      );
      return outcome!;
    },
  }),
);

builder.mutationField('signals', (t) =>
  t.field({
    type: [SignalResultRef],
    description: `Up to ${MAX_SIGNALS_PER_CALL} signals in one database round trip; same validation and gate per signal. Any invalid input rejects the whole call (extensions.invalid lists every one); sendSignals can store the valid ones instead.`,
    args: { inputs: t.arg({ type: [SignalInputRef], required: true, description: `1 to ${MAX_SIGNALS_PER_CALL} signals.` }) },
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
    resolve: async (_root, { inputs }, { services, signal }) => {
      if (inputs.length === 0 || inputs.length > MAX_SIGNALS_PER_CALL) {
        throw badUserInput(`inputs must hold 1 to ${MAX_SIGNALS_PER_CALL} signals`, 'inputs');
      }
      return services.signals.submit(
        validatedSignals(inputs, (i) => `inputs[${i}]`, services.metrics),
        signal,
      );
    },
  }),
);

builder.mutationField('validateSignal', (t) =>
  t.field({
    type: 'Boolean',
    description: 'Checks a signal exactly as `signal` would (validation and authorization) without storing it.',
    args: { input: t.arg({ type: SignalInputRef, required: true, description: 'The signal to check.' }) },
    authScopes: (_root, { input }) => rules.sendSignals([input.userId]),
    resolve: (_root, { input }, { services }) => validatedSignals([input], () => 'input', services.metrics, false).length === 1,
  }),
);
