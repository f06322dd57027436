import { builder } from './builder.js';
import { requireTargetUser, rules, targetUser } from './auth-rules.js';
import { untilTokenExpires } from './token-expiry.js';
import { consentArguments, consentFrom, ConsentRecordRef } from './consent.schema.js';
import { badUserInput } from '../graphql/errors.js';
import type { FieldAdmission } from '../graphql/field-admission.js';
import { INT8_MAX } from '../ids/int8.js';
import type { LeaveEpisode as LeaveEpisodeShape, LeavePage, Membership, MembershipState } from '../membership/memberships.js';
import { RECENT_LEAVES } from '../membership/status-reads.js';

const MAX_HISTORY_PAGE = 100;
/**
 * What a leave or rejoin costs beyond its objects: it writes permanent history and a feed event, and
 * every instance applies it (a notification, a cache update, a webhook dispatch pass: about 2 ms of
 * CPU each, docs/performance.md), where a signal costs one instance well under 1 ms.
 */
export const MEMBERSHIP_CHANGE_WORK = 10;

/** A membership; from a subscription it carries the state its subscribers share (newest leaves, count). */
type MembershipView = Membership & { shared?: MembershipState };

/** A leave is never refused by a budget or limit; a rejoin spends the rejoining user's own (src/graphql/field-admission.ts). */
const LEAVE: FieldAdmission = { kind: 'leave' };
const REJOIN: FieldAdmission = { kind: 'rejoin', userArgument: 'userId' };

export const MembershipStatusEnum = builder.enumType('MembershipStatus', {
  description: 'ACTIVE: signals also feed shared aggregates. LEFT: they are kept for the user only.',
  values: {
    ACTIVE: { description: 'Part of the community layer: signals also reach shared aggregates.' },
    LEFT: { description: 'Left the community layer: signals personalize for the user only.' },
  } as const,
});

const LeaveEpisodeRef = builder.objectRef<LeaveEpisodeShape>('LeaveEpisode').implement({
  description: 'One leave: the window [leftAtNs, rejoinedAtNs) in which nothing of the user reached a shared aggregate.',
  fields: (t) => ({
    leftAtNs: t.expose('leftAtNs', { type: 'UInt64', description: 'Nanoseconds since the Unix epoch, database clock.' }),
    rejoinedAtNs: t.expose('rejoinedAtNs', { type: 'UInt64', nullable: true, description: 'Null while this leave is current.' }),
    gatedSignals: t.int({
      description: 'Signals the gate held back from shared aggregates from this leave until the next one.',
      deprecationReason: 'An Int overflows past 2^31 − 1: use gatedSignalTotal.',
      resolve: (episode) => Number(episode.gatedSignals),
    }),
    gatedSignalTotal: t.expose('gatedSignals', {
      type: 'UInt64',
      description: 'Signals the gate held back from shared aggregates from this leave until the next one (exact).',
    }),
    leaveConsent: t.expose('leaveConsent', {
      type: ConsentRecordRef,
      nullable: true,
      description: 'Why the leave happened; null where nothing was recorded (before reasons were, or a change made in SQL).',
    }),
    rejoinConsent: t.expose('rejoinConsent', {
      type: ConsentRecordRef,
      nullable: true,
      description: 'Why the rejoin that closed this leave happened; null while the leave lasts or where nothing was recorded.',
    }),
  }),
});

export const CommunityMembershipRef = builder.objectRef<MembershipView>('CommunityMembership').implement({
  description: "A user's standing in the community personalization layer.",
  fields: (t) => ({
    userId: t.expose('userId', { type: 'UInt64', description: 'Whose standing this is.' }),
    status: t.expose('status', { type: MembershipStatusEnum, description: 'Whether their signals reach shared aggregates now.' }),
    leftAtNs: t.expose('leftAtNs', {
      type: 'UInt64',
      nullable: true,
      description: 'The boundary: nanoseconds since the Unix epoch on the database clock. Null while ACTIVE.',
    }),
    leftAt: t.field({
      type: 'DateTime',
      nullable: true,
      description: 'The same instant as leftAtNs, ISO-8601. Null while ACTIVE.',
      resolve: (membership) => (membership.leftAtNs === null ? null : BigInt(membership.leftAtNs)),
    }),
    history: t.field({
      type: [LeaveEpisodeRef],
      description:
        'Leaves, oldest first: the newest `last` of those that began before `before`. Page back by passing the oldest `leftAtNs` shown as `before`; `leaveCount` says how many there are in all.',
      args: {
        last: t.arg.int({ required: false, defaultValue: RECENT_LEAVES, description: `Page size, 1–${MAX_HISTORY_PAGE}.` }),
        before: t.arg({
          type: 'UInt64',
          required: false,
          description: 'A `leftAtNs`: only leaves that began before it. Omitted: the newest.',
        }),
      },
      extensions: { cost: { listSize: ({ last }) => last ?? RECENT_LEAVES } },
      resolve: (membership, args, { services }) => {
        const page = leavePage(args.last, args.before);
        const shared = membership.shared;
        // A subscription's shared read already holds the newest page: no read per subscriber.
        if (
          shared &&
          page.before === null &&
          (page.last <= shared.recentLeaves.length || shared.recentLeaves.length === shared.leaveCount)
        ) {
          return shared.recentLeaves.slice(-page.last);
        }
        return services.membership.leaves(membership.userId, page);
      },
    }),
    leaveCount: t.int({
      description: 'How many leaves the history holds in all.',
      resolve: (membership, _args, { services }) => membership.shared?.leaveCount ?? services.membership.leaveCount(membership.userId),
    }),
  }),
});

function leavePage(last: number | null | undefined, before: string | null | undefined): LeavePage {
  const size = last ?? RECENT_LEAVES;
  if (size < 1 || size > MAX_HISTORY_PAGE) throw badUserInput(`last must be between 1 and ${MAX_HISTORY_PAGE}`, 'last');
  if (before != null && BigInt(before) > INT8_MAX) throw badUserInput('before must be a leftAtNs (at most 9223372036854775807)', 'before');
  return { last: size, before: before ?? null };
}

const userIdArgument = {
  type: 'UInt64',
  required: false,
  description: "Whose membership; omitted: the caller's own (service callers must name the user).",
} as const;

builder.queryField('communityLayerStatus', (t) =>
  t.field({
    type: CommunityMembershipRef,
    description: 'Where a user stands. A user never seen is ACTIVE with an empty history.',
    args: { userId: t.arg(userIdArgument) },
    authScopes: (_root, args, { viewer }) => rules.actOnMembership(targetUser(args.userId, viewer)),
    resolve: (_root, args, { services, viewer }) => services.membership.find(requireTargetUser(args.userId, viewer)),
  }),
);

builder.mutationField('leaveCommunityLayer', (t) =>
  t.field({
    type: CommunityMembershipRef,
    description:
      'Stops forwarding at once, on every instance, and records the boundary with the reason. Leaving while LEFT changes nothing (and records nothing).',
    args: { userId: t.arg(userIdArgument), ...consentArguments() },
    extensions: { cost: { work: MEMBERSHIP_CHANGE_WORK }, admission: LEAVE },
    authScopes: (_root, args, { viewer }) => rules.actOnMembership(targetUser(args.userId, viewer)),
    resolve: (_root, args, { services, viewer }) => {
      const userId = requireTargetUser(args.userId, viewer);
      return services.membership.leave(userId, consentFrom(args, viewer, userId));
    },
  }),
);

builder.mutationField('rejoinCommunityLayer', (t) =>
  t.field({
    type: CommunityMembershipRef,
    description:
      'Resumes forwarding; history keeps every past leave, with the reason of the rejoin that closed it. Rejoining while ACTIVE changes nothing.',
    args: { userId: t.arg(userIdArgument), ...consentArguments() },
    extensions: { cost: { work: MEMBERSHIP_CHANGE_WORK }, admission: REJOIN },
    authScopes: (_root, args, { viewer }) => rules.actOnMembership(targetUser(args.userId, viewer)),
    resolve: (_root, args, { services, viewer }) => {
      const userId = requireTargetUser(args.userId, viewer);
      return services.membership.rejoin(userId, consentFrom(args, viewer, userId));
    },
  }),
);

builder.subscriptionField('communityLayerStatusChanged', (t) =>
  t.field({
    type: CommunityMembershipRef,
    description:
      'The current state at once, then every change, from any instance (or SQL). Over server-sent events (`Accept: text/event-stream`, or graphql-sse), WebSocket (graphql-ws) or multipart HTTP. Capped per watched user (8 by default) and per instance: beyond a cap, the error TOO_MANY_SUBSCRIPTIONS (HTTP 429 for the user cap, 503 for the instance cap, with Retry-After). Ends with an UNAUTHENTICATED error when the token expires.',
    args: { userId: t.arg(userIdArgument) },
    authScopes: (_root, args, { viewer }) => rules.actOnMembership(targetUser(args.userId, viewer)),
    subscribe: (_root, args, { services, viewer, tokenExpiresAt }) =>
      untilTokenExpires(services.statusFeed.watch(requireTargetUser(args.userId, viewer)), tokenExpiresAt),
    resolve: (state) => ({ ...state.membership, shared: state }),
  }),
);
