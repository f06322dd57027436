import type pg from 'pg';
import { expect } from 'vitest';
import type { App } from '../../src/app.js';
import { gql } from './harness.js';
import { subscribe } from './sse.js';

/** The change feed as a downstream reader sees it (test/downstream-feed.test.ts), and the churn it follows. */

export const CHANGES = `subscription Changes($after: String) {
  communityMembershipChanges(after: $after) { id cursor kind userId leftAtNs rejoinedAtNs purgeId }
}`;
export const PAGE = `query Page($after: String, $first: Int) {
  communityMembershipChangePage(after: $after, first: $first) { changes { id kind userId leftAtNs rejoinedAtNs purgeId } endCursor hasMore }
}`;

export interface Change {
  id: string;
  cursor: string;
  kind: string;
  userId: string;
  leftAtNs: string | null;
  rejoinedAtNs: string | null;
  purgeId: string | null;
}

export interface ChangePage {
  changes: Change[];
  endCursor: string | null;
  hasMore: boolean;
}

export async function mutate(app: App, query: string): Promise<void> {
  const response = await gql(app, query);
  expect(response.errors).toBeUndefined();
}

/** Leaves, rejoins and purges of `users`, on `app`, interleaved. */
export async function churn(app: App, users: string[], rounds: number): Promise<void> {
  await Promise.all(
    users.map(async (userId) => {
      for (let round = 0; round < rounds; round++) {
        await mutate(app, `mutation { leaveCommunityLayer(userId: "${userId}") { status } }`);
        if (round % 2 === 0) await mutate(app, `mutation { purgeCommunityContributions(userId: "${userId}") { purgeId } }`);
        await mutate(app, `mutation { rejoinCommunityLayer(userId: "${userId}") { status } }`);
      }
    }),
  );
}

/** What the feed must hold, built from the membership history and the purge receipts. */
export async function expectedEvents(db: pg.Client): Promise<string[]> {
  const episodes = await db.query(`SELECT user_id::text, left_at_ns::text, rejoined_at_ns::text FROM leave_episode`);
  const purges = await db.query(`SELECT id::text, user_id::text, status FROM community_purge`);
  const expected = episodes.rows.flatMap((e) => [
    `LEFT ${e.user_id} ${e.left_at_ns}`,
    ...(e.rejoined_at_ns ? [`REJOINED ${e.user_id} ${e.rejoined_at_ns}`] : []),
  ]);
  for (const p of purges.rows)
    expected.push(`PURGE_REQUESTED ${p.user_id} ${p.id}`, ...(p.status === 'FINISHED' ? [`PURGE_FINISHED ${p.user_id} ${p.id}`] : []));
  return expected.sort();
}

export function describeEvent(change: Change): string {
  return `${change.kind} ${change.userId} ${change.kind === 'LEFT' ? change.leftAtNs : change.kind === 'REJOINED' ? change.rejoinedAtNs : change.purgeId}`;
}

/** Reads a feed stream over SSE, keeping every change, until `enough` holds or the stream ends. */
export async function readUntil(app: App, bearer: string, after: string | null, received: Change[], enough: () => boolean) {
  const stream = await subscribe(app, CHANGES, { after }, bearer);
  expect(stream.status).toBe(200);
  while (!enough()) {
    const event = await stream.next();
    if (event === null) break;
    expect(event.data.errors).toBeUndefined();
    received.push(event.data.data.communityMembershipChanges);
  }
  stream.close();
}
