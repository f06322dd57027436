import { rules } from '../auth/rules.js';
import { builder } from '../graphql/builder.js';
import type { Services } from '../graphql/context.js';
import { badUserInput } from '../graphql/errors.js';
import { MembershipStatusEnum } from '../membership/membership.schema.js';
import {
  cohortItemAggregate,
  communityItemAggregate,
  listContributions,
  type Contribution,
  type ContributionPosition,
  type ItemAggregate,
} from './ledger.repository.js';
import type { SignalOutcome } from './signal-batcher.js';
import {
  DEFAULT_WEIGHTS,
  MAX_ABS_WEIGHT,
  MAX_ID_LENGTH,
  SignalInputError,
  validateSignal,
  type SignalInput,
  type ValidSignal,
} from './signal-input.js';

export const MAX_SIGNALS_PER_CALL = 1000;
const DEFAULT_PAGE = 50;
const MAX_PAGE = 500;
const INT8_MAX = 2n ** 63n - 1n;

const SignalKindEnum = builder.enumType('SignalKind', {
  description: `Kind of engagement. Default weights: ${Object.entries(DEFAULT_WEIGHTS)
    .map(([kind, weight]) => `${kind} ${weight}`)
    .join(', ')}.`,
  values: ['VIEW', 'CLICK', 'LIKE', 'SHARE', 'SAVE', 'SKIP', 'DISLIKE'] as const,
});

const SignalContextInput = builder.inputType('SignalContext', {
  fields: (t) => ({
    cohortIds: t.idList({ required: false, description: 'Cohorts to attribute to (deduplicated; at most 32; 1–128 characters each).' }),
    surface: t.string({ required: false, description: 'Where the engagement happened (for the personal record only).' }),
  }),
});

const SignalInputRef = builder.inputType('SignalInput', {
  fields: (t) => ({
    userId: t.field({ type: 'UInt64', required: true }),
    itemId: t.id({ required: true, description: '1–128 characters.' }),
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
  }),
});

const SignalResultRef = builder.objectRef<SignalOutcome>('SignalResult').implement({
  fields: (t) => ({
    signalId: t.exposeID('signalId'),
    status: t.expose('status', { type: MembershipStatusEnum, description: "The gate's decision." }),
    forwarded: t.exposeBoolean('forwarded', { description: 'Reached the community aggregate.' }),
    cohortsAttributed: t.exposeInt('cohortsAttributed', { description: 'Cohort aggregates it reached.' }),
  }),
});

const ItemAggregateRef = builder.objectRef<ItemAggregate>('ItemAggregate').implement({
  fields: (t) => ({
    itemId: t.exposeID('itemId'),
    signalCount: t.exposeInt('signalCount'),
    weightSum: t.exposeFloat('weightSum'),
  }),
});

const ContributionRef = builder.objectRef<Contribution>('Contribution').implement({
  description: 'One entry of the contributions ledger: a signal that reached a shared aggregate.',
  fields: (t) => ({
    signalId: t.exposeID('signalId'),
    target: t.exposeString('target', { description: '"community" or the cohort id.' }),
    cohortId: t.exposeID('cohortId', { nullable: true, description: 'The cohort id; null for the community aggregate.' }),
    itemId: t.exposeID('itemId'),
    weight: t.exposeFloat('weight'),
    atNs: t.expose('atNs', { type: 'UInt64', description: 'Ingest time under the user lock, database clock, ns since the epoch.' }),
  }),
});

const ContributionConnectionRef = builder.connectionObject({ type: ContributionRef, name: 'ContributionConnection' });

builder.mutationField('signal', (t) =>
  t.field({
    type: SignalResultRef,
    description: 'Stores the signal for its owner; forwards it to shared aggregates only if the owner is ACTIVE.',
    args: { input: t.arg({ type: SignalInputRef, required: true }) },
    authScopes: (_root, { input }) => rules.sendSignals([input.userId]),
    resolve: async (_root, { input }, { services }) => {
      const [outcome] = await services.signals.submit([validated(input, 'input', services)]);
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
    resolve: async (_root, { inputs }, { services }) => {
      if (inputs.length === 0 || inputs.length > MAX_SIGNALS_PER_CALL) {
        throw badUserInput(`inputs must hold 1 to ${MAX_SIGNALS_PER_CALL} signals`, 'inputs');
      }
      return services.signals.submit(inputs.map((input, i) => validated(input, `inputs[${i}]`, services, inputs.length)));
    },
  }),
);

builder.mutationField('validateSignal', (t) =>
  t.field({
    type: 'Boolean',
    description: 'Checks a signal exactly as `signal` would (validation and authorization) without storing it.',
    args: { input: t.arg({ type: SignalInputRef, required: true }) },
    authScopes: (_root, { input }) => rules.sendSignals([input.userId]),
    resolve: (_root, { input }, { services }) => Boolean(validated(input, 'input', services, 0)),
  }),
);

builder.queryField('communityItemAggregate', (t) =>
  t.field({
    type: ItemAggregateRef,
    args: { itemId: t.arg.id({ required: true }) },
    authScopes: rules.readAggregates,
    resolve: (_root, { itemId }, { services }) => communityItemAggregate(services.db, String(itemId)),
  }),
);

builder.queryField('cohortItemAggregate', (t) =>
  t.field({
    type: ItemAggregateRef,
    args: { cohortId: t.arg.id({ required: true }), itemId: t.arg.id({ required: true }) },
    authScopes: rules.readAggregates,
    resolve: (_root, { cohortId, itemId }, { services }) => cohortItemAggregate(services.db, String(cohortId), String(itemId)),
  }),
);

builder.queryField('communityContributions', (t) =>
  t.field({
    type: ContributionConnectionRef,
    description:
      "The user's entries in the contributions ledger, oldest first (what a retroactive purge would remove). Users may read their own; community:admin anyone's.",
    args: {
      userId: t.arg({ type: 'UInt64', required: true }),
      first: t.arg.int({ required: false, description: `Page size, 0–${MAX_PAGE} (default ${DEFAULT_PAGE}).` }),
      after: t.arg.string({ required: false }),
    },
    authScopes: (_root, args) => rules.readContributions(args.userId),
    resolve: async (_root, args, { services }) => {
      const first = args.first ?? DEFAULT_PAGE;
      if (first < 0 || first > MAX_PAGE) throw badUserInput(`first must be between 0 and ${MAX_PAGE}`, 'first');
      const after = args.after ? decodeCursor(args.after) : null;
      const rows = await listContributions(services.db, args.userId, after, first + 1);
      const page = rows.slice(0, first);
      const edges = page.map((node) => ({ cursor: encodeCursor(node), node }));
      return {
        edges,
        pageInfo: {
          hasNextPage: rows.length > first,
          hasPreviousPage: after !== null,
          startCursor: edges[0]?.cursor ?? null,
          endCursor: edges.at(-1)?.cursor ?? null,
        },
      };
    },
  }),
);

/** Validates one signal; a rejection rejects its whole call (`callSize` signals). */
function validated(input: SignalInput, path: string, services: Services, callSize = 1): ValidSignal {
  try {
    return validateSignal(input, path);
  } catch (error) {
    if (!(error instanceof SignalInputError)) throw error;
    services.metrics.signals.inc({ outcome: 'rejected' }, callSize);
    throw badUserInput(error.message, error.field);
  }
}

function encodeCursor(contribution: Contribution): string {
  return Buffer.from(JSON.stringify([contribution.atNs, contribution.signalId, contribution.cohortId ?? ''])).toString('base64url');
}

function decodeCursor(cursor: string): ContributionPosition {
  const invalid = () => badUserInput('after is not a cursor returned by this connection', 'after');
  let position: unknown;
  try {
    position = JSON.parse(Buffer.from(cursor, 'base64url').toString());
  } catch {
    throw invalid();
  }
  if (!Array.isArray(position) || position.length !== 3) throw invalid();
  const [atNs, signalId, cohortId] = position as unknown[];
  if (!isInt8(atNs) || !isInt8(signalId) || typeof cohortId !== 'string' || cohortId.length > MAX_ID_LENGTH) throw invalid();
  return { atNs, signalId, cohortId };
}

function isInt8(value: unknown): value is string {
  return typeof value === 'string' && /^\d{1,19}$/.test(value) && BigInt(value) <= INT8_MAX;
}
