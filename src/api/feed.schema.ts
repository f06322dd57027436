import { builder } from './builder.js';
import { rules } from './auth-rules.js';
import { untilTokenExpires } from './token-expiry.js';
import { PurgeReceiptRef } from './purge.schema.js';
import { ConsentRecordRef } from './consent.schema.js';
import { signLeaveReceipt } from './receipt-tokens.js';
import { badUserInput } from '../graphql/errors.js';
import { INT8_MAX } from '../ids/int8.js';
import type { MembershipEvent } from '../membership/change-feed.js';

const DEFAULT_PAGE = 100;
const MAX_PAGE = 1000;
const CURSOR = /^\d{1,19}$/;

/** A cursor as given by a change (`cursor`); omitted: from the first event. */
function parseCursor(after: string | null | undefined): bigint {
  if (after == null) return 0n;
  if (!CURSOR.test(after) || BigInt(after) > INT8_MAX) throw badUserInput('after must be the cursor of a change', 'after');
  return BigInt(after);
}

export const MembershipChangeKindEnum = builder.enumType('MembershipChangeKind', {
  description: 'What changed.',
  values: {
    LEFT: { description: 'The user left: leftAtNs is the boundary.' },
    REJOINED: { description: 'The user rejoined: the leave [leftAtNs, rejoinedAtNs) is closed.' },
    PURGE_REQUESTED: { description: 'A purge of the user’s contributions below leftAtNs (its boundary) was requested.' },
    PURGE_FINISHED: { description: 'That purge has removed everything below its boundary.' },
  } as const,
});

const MembershipChangeRef = builder.objectRef<MembershipEvent>('CommunityMembershipChange').implement({
  description: 'One membership change or purge, in the order the database committed them.',
  fields: (t) => ({
    id: t.exposeID('position', { description: 'Identifies the change: a change seen twice (across a resume) has the same id.' }),
    cursor: t.exposeString('position', { description: 'Pass as `after` to continue after this change.' }),
    kind: t.expose('kind', { type: MembershipChangeKindEnum, description: 'What changed.' }),
    userId: t.expose('userId', { type: 'UInt64', description: 'Whose membership.' }),
    leftAtNs: t.expose('leftAtNs', {
      type: 'UInt64',
      nullable: true,
      description: 'LEFT: the boundary; REJOINED: the boundary of the leave it closed; purges: the purge’s boundary.',
    }),
    rejoinedAtNs: t.expose('rejoinedAtNs', { type: 'UInt64', nullable: true, description: 'REJOINED: where the leave ended.' }),
    purgeId: t.expose('purgeId', { type: 'UInt64', nullable: true, description: 'Purge events: the purge.' }),
    consent: t.expose('consent', {
      type: ConsentRecordRef,
      nullable: true,
      description: 'LEFT and REJOINED: why, as recorded with the change; null for purges and where nothing was recorded.',
    }),
    purge: t.field({
      type: PurgeReceiptRef,
      nullable: true,
      description: 'Purge events: the purge’s receipt as it stands now.',
      resolve: (event, _args, { services }) => (event.purgeId === null ? null : services.purges.find(event.purgeId)),
    }),
    signedLeaveReceipt: t.string({
      nullable: true,
      description: 'LEFT: the signed receipt of this leave (see CommunityMembership.signedLeaveReceipt).',
      resolve: (event, _args, { services }) =>
        event.kind === 'LEFT' && event.leftAtNs !== null
          ? signLeaveReceipt(services.receipts, event.userId, event.leftAtNs, event.consent)
          : null,
    }),
    recordedAt: t.field({
      type: 'DateTime',
      description: 'When the change was committed (database clock, microseconds).',
      resolve: (event) => BigInt(event.recordedAt.getTime()) * 1_000_000n,
    }),
  }),
});

interface ChangePage {
  changes: MembershipEvent[];
  endCursor: string | null;
  hasMore: boolean;
}

const ChangePageRef = builder.objectRef<ChangePage>('CommunityMembershipChangePage').implement({
  description: 'A page of the change feed.',
  fields: (t) => ({
    changes: t.field({ type: [MembershipChangeRef], description: 'The changes, oldest first.', resolve: (page) => page.changes }),
    endCursor: t.exposeString('endCursor', {
      nullable: true,
      description: 'The last change’s cursor (pass as `after`); null when the page is empty (ask again with the same `after`).',
    }),
    hasMore: t.exposeBoolean('hasMore', { description: 'More changes are already committed after this page.' }),
  }),
});

const afterArgument = {
  required: false,
  description: 'A change’s `cursor`: only changes after it. Omitted: from the first change.',
} as const;

builder.queryField('communityMembershipChangePage', (t) =>
  t.field({
    type: ChangePageRef,
    description:
      'The change feed for batch jobs: the same changes, in the same order, as communityMembershipChanges. Needs community:feed.',
    args: {
      after: t.arg.string(afterArgument),
      first: t.arg.int({ required: false, defaultValue: DEFAULT_PAGE, description: `Page size, 1–${MAX_PAGE}.` }),
    },
    extensions: { cost: { listSize: ({ first }) => first ?? DEFAULT_PAGE } },
    authScopes: rules.readFeed,
    resolve: async (_root, args, { services }) => {
      const first = args.first ?? DEFAULT_PAGE;
      if (first < 1 || first > MAX_PAGE) throw badUserInput(`first must be between 1 and ${MAX_PAGE}`, 'first');
      const rows = await services.changeFeed.page(parseCursor(args.after), first + 1);
      const changes = rows.slice(0, first);
      return { changes, endCursor: changes.at(-1)?.position ?? null, hasMore: rows.length > first };
    },
  }),
);

builder.subscriptionField('communityMembershipChanges', (t) =>
  t.field({
    type: MembershipChangeRef,
    description:
      'Every membership change and purge after `after`: committed history first, then live, in commit order, from every instance. Resume after a disconnect with the last cursor received: nothing is missed; a change may come again across a resume (same id). Needs community:feed. Over server-sent events, graphql-sse, graphql-ws or multipart HTTP; capped per principal and instance like communityLayerStatusChanged (TOO_MANY_SUBSCRIPTIONS); ends with an UNAUTHENTICATED error when the token expires.',
    args: { after: t.arg.string(afterArgument) },
    authScopes: rules.readFeed,
    subscribe: (_root, args, { services, viewer, tokenExpiresAt }) =>
      untilTokenExpires(services.changeFeed.changes(parseCursor(args.after), viewer?.subject ?? ''), tokenExpiresAt),
    resolve: (event) => event,
  }),
);
