import { rules } from './auth-rules.js';
import { builder } from './builder.js';
import { badUserInput } from '../graphql/errors.js';
import { INT8_MAX } from '../ids/int8.js';
import { decodeCursor, keysetPage } from '../graphql/keyset-connection.js';
import { MAX_ID_LENGTH } from '../signals/signal-input.js';
import type { Contribution, ContributionPosition } from '../signals/signal-reads.js';

const DEFAULT_PAGE = 50;
const MAX_PAGE = 500;

const ContributionRef = builder.objectRef<Contribution>('Contribution').implement({
  description: 'One entry of the contributions ledger: a signal that reached a shared aggregate.',
  fields: (t) => ({
    signalId: t.exposeID('signalId', { description: 'The forwarded signal.' }),
    target: t.exposeString('target', { description: '"community" or the cohort id.' }),
    cohortId: t.exposeID('cohortId', { nullable: true, description: 'The cohort id; null for the community aggregate.' }),
    itemId: t.exposeID('itemId', { description: 'The item the signal was about.' }),
    weight: t.exposeFloat('weight', { description: 'What it added to the aggregate (6 decimals at most).' }),
    atNs: t.expose('atNs', { type: 'UInt64', description: 'Ingest time under the user lock, database clock, ns since the epoch.' }),
  }),
});

const ContributionConnectionRef = builder.connectionObject(
  { type: ContributionRef, name: 'ContributionConnection', description: 'A page of contributions, oldest first.' },
  { description: 'A contribution and its cursor.' },
);

/** The ledger's order: (at_ns, signal_id, cohort id or '' for the community entry). */
type ContributionKey = readonly [atNs: string, signalId: string, cohortId: string];

builder.queryField('communityContributions', (t) =>
  t.field({
    type: ContributionConnectionRef,
    description:
      "The user's entries in the contributions ledger, oldest first (what a retroactive purge would remove). Users may read their own; community:admin anyone's.",
    args: {
      userId: t.arg({ type: 'UInt64', required: true, description: 'Whose contributions.' }),
      first: t.arg.int({ required: false, description: `Page size, 0–${MAX_PAGE} (default ${DEFAULT_PAGE}).` }),
      after: t.arg.string({ required: false, description: 'Continue after this cursor (`pageInfo.endCursor` of the previous page).' }),
    },
    extensions: { cost: { listSize: ({ first }) => first ?? DEFAULT_PAGE } },
    authScopes: (_root, args) => rules.readContributions(args.userId),
    resolve: (_root, args, { services }) => {
      const first = args.first ?? DEFAULT_PAGE;
      if (first < 0 || first > MAX_PAGE) throw badUserInput(`first must be between 0 and ${MAX_PAGE}`, 'first');
      return keysetPage<Contribution, ContributionKey>({
        first,
        after: args.after ? decodeCursor<ContributionKey>(args.after, 'after', isContributionKey) : null,
        keyOf: (node) => [node.atNs, node.signalId, node.cohortId ?? ''],
        load: (after, limit) => services.signalReads.contributions(args.userId, after && toPosition(after), limit),
      });
    },
  }),
);

function toPosition([atNs, signalId, cohortId]: ContributionKey): ContributionPosition {
  return { atNs, signalId, cohortId };
}

function isContributionKey(parts: unknown[]): boolean {
  const [atNs, signalId, cohortId] = parts;
  return parts.length === 3 && isInt8(atNs) && isInt8(signalId) && typeof cohortId === 'string' && cohortId.length <= MAX_ID_LENGTH;
}

function isInt8(value: unknown): value is string {
  return typeof value === 'string' && /^\d{1,19}$/.test(value) && BigInt(value) <= INT8_MAX;
}
