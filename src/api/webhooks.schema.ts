import { builder } from './builder.js';
import { rules } from './auth-rules.js';
import { MembershipChangeKindEnum } from './feed.schema.js';
import { badUserInput } from '../graphql/errors.js';
import type { WebhookDelivery, WebhookEndpoint } from '../webhooks/webhook-records.js';
import { WebhookRefusal } from '../webhooks/webhooks.js';

const DEFAULT_DELIVERIES = 20;
const MAX_DELIVERIES = 100;

const WebhookDeliveryStatusEnum = builder.enumType('WebhookDeliveryStatus', {
  description: 'Where a delivery stands.',
  values: {
    PENDING: { description: 'Not delivered yet: attempted (again) at its backoff time.' },
    DELIVERED: { description: 'The endpoint answered 2xx.' },
    FAILED: { description: 'Given up: the retry period ended, or the endpoint is disabled. Replay to try again.' },
  } as const,
});

const WebhookEndpointRef = builder.objectRef<WebhookEndpoint>('WebhookEndpoint').implement({
  description: 'A registered receiver of signed change-feed events (Standard Webhooks).',
  fields: (t) => ({
    id: t.expose('id', { type: 'UInt64', description: 'Identifies the endpoint.' }),
    url: t.exposeString('url', { description: 'Where deliveries are POSTed.' }),
    eventKinds: t.expose('event_kinds', { type: [MembershipChangeKindEnum], description: 'The changes it receives.' }),
    consecutiveFailures: t.exposeInt('consecutive_failures', { description: 'Failed attempts since its last success.' }),
    failingSince: t.field({
      type: 'DateTime',
      nullable: true,
      description: 'Since when every attempt has failed; null while it succeeds. Failing for WEBHOOK_DISABLE_AFTER_MS disables it.',
      resolve: (endpoint) => (endpoint.failing_since === null ? null : BigInt(endpoint.failing_since.getTime()) * 1_000_000n),
    }),
    disabled: t.boolean({
      description: 'Deliveries to it are skipped until it is enabled again (which replays them).',
      resolve: (endpoint) => endpoint.disabled_at !== null,
    }),
    disabledReason: t.exposeString('disabled_reason', { nullable: true, description: 'Why it was disabled; null while enabled.' }),
  }),
});

const RegistrationRef = builder.objectRef<WebhookEndpoint>('WebhookEndpointRegistration').implement({
  description: 'A new endpoint and its signing secret, shown only here.',
  fields: (t) => ({
    endpoint: t.field({ type: WebhookEndpointRef, description: 'The endpoint.', resolve: (endpoint) => endpoint }),
    secret: t.exposeString('secret', { description: 'The Standard Webhooks secret (whsec_…) its deliveries are signed with.' }),
  }),
});

const WebhookDeliveryRef = builder.objectRef<WebhookDelivery>('WebhookDelivery').implement({
  description: 'One feed event to one endpoint.',
  fields: (t) => ({
    id: t.expose('id', { type: 'UInt64', description: 'Identifies the delivery (replayWebhookDelivery takes it).' }),
    messageId: t.string({
      description: 'The webhook-id header: the same on every attempt and replay.',
      resolve: (d) => `msg_${d.event_position}`,
    }),
    cursor: t.exposeString('event_position', { description: 'The change’s cursor in the feed.' }),
    status: t.expose('status', { type: WebhookDeliveryStatusEnum, description: 'Where it stands.' }),
    attempts: t.exposeInt('attempts', { description: 'Attempts made.' }),
    lastStatusCode: t.exposeInt('last_status_code', {
      nullable: true,
      description: 'The HTTP status of the last attempt; null when none came.',
    }),
    lastError: t.exposeString('last_error', {
      nullable: true,
      description:
        'Why the last attempt failed: "HTTP <status>", "no response" (refused, reset, timed out, not HTTP, a name not resolved or resolving to an address not allowed: all the same, see docs/downstream.md) or "endpoint disabled".',
    }),
  }),
});

builder.mutationField('registerWebhookEndpoint', (t) =>
  t.field({
    type: RegistrationRef,
    description:
      'Registers an endpoint for the given kinds of change (community:admin). Changes recorded from now on are delivered. Refused (BAD_USER_INPUT, nothing written): a URL longer than 2048 characters or with user info, or an internal address (loopback, private, link-local, cloud metadata…) unless WEBHOOK_ALLOWED_DESTINATIONS admits it.',
    args: {
      url: t.arg.string({ required: true, description: 'An http(s) URL to a public address, without user info, at most 2048 characters.' }),
      eventKinds: t.arg({ type: [MembershipChangeKindEnum], required: true, description: 'The changes to deliver (at least one).' }),
    },
    authScopes: rules.verifyAggregates,
    resolve: async (_root, args, { services }) => {
      try {
        return await services.webhooks.register(args.url, args.eventKinds);
      } catch (error) {
        if (error instanceof WebhookRefusal) throw badUserInput(error.message, error.field);
        throw error;
      }
    },
  }),
);

builder.mutationField('enableWebhookEndpoint', (t) =>
  t.field({
    type: WebhookEndpointRef,
    nullable: true,
    description:
      'Enables a disabled endpoint again, with a clean failure record (community:admin), and replays, in order, what it missed while disabled: its skipped deliveries and the changes recorded meanwhile. Null for an unknown id.',
    args: { id: t.arg({ type: 'UInt64', required: true, description: 'The endpoint.' }) },
    authScopes: rules.verifyAggregates,
    resolve: (_root, args, { services }) => services.webhooks.enable(args.id).then((endpoint) => endpoint ?? null),
  }),
);

builder.mutationField('disableWebhookEndpoint', (t) =>
  t.field({
    type: WebhookEndpointRef,
    nullable: true,
    description:
      'Disables an endpoint by hand, with a reason (community:admin): its pending deliveries are skipped, and enabling it replays them. Null for an unknown id.',
    args: {
      id: t.arg({ type: 'UInt64', required: true, description: 'The endpoint.' }),
      reason: t.arg.string({ required: true, description: 'Why (1–500 characters), shown as disabledReason.' }),
    },
    authScopes: rules.verifyAggregates,
    resolve: (_root, args, { services }) => {
      if (args.reason.trim() === '' || args.reason.length > 500)
        throw badUserInput('reason must be 1–500 characters, not only spaces', 'reason');
      return services.webhooks.disable(args.id, args.reason).then((endpoint) => endpoint ?? null);
    },
  }),
);

builder.queryField('webhookEndpoints', (t) =>
  t.field({
    type: [WebhookEndpointRef],
    description: 'Every registered endpoint (community:admin).',
    authScopes: rules.verifyAggregates,
    resolve: (_root, _args, { services }) => services.webhooks.endpoints(),
  }),
);

builder.queryField('webhookDeliveries', (t) =>
  t.field({
    type: [WebhookDeliveryRef],
    description: "An endpoint's deliveries, newest first (community:admin).",
    args: {
      endpointId: t.arg({ type: 'UInt64', required: true, description: 'The endpoint.' }),
      last: t.arg.int({ required: false, defaultValue: DEFAULT_DELIVERIES, description: `How many, 1–${MAX_DELIVERIES}.` }),
    },
    extensions: { cost: { listSize: ({ last }) => last ?? DEFAULT_DELIVERIES } },
    authScopes: rules.verifyAggregates,
    resolve: (_root, args, { services }) => {
      const last = args.last ?? DEFAULT_DELIVERIES;
      if (last < 1 || last > MAX_DELIVERIES) throw badUserInput(`last must be between 1 and ${MAX_DELIVERIES}`, 'last');
      return services.webhooks.deliveries(args.endpointId, last);
    },
  }),
);

builder.mutationField('replayWebhookDelivery', (t) =>
  t.field({
    type: WebhookDeliveryRef,
    nullable: true,
    description: 'Delivers again, with the same webhook-id, and a fresh retry period (community:admin); null for an unknown id.',
    args: { deliveryId: t.arg({ type: 'UInt64', required: true, description: 'The delivery.' }) },
    authScopes: rules.verifyAggregates,
    resolve: (_root, args, { services }) => services.webhooks.replay(args.deliveryId).then((delivery) => delivery ?? null),
  }),
);
