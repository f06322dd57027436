import { expect } from 'vitest';
import type { App } from '../../src/app.js';
import { aggregateMismatches } from '../../tooling/invariants.js';
import { type Cluster, eventually, gql } from './harness.js';

/** Purges as tests ask for them: the signals sent first, the leave, the request, its receipts, and the checks that it was exact. */

const SIGNALS = `mutation Send($inputs: [SignalInput!]!) { signals(inputs: $inputs) { forwarded } }`;
export const PURGE = `mutation Purge($userId: UInt64) {
  purgeCommunityContributions(userId: $userId) { purgeId status boundaryNs removedSoFar foundNothing }
}`;
export const RECEIPTS = `query Receipts($userId: UInt64) {
  communityPurges(userId: $userId) {
    purgeId status boundaryNs fromNs requestedAt finishedAt removedSoFar weightRemoved chunks foundNothing
    targets { target cohortId entries weight }
  }
}`;
export const VERIFY = `query { verifyCommunityAggregates { consistent mismatches { target itemId ledgerCount aggregateCount } } }`;

export interface Receipt {
  purgeId: string;
  status: 'RUNNING' | 'FINISHED';
  boundaryNs: string;
  fromNs: string;
  finishedAt: string | null;
  removedSoFar: number;
  weightRemoved: number;
  chunks: number;
  foundNothing: boolean;
  targets: { target: string; cohortId: string | null; entries: number; weight: number }[];
}

/** `count` signals of `userId` over items purge-0…purge-4, each attributed to `cohorts`; weights 1…7. */
export async function send(app: App, userId: string, count: number, cohorts: string[] = ['north', 'south'], offset = 0): Promise<void> {
  for (let start = 0; start < count; start += 200) {
    const inputs = Array.from({ length: Math.min(200, count - start) }, (_, i) => ({
      userId,
      itemId: `purge-${(offset + start + i) % 5}`,
      kind: 'LIKE',
      weight: ((offset + start + i) % 7) + 1,
      context: { cohortIds: cohorts },
    }));
    const response = await gql(app, SIGNALS, { inputs });
    expect(response.errors).toBeUndefined();
  }
}

export async function leave(app: App, userId: string): Promise<void> {
  expect((await gql(app, `mutation { leaveCommunityLayer(userId: "${userId}") { status } }`)).errors).toBeUndefined();
}

export async function purge(app: App, userId: string) {
  return gql<{ purgeCommunityContributions: Receipt }>(app, PURGE, { userId });
}

export async function receipts(app: App, userId: string): Promise<Receipt[]> {
  const response = await gql<{ communityPurges: Receipt[] }>(app, RECEIPTS, { userId });
  expect(response.errors).toBeUndefined();
  return response.data!.communityPurges;
}

export async function finished(app: App, userId: string, timeoutMs = 30_000): Promise<Receipt> {
  let newest: Receipt | undefined;
  await eventually(async () => {
    [newest] = await receipts(app, userId);
    return newest?.status === 'FINISHED';
  }, timeoutMs);
  return newest!;
}

export async function expectExact(app: App, db: Cluster['db']): Promise<void> {
  const verified = await gql(app, VERIFY);
  expect(verified.data?.verifyCommunityAggregates).toEqual({ consistent: true, mismatches: [] });
  expect(await aggregateMismatches(db)).toEqual([]);
}

/** Ledger entries of the user below the boundary, and the user's own signals. */
export async function leftovers(db: Cluster['db'], userId: string, boundaryNs: string): Promise<{ ledger: number; signals: number }> {
  const { rows } = await db.query(
    `SELECT (SELECT count(*) FROM contribution WHERE user_id = $1 AND at_ns < $2)::int AS ledger,
            (SELECT count(*) FROM signal WHERE user_id = $1)::int AS signals`,
    [userId, boundaryNs],
  );
  return rows[0];
}
