import { builder } from '../graphql/builder.js';
import type { Services } from '../graphql/context.js';
import { requireTargetUser, rules, targetUser } from '../auth/rules.js';
import { untilTokenExpires } from '../auth/token-expiry.js';
import { nanosToIso } from '../graphql/scalars.js';
import {
  findMembership,
  leave,
  listLeaveEpisodes,
  rejoin,
  type LeaveEpisode as LeaveEpisodeShape,
  type Membership,
  type MembershipWrite,
} from './membership.repository.js';

/**
 * Answers once this instance's cache reflects the write, so the caller's next signal here takes
 * the fast path it expects (right after a rejoin, a stale LEFT would otherwise hold it back).
 * Other instances catch up within the notification delay; until then they err on the side of LEFT.
 */
async function readYourWrite(services: Services, action: 'leave' | 'rejoin', change: MembershipWrite): Promise<Membership> {
  services.metrics.membershipChanges.inc({ action, result: change.changed ? 'changed' : 'unchanged' });
  const { version } = change.membership;
  if (version !== null) await services.membership.caughtUp(BigInt(version));
  return change.membership;
}

export const MembershipStatusEnum = builder.enumType('MembershipStatus', {
  description: 'ACTIVE: signals also feed shared aggregates. LEFT: they are kept for the user only.',
  values: ['ACTIVE', 'LEFT'] as const,
});

const LeaveEpisodeRef = builder.objectRef<LeaveEpisodeShape>('LeaveEpisode').implement({
  description: 'One leave: the window [leftAtNs, rejoinedAtNs) in which nothing of the user reached a shared aggregate.',
  fields: (t) => ({
    leftAtNs: t.expose('leftAtNs', { type: 'UInt64', description: 'Nanoseconds since the Unix epoch, database clock.' }),
    rejoinedAtNs: t.expose('rejoinedAtNs', { type: 'UInt64', nullable: true, description: 'Null while this leave is current.' }),
    gatedSignals: t.exposeInt('gatedSignals', {
      description: 'Signals the gate held back from shared aggregates from this leave until the next one.',
    }),
  }),
});

export const CommunityMembershipRef = builder.objectRef<Membership>('CommunityMembership').implement({
  description: "A user's standing in the community personalization layer.",
  fields: (t) => ({
    userId: t.expose('userId', { type: 'UInt64' }),
    status: t.expose('status', { type: MembershipStatusEnum }),
    leftAtNs: t.expose('leftAtNs', {
      type: 'UInt64',
      nullable: true,
      description: 'The boundary: nanoseconds since the Unix epoch on the database clock. Null while ACTIVE.',
    }),
    leftAt: t.field({
      type: 'DateTime',
      nullable: true,
      description: 'The same instant as leftAtNs, ISO-8601. Null while ACTIVE.',
      resolve: (membership) => (membership.leftAtNs === null ? null : nanosToIso(membership.leftAtNs)),
    }),
    history: t.field({
      type: [LeaveEpisodeRef],
      description: 'Every leave, oldest first, including the current one.',
      resolve: (membership, _args, { services }) => listLeaveEpisodes(services.db, membership.userId),
    }),
  }),
});

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
    resolve: (_root, args, { services, viewer }) => findMembership(services.db, requireTargetUser(args.userId, viewer)),
  }),
);

builder.mutationField('leaveCommunityLayer', (t) =>
  t.field({
    type: CommunityMembershipRef,
    description:
      'Stops forwarding at once, on every instance, and records the boundary. Leaving while LEFT changes nothing.',
    args: { userId: t.arg(userIdArgument) },
    authScopes: (_root, args, { viewer }) => rules.actOnMembership(targetUser(args.userId, viewer)),
    resolve: async (_root, args, { services, viewer }) =>
      readYourWrite(services, 'leave', await leave(services.db, requireTargetUser(args.userId, viewer))),
  }),
);

builder.mutationField('rejoinCommunityLayer', (t) =>
  t.field({
    type: CommunityMembershipRef,
    description: 'Resumes forwarding; history keeps every past leave. Rejoining while ACTIVE changes nothing.',
    args: { userId: t.arg(userIdArgument) },
    authScopes: (_root, args, { viewer }) => rules.actOnMembership(targetUser(args.userId, viewer)),
    resolve: async (_root, args, { services, viewer }) =>
      readYourWrite(services, 'rejoin', await rejoin(services.db, requireTargetUser(args.userId, viewer))),
  }),
);

builder.subscriptionField('communityLayerStatusChanged', (t) =>
  t.field({
    type: CommunityMembershipRef,
    description:
      'The current state at once, then every change, from any instance (or SQL). Over server-sent events: POST with `Accept: text/event-stream`. Ends with an UNAUTHENTICATED error when the token expires.',
    args: { userId: t.arg(userIdArgument) },
    authScopes: (_root, args, { viewer }) => rules.actOnMembership(targetUser(args.userId, viewer)),
    subscribe: (_root, args, { services, viewer, tokenExpiresAt }) =>
      untilTokenExpires(services.statusFeed.watch(requireTargetUser(args.userId, viewer)), tokenExpiresAt),
    resolve: (membership) => membership,
  }),
);
