import type pg from 'pg';
import type { App } from '../../src/app.js';
import type { Operation } from '../../tooling/invariants.js';
import { gql, token } from './harness.js';

/** Bulk leaves and rejoins (src/api/bulk-membership.schema.ts), recorded for the invariant checks. */

export type BulkOutcome = 'CHANGED' | 'UNCHANGED' | 'REFUSED';

export interface BulkResult {
  userId: string;
  outcome: BulkOutcome;
  membership: { status: 'ACTIVE' | 'LEFT'; leftAtNs: string | null } | null;
  refusal: { code: string; message: string } | null;
}

export interface BulkAnswer {
  results: BulkResult[];
  changed: number;
  unchanged: number;
  refused: number;
}

const adminToken = token('privacy-team', 'community:admin', '1h');

const bulkMutation = (field: string) => `mutation ($userIds: [UInt64!]!) {
  ${field}(userIds: $userIds) {
    results { userId outcome membership { status leftAtNs } refusal { code message } }
    changed unchanged refused
  }
}`;

/**
 * One bulk call as a community:admin; its answer, and a leave or rejoin operation per user it did
 * not refuse, spanning the whole call (what the boundary checker needs: the change happened
 * somewhere inside it). Throws on errors.
 */
export async function bulkOn(
  app: App,
  kind: 'leave' | 'rejoin',
  userIds: string[],
  instance: number,
): Promise<{ answer: BulkAnswer; operations: Operation[] }> {
  const field = kind === 'leave' ? 'leaveCommunityLayerMany' : 'rejoinCommunityLayerMany';
  const start = performance.now();
  const response = await gql<Record<string, BulkAnswer>>(app, bulkMutation(field), { userIds }, await adminToken);
  const end = performance.now();
  if (response.errors || !response.data) throw new Error(`${field} failed: ${JSON.stringify(response.errors)}`);
  const answer = response.data[field]!;
  const operations = answer.results
    .filter((result) => result.outcome !== 'REFUSED')
    .map((result) => ({ kind, userId: result.userId, instance, start, end, ok: true }));
  return { answer, operations };
}

/** A single rejoin, with the newest leave of the user as it stands once the rejoin answered. */
export async function rejoinOn(app: App, userId: string, instance: number): Promise<{ operation: Operation; newest: Episode | null }> {
  const start = performance.now();
  const response = await gql(
    app,
    `mutation ($userId: UInt64!) { rejoinCommunityLayer(userId: $userId) { status history(last: 1) { leftAtNs rejoinedAtNs } } }`,
    { userId },
  );
  const end = performance.now();
  const ok = !response.errors;
  const newest = ok ? (response.data!.rejoinCommunityLayer.history[0] ?? null) : null;
  return { operation: { kind: 'rejoin', userId, instance, start, end, ok }, newest };
}

export interface Episode {
  leftAtNs: string;
  rejoinedAtNs: string | null;
}

/** Every user's leave history, oldest first, and their change-feed events, as the database holds them. */
export async function historiesOf(
  db: pg.Client,
  userIds: string[],
): Promise<Map<string, { episodes: Episode[]; events: string[]; status: string }>> {
  const { rows } = await db.query(
    `SELECT u AS user_id,
            coalesce((SELECT json_agg(json_build_object('leftAtNs', e.left_at_ns::text, 'rejoinedAtNs', e.rejoined_at_ns::text) ORDER BY e.left_at_ns)
                        FROM leave_episode e WHERE e.user_id = u::u64), '[]') AS episodes,
            coalesce((SELECT array_agg(v.kind::text ORDER BY v.position) FROM membership_event v WHERE v.user_id = u::u64), '{}') AS events,
            coalesce((SELECT m.status::text FROM community_membership m WHERE m.user_id = u::u64), 'ACTIVE') AS status
       FROM unnest($1::text[]) AS u`,
    [userIds],
  );
  return new Map(rows.map((row) => [row.user_id, { episodes: row.episodes, events: row.events, status: row.status }]));
}
