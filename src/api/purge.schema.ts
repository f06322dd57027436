import { requireTargetUser, rules, targetUser } from './auth-rules.js';
import { untilTokenExpires } from './token-expiry.js';
import { builder } from './builder.js';
import { badUserInput } from '../graphql/errors.js';
import { validIdArgument } from './signal-validation.js';
import type { PurgeReceipt, PurgeTarget } from '../purge/purge-jobs.js';
import type { AggregateMismatch } from '../signals/signal-reads.js';

const DEFAULT_PURGES = 20;
const MAX_PURGES = 100;

const PurgeStatusEnum = builder.enumType('PurgeStatus', {
  description: 'RUNNING: entries are being removed, chunk by chunk. FINISHED: everything below the boundary is gone.',
  values: {
    RUNNING: { description: 'Entries are being removed, chunk by chunk; `removedSoFar` grows.' },
    FINISHED: { description: 'Every ledger entry of the user below the boundary has been removed.' },
  } as const,
});

const PurgeTargetRef = builder.objectRef<PurgeTarget>('PurgeTarget').implement({
  description: 'What a purge removed from one shared aggregate.',
  fields: (t) => ({
    target: t.exposeString('target', { description: '"community" or the cohort id.' }),
    cohortId: t.exposeID('cohortId', { nullable: true, description: 'The cohort id; null for the community aggregate.' }),
    entries: t.exposeInt('entries', { description: 'Ledger entries removed from this aggregate so far.' }),
    weight: t.exposeFloat('weight', { description: 'The sum of their weights, subtracted from this aggregate.' }),
  }),
});

export const PurgeReceiptRef = builder.objectRef<PurgeReceipt>('PurgeReceipt').implement({
  description:
    "The durable record of one purge: a user's ledger entries below the boundary, removed from the ledger and subtracted from every aggregate they reached. Their own signals stay.",
  fields: (t) => ({
    purgeId: t.expose('purgeId', { type: 'UInt64', description: 'Identifies the purge.' }),
    userId: t.expose('userId', { type: 'UInt64', description: 'Whose contributions.' }),
    status: t.expose('status', { type: PurgeStatusEnum, description: 'RUNNING or FINISHED.' }),
    boundaryNs: t.expose('boundaryNs', {
      type: 'UInt64',
      description: 'The boundary used (the leftAtNs of the leave current at the request): entries with atNs below it are removed.',
    }),
    fromNs: t.expose('fromNs', {
      type: 'UInt64',
      description: "The previous purge's boundary (0 for the first): everything older had already been removed.",
    }),
    requestedAt: t.field({ type: 'DateTime', description: 'When the purge was requested.', resolve: (receipt) => receipt.requestedAtNs }),
    finishedAt: t.field({
      type: 'DateTime',
      nullable: true,
      description: 'When the last entry was removed; null while RUNNING.',
      resolve: (receipt) => receipt.finishedAtNs,
    }),
    removedSoFar: t.exposeInt('removedSoFar', {
      description: 'Ledger entries removed so far, every target together; the total once FINISHED.',
    }),
    weightRemoved: t.exposeFloat('weightRemoved', { description: 'The sum of the removed entries’ weights, every target together.' }),
    chunks: t.exposeInt('chunks', { description: 'Transactions that removed entries (each commits whole or not at all).' }),
    foundNothing: t.boolean({
      description: 'True when the purge found nothing to remove (e.g. a second purge before the next rejoin).',
      resolve: (receipt) => receipt.status === 'FINISHED' && receipt.removedSoFar === 0,
    }),
    targets: t.field({
      type: [PurgeTargetRef],
      description: 'Entries and weight removed per aggregate: the community, then each cohort by id.',
      resolve: (receipt) =>
        [...receipt.targets].sort((a, b) => (a.cohortId === null ? -1 : b.cohortId === null ? 1 : a.target < b.target ? -1 : 1)),
    }),
  }),
});

const userIdArgument = {
  type: 'UInt64',
  required: false,
  description: "Whose contributions; omitted: the caller's own (service callers must name the user).",
} as const;

builder.mutationField('purgeCommunityContributions', (t) =>
  t.field({
    type: PurgeReceiptRef,
    description:
      'Removes every ledger entry of the user (community and cohorts) with atNs below their current boundary, and subtracts exactly those counts and weights from the aggregates. Their own signals stay. Only while LEFT (else the error NOT_LEFT: leave first). Runs as a durable job in chunks: the receipt returned may be RUNNING; follow it with communityPurges or communityPurgeProgress. A request while one runs returns the running one. A rejoin is refused (PURGE_IN_PROGRESS) until it has finished.',
    args: { userId: t.arg(userIdArgument) },
    authScopes: (_root, args, { viewer }) => rules.actOnMembership(targetUser(args.userId, viewer)),
    resolve: (_root, args, { services, viewer }) => services.purges.request(requireTargetUser(args.userId, viewer)),
  }),
);

builder.queryField('communityPurges', (t) =>
  t.field({
    type: [PurgeReceiptRef],
    description: "A user's purge receipts, newest first.",
    args: {
      userId: t.arg(userIdArgument),
      last: t.arg.int({ required: false, defaultValue: DEFAULT_PURGES, description: `How many, 1–${MAX_PURGES}.` }),
    },
    extensions: { cost: { listSize: ({ last }) => last ?? DEFAULT_PURGES } },
    authScopes: (_root, args, { viewer }) => rules.actOnMembership(targetUser(args.userId, viewer)),
    resolve: (_root, args, { services, viewer }) => {
      const last = args.last ?? DEFAULT_PURGES;
      if (last < 1 || last > MAX_PURGES) throw badUserInput(`last must be between 1 and ${MAX_PURGES}`, 'last');
      return services.purges.list(requireTargetUser(args.userId, viewer), last);
    },
  }),
);

builder.subscriptionField('communityPurgeProgress', (t) =>
  t.field({
    type: PurgeReceiptRef,
    description:
      "The user's newest purge receipt now, then whenever its progress moves; completes once it has FINISHED. Nothing is sent while the user has no purge. Over the same transports as communityLayerStatusChanged (server-sent events, graphql-sse, graphql-ws, multipart HTTP), and within the same caps (counted together with status streams, per followed user and per instance: beyond them TOO_MANY_SUBSCRIPTIONS); ends with an UNAUTHENTICATED error when the token expires.",
    args: { userId: t.arg(userIdArgument) },
    authScopes: (_root, args, { viewer }) => rules.actOnMembership(targetUser(args.userId, viewer)),
    subscribe: (_root, args, { services, viewer, tokenExpiresAt }) =>
      untilTokenExpires(services.purges.progress(requireTargetUser(args.userId, viewer)), tokenExpiresAt),
    resolve: (receipt) => receipt,
  }),
);

const AggregateMismatchRef = builder.objectRef<AggregateMismatch>('AggregateMismatch').implement({
  description: 'An aggregate whose shards do not sum to its ledger entries.',
  fields: (t) => ({
    target: t.exposeString('target', { description: '"community" or the cohort id.' }),
    cohortId: t.exposeID('cohortId', { nullable: true, description: 'The cohort id; null for the community aggregate.' }),
    itemId: t.exposeID('itemId', { description: 'The item.' }),
    ledgerCount: t.exposeFloat('ledgerCount', { description: 'Entries in the ledger.' }),
    aggregateCount: t.exposeFloat('aggregateCount', { description: 'signalCount of the aggregate (all shards).' }),
    ledgerWeight: t.exposeFloat('ledgerWeight', { description: 'Sum of the ledger entries’ weights.' }),
    aggregateWeight: t.exposeFloat('aggregateWeight', { description: 'weightSum of the aggregate (all shards).' }),
  }),
});

const AggregateVerificationRef = builder
  .objectRef<{ itemId: string | null; mismatches: AggregateMismatch[] }>('AggregateVerification')
  .implement({
    description: 'Aggregates recomputed from the contributions ledger and compared with the stored ones.',
    fields: (t) => ({
      itemId: t.exposeID('itemId', { nullable: true, description: 'The item checked; null: every item.' }),
      consistent: t.boolean({
        description: 'True when every aggregate equals the sum of its ledger entries.',
        resolve: (result) => result.mismatches.length === 0,
      }),
      mismatches: t.field({
        type: [AggregateMismatchRef],
        description: 'Every aggregate that differs.',
        resolve: (result) => result.mismatches,
      }),
    }),
  });

builder.queryField('verifyCommunityAggregates', (t) =>
  t.field({
    type: AggregateVerificationRef,
    description:
      'Recomputes the community and cohort aggregates (of one item, or all) from the ledger and reports every mismatch. community:admin only; a full check reads the whole ledger.',
    args: { itemId: t.arg.id({ required: false, description: 'Only this item; omitted: every item.' }) },
    authScopes: rules.verifyAggregates,
    resolve: async (_root, args, { services }) => {
      const itemId = args.itemId == null ? null : validIdArgument(String(args.itemId), 'itemId');
      return { itemId, mismatches: await services.signalReads.verifyAggregates(itemId) };
    },
  }),
);
