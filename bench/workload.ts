import { SIGNAL_KINDS, type SignalKind } from '../src/db/schema.js';
import { seededRandom, zipf } from './zipf.js';

export interface WorkloadSizes {
  users: number;
  items: number;
  zipfExponent: number;
  /** Share of users made LEFT before the run. */
  leftShare: number;
  /** Share of users with 1–3 cohorts (fixed per user). */
  cohortShare: number;
}

export interface SignalInputJson {
  userId: string;
  itemId: string;
  kind: SignalKind;
  context: { cohortIds: string[]; surface: string };
  eventId?: string;
}

/** Stands for an event id in a request body; the load client puts a fresh UUID in each (see load.ts). */
export const EVENT_ID_SLOT = '<event-id>';

/** The same input carrying an event id, fresh in every request sent. */
export function withEventId(input: SignalInputJson): SignalInputJson {
  return { ...input, eventId: EVENT_ID_SLOT };
}

export interface Workload {
  userIds: string[];
  leftUserIds: string[];
  nextSignal(): SignalInputJson;
}

const COHORTS = 100;

export const SIGNAL = `mutation ($input: SignalInput!) { signal(input: $input) { signalId status forwarded cohortsAttributed } }`;
export const VALIDATE = `mutation ($input: SignalInput!) { validateSignal(input: $input) }`;
export const SIGNALS = `mutation ($inputs: [SignalInput!]!) { signals(inputs: $inputs) { signalId status forwarded cohortsAttributed } }`;
export const LEAVE = `mutation ($userId: UInt64!) { leaveCommunityLayer(userId: $userId) { status } }`;
export const REJOIN = `mutation ($userId: UInt64!) { rejoinCommunityLayer(userId: $userId) { status } }`;

/** Users uniform, items Zipf-distributed, cohorts fixed per user: the same for a given seed. */
export function createWorkload(sizes: WorkloadSizes, seed = 1): Workload {
  const random = seededRandom(seed);
  const userIds = Array.from({ length: sizes.users }, (_, i) => String(i + 1));
  const cohortsOf = userIds.map(() =>
    random() < sizes.cohortShare
      ? Array.from({ length: 1 + Math.floor(random() * 3) }, () => `cohort-${Math.floor(random() * COHORTS)}`)
      : [],
  );
  const leftUserIds = userIds.filter(() => random() < sizes.leftShare);
  const item = zipf(sizes.items, sizes.zipfExponent, random);
  return {
    userIds,
    leftUserIds,
    nextSignal() {
      const user = Math.floor(random() * sizes.users);
      return {
        userId: userIds[user]!,
        itemId: `item-${item()}`,
        kind: SIGNAL_KINDS[Math.floor(random() * SIGNAL_KINDS.length)]!,
        context: { cohortIds: cohortsOf[user]!, surface: 'feed' },
      };
    },
  };
}

export function body(query: string, variables: Record<string, unknown>): string {
  return JSON.stringify({ query, variables });
}
