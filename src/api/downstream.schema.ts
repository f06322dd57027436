import { builder } from './builder.js';
import { rules } from './auth-rules.js';
import { PurgeReceiptRef } from './purge.schema.js';
import { badUserInput, forbidden } from '../graphql/errors.js';
import { MAX_PROCESSOR_TEXT, processorInputProblem } from '../purge/processor-input.js';
import type { AcknowledgementChange, DownstreamProcessor, ProcessorState } from '../purge/downstream-processors.js';

const MAX_REASON = 2000;

const AcknowledgementStateEnum = builder.enumType('PurgeAcknowledgementState', {
  description: 'What a downstream processor reports of a purge.',
  values: {
    DONE: { description: "It has removed the user's contributions below the boundary from its own copies." },
    FAILED: { description: 'It could not (yet); the reason says why. Acknowledge again once it has.' },
  } as const,
});

const DownstreamStateEnum = builder.enumType('DownstreamPurgeState', {
  description: 'Where a purge stands in one downstream processor.',
  values: {
    PENDING: { description: 'It has not acknowledged the purge yet.' },
    DONE: { description: 'It reported the purge done.' },
    FAILED: { description: 'It reported the purge failed, with a reason.' },
  } as const,
});

const ProcessorRef = builder.objectRef<DownstreamProcessor>('DownstreamProcessor').implement({
  description: 'A downstream system (a feature store, a warehouse, a training job) that acknowledges purges with its service token.',
  fields: (t) => ({
    id: t.expose('id', { type: 'UInt64', description: 'Identifies the processor.' }),
    subject: t.exposeString('subject', {
      description: "The `sub` of the processor's service token: acknowledgements with it are this processor's.",
    }),
    name: t.exposeString('name', { description: 'What it is called, for people.' }),
    retired: t.boolean({
      description: 'Retired: it no longer counts towards purges, nor may it acknowledge.',
      resolve: (processor) => processor.retired_at !== null,
    }),
  }),
});

const ChangeRef = builder.objectRef<AcknowledgementChange>('PurgeAcknowledgementChange').implement({
  description: 'One acknowledgement that changed a processor’s state for a purge.',
  fields: (t) => ({
    state: t.field({ type: AcknowledgementStateEnum, description: 'The state it reported.', resolve: (change) => change.state }),
    reason: t.exposeString('reason', { nullable: true, description: 'Why it failed; null when DONE.' }),
    at: t.field({ type: 'DateTime', description: 'When it was recorded.', resolve: (change) => change.atNs }),
  }),
});

const ProcessorStateRef = builder.objectRef<ProcessorState>('DownstreamPurgeStatus').implement({
  description: "One processor's state for one purge: its last acknowledgement (last write wins), with every change kept.",
  fields: (t) => ({
    purgeId: t.expose('purgeId', { type: 'UInt64', description: 'The purge.' }),
    processor: t.field({ type: ProcessorRef, description: 'The processor.', resolve: (state) => state.processor }),
    state: t.field({ type: DownstreamStateEnum, description: 'PENDING, DONE or FAILED.', resolve: (state) => state.state }),
    reason: t.exposeString('reason', { nullable: true, description: 'Why it failed; null unless FAILED.' }),
    acknowledgedAt: t.field({
      type: 'DateTime',
      nullable: true,
      description: 'When the current state was first reported; null while PENDING.',
      resolve: (state) => state.atNs,
    }),
    history: t.field({
      type: [ChangeRef],
      description: 'Every change of state, oldest first (a repeated acknowledgement is not a change).',
      resolve: (state) => state.history,
    }),
  }),
});

const DownstreamRef = builder.objectRef<ProcessorState[]>('PurgeDownstream').implement({
  description:
    'The purge in every registered downstream processor: those registered when it was requested, and any that acknowledged it since; retired ones excepted.',
  fields: (t) => ({
    processors: t.field({
      type: [ProcessorStateRef],
      description: 'Each processor’s state, by processor id.',
      resolve: (states) => states,
    }),
    total: t.int({ description: 'Processors counted (M of "removed from N of M systems").', resolve: (states) => states.length }),
    done: t.int({
      description: 'Processors that report it DONE (N).',
      resolve: (states) => states.filter((s) => s.state === 'DONE').length,
    }),
    failed: t.int({
      description: 'Processors that report it FAILED.',
      resolve: (states) => states.filter((s) => s.state === 'FAILED').length,
    }),
    pending: t.int({
      description: 'Processors that have not acknowledged it.',
      resolve: (states) => states.filter((s) => s.state === 'PENDING').length,
    }),
  }),
});

builder.objectField(PurgeReceiptRef, 'downstream', (t) =>
  t.field({
    type: DownstreamRef,
    description: 'Where this purge stands in each downstream processor.',
    resolve: (receipt, _args, { services }) => services.purges.downstream.states(receipt.purgeId),
  }),
);

builder.mutationField('registerDownstreamProcessor', (t) =>
  t.field({
    type: ProcessorRef,
    description:
      'Registers a downstream processor (community:admin). It counts towards purges requested from now on. A subject already registered: PROCESSOR_EXISTS.',
    args: {
      subject: t.arg.string({
        required: true,
        description: 'The `sub` of its service token (a client id; never a UInt64, which names a user).',
      }),
      name: t.arg.string({ required: true, description: `What it is called, for people (1–${MAX_PROCESSOR_TEXT} characters).` }),
    },
    authScopes: rules.verifyAggregates,
    resolve: (_root, { subject, name }, { services }) => {
      const problem = processorInputProblem(subject, name);
      if (problem) throw badUserInput(problem.message, problem.argument);
      return services.purges.downstream.register(subject, name);
    },
  }),
);

builder.mutationField('retireDownstreamProcessor', (t) =>
  t.field({
    type: ProcessorRef,
    nullable: true,
    description:
      'Retires a processor (community:admin): it no longer counts, nor may it acknowledge; its acknowledgements stay. Null for an unknown id.',
    args: { id: t.arg({ type: 'UInt64', required: true, description: 'The processor.' }) },
    authScopes: rules.verifyAggregates,
    resolve: (_root, args, { services }) => services.purges.downstream.retire(args.id).then((processor) => processor ?? null),
  }),
);

builder.queryField('downstreamProcessors', (t) =>
  t.field({
    type: [ProcessorRef],
    description: 'Every registered processor, retired ones too (community:admin).',
    authScopes: rules.verifyAggregates,
    resolve: (_root, _args, { services }) => services.purges.downstream.list(),
  }),
);

builder.mutationField('acknowledgeCommunityPurge', (t) =>
  t.field({
    type: ProcessorStateRef,
    description:
      'A downstream processor reports a purge DONE, or FAILED with a reason, with its service token (community:purge-ack; its `sub` names the registered processor). The last acknowledgement is the state; a repeat changes nothing. Refused, writing nothing: a user token (FORBIDDEN), an unregistered or retired processor (UNKNOWN_PROCESSOR), an unknown purge (PURGE_NOT_FOUND).',
    args: {
      purgeId: t.arg({ type: 'UInt64', required: true, description: 'The purge (PurgeReceipt.purgeId, the feed event’s purgeId).' }),
      state: t.arg({ type: AcknowledgementStateEnum, required: true, description: 'DONE or FAILED.' }),
      reason: t.arg.string({
        required: false,
        description: `Why it failed (1–${MAX_REASON} characters): required with FAILED, refused with DONE.`,
      }),
    },
    authScopes: rules.acknowledgePurge,
    resolve: (_root, args, { services, viewer }) => {
      if (viewer?.userId != null || viewer?.subject == null) {
        throw forbidden(
          'Only the service token of a registered downstream processor (its sub names it) may acknowledge a purge, never a user token.',
        );
      }
      const reason = args.reason ?? null;
      if (args.state === 'FAILED' && (reason === null || reason.trim() === '' || reason.length > MAX_REASON)) {
        throw badUserInput(`a FAILED acknowledgement needs a reason of 1–${MAX_REASON} characters`, 'reason');
      }
      if (args.state === 'DONE' && reason !== null) throw badUserInput('a DONE acknowledgement takes no reason', 'reason');
      return services.purges.downstream.acknowledge({ subject: viewer.subject, purgeId: args.purgeId, state: args.state, reason });
    },
  }),
);
