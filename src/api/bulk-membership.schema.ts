import { builder } from './builder.js';
import { rules } from './auth-rules.js';
import { consentArguments, consentFrom } from './consent.schema.js';
import { CommunityMembershipRef, MEMBERSHIP_CHANGE_WORK } from './membership.schema.js';
import { badUserInput } from '../graphql/errors.js';
import type { FieldAdmission } from '../graphql/field-admission.js';
import type { Viewer } from '../auth/claims.js';
import type { ConsentReason } from '../membership/consent.js';
import {
  MAX_BULK_MEMBERSHIP_CHANGES,
  refusal,
  type BulkMembershipChange,
  type MembershipChangeRefusal,
  type MembershipChangeResult,
} from '../membership/memberships.js';

const OutcomeEnum = builder.enumType('MembershipChangeOutcome', {
  description: 'What a bulk leave or rejoin did for one user.',
  values: {
    CHANGED: { description: 'The status changed, exactly as the one-user mutation would have changed it.' },
    UNCHANGED: { description: 'The user was already in the requested state: nothing written, the existing boundary kept.' },
    REFUSED: { description: 'Nothing was tried for this user; `refusal` says why. The others are not affected.' },
  },
});

const RefusalRef = builder.objectRef<MembershipChangeRefusal>('MembershipChangeRefusal').implement({
  description: 'Why one user of a bulk call was left as they were.',
  fields: (t) => ({
    code: t.exposeString('code', {
      description: 'PURGE_IN_PROGRESS (a rejoin while their purge runs) or RATE_LIMITED (their rejoin limit is spent).',
    }),
    message: t.exposeString('message', { description: 'The same, for people.' }),
  }),
});

const ResultRef = builder.objectRef<MembershipChangeResult>('MembershipChangeResult').implement({
  description: 'One user of a bulk leave or rejoin.',
  fields: (t) => ({
    userId: t.expose('userId', { type: 'UInt64', description: 'The user, as given.' }),
    outcome: t.expose('outcome', { type: OutcomeEnum, description: 'Changed, unchanged or refused.' }),
    membership: t.expose('membership', {
      type: CommunityMembershipRef,
      nullable: true,
      description: 'The state after the call; null when REFUSED.',
    }),
    refusal: t.expose('refusal', { type: RefusalRef, nullable: true, description: 'Null unless REFUSED.' }),
  }),
});

const BulkRef = builder.objectRef<BulkMembershipChange>('BulkMembershipChange').implement({
  description: 'A bulk leave or rejoin, user by user (docs/api.md, "Bulk leave and rejoin").',
  fields: (t) => ({
    results: t.expose('results', { type: [ResultRef], description: 'One per input id, in input order.' }),
    changed: t.exposeInt('changed', { description: 'Users whose status changed.' }),
    unchanged: t.exposeInt('unchanged', { description: 'Users already in the requested state.' }),
    refused: t.exposeInt('refused', { description: 'Users left as they were, each with a refusal.' }),
  }),
});

/** The ids, checked before anything is written: a count within the limit, and each id once (every repeat named). */
function checkedIds(userIds: readonly string[]): string[] {
  if (userIds.length === 0 || userIds.length > MAX_BULK_MEMBERSHIP_CHANGES) {
    throw badUserInput(`userIds must hold 1 to ${MAX_BULK_MEMBERSHIP_CHANGES} user ids (it holds ${userIds.length})`, 'userIds');
  }
  const firstAt = new Map<string, number>();
  const repeats: Array<{ argument: string; message: string }> = [];
  userIds.forEach((userId, index) => {
    const first = firstAt.get(userId);
    if (first === undefined) firstAt.set(userId, index);
    else repeats.push({ argument: `userIds[${index}]`, message: `user ${userId} is named already at userIds[${first}]` });
  });
  if (repeats.length > 0) {
    const [first] = repeats;
    throw badUserInput(`userIds names a user twice: ${first!.message}`, first!.argument, undefined, { invalid: repeats });
  }
  return [...userIds];
}

/** The arguments both share (a fresh set per field); the reason defaults to ADMIN. */
const bulkArguments = () =>
  builder.args((t) => ({
    userIds: t.field({ type: ['UInt64'], required: true, description: `1 to ${MAX_BULK_MEMBERSHIP_CHANGES} distinct user ids.` }),
  }));

const adminConsent = (
  args: { reason?: ConsentReason | null; reasonText?: string | null; policyVersion?: string | null },
  viewer: Viewer | null,
) => consentFrom({ ...args, reason: args.reason ?? 'ADMIN' }, viewer, '');

/** Charged as that many single changes; a bulk leave, like a leave, is never refused by a budget (src/graphql/field-admission.ts). */
const cost = {
  bounded: true,
  listSize: ({ userIds }: { userIds: readonly string[] }) => userIds.length,
  work: ({ userIds }: { userIds: readonly string[] }) => MEMBERSHIP_CHANGE_WORK * userIds.length,
};
const LEAVE_MANY: FieldAdmission = { kind: 'leave' };
const REJOIN_MANY: FieldAdmission = { kind: 'rejoinMany', usersArgument: 'userIds' };

builder.mutationField('leaveCommunityLayerMany', (t) =>
  t.field({
    type: BulkRef,
    description: `Leaves each user as \`leaveCommunityLayer\` would (own boundary, history entry, feed event, webhook), up to ${MAX_BULK_MEMBERSHIP_CHANGES} at once, one transaction per lock bucket; community:admin only. The reason defaults to ADMIN.`,
    args: { ...bulkArguments(), ...consentArguments() },
    extensions: { cost, admission: LEAVE_MANY },
    authScopes: rules.changeMemberships,
    resolve: (_root, args, { services, viewer }) => services.membership.leaveMany(checkedIds(args.userIds), adminConsent(args, viewer)),
  }),
);

builder.mutationField('rejoinCommunityLayerMany', (t) =>
  t.field({
    type: BulkRef,
    description: `Rejoins each user as \`rejoinCommunityLayer\` would, up to ${MAX_BULK_MEMBERSHIP_CHANGES} at once, one transaction per lock bucket; community:admin only. A user whose purge runs (PURGE_IN_PROGRESS) or whose rejoin limit is spent (RATE_LIMITED) is refused in place. The reason defaults to ADMIN.`,
    args: { ...bulkArguments(), ...consentArguments() },
    extensions: { cost, admission: REJOIN_MANY },
    authScopes: rules.changeMemberships,
    resolve: (_root, args, { services, viewer, limitedRejoins }) => {
      const userIds = checkedIds(args.userIds);
      const refused = new Map([...(limitedRejoins ?? [])].map((userId) => [userId, refusal('RATE_LIMITED')] as const));
      return services.membership.rejoinMany(userIds, adminConsent(args, viewer), refused);
    },
  }),
);
