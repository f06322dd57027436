import { sql, type Kysely } from 'kysely';
import type { Database, MembershipStatus } from '../db/schema.js';
import type { Consent } from './consent.js';
import type { MembershipWrite } from './membership.store.js';

/**
 * The membership store's bulk writes (see membership.store.ts for the tables it owns): the ids of a
 * call split by lock bucket, and one bucket's users left or rejoined in one statement, which is its
 * own transaction (src/db/sql/leave_community_layer_many.sql).
 */

/** One user's answer from a bulk function; `refusal` is a code (PURGE_IN_PROGRESS) when nothing was tried. */
export interface BulkWrite extends MembershipWrite {
  refusal: string | null;
}

interface BulkRow {
  user_id: string;
  changed: boolean;
  status: MembershipStatus;
  left_at_ns: string | null;
  version: string | null;
  refusal?: string | null;
}

/** The ids grouped by lock bucket, buckets in order: the database says which bucket a user is in. */
export async function groupByBucket(db: Kysely<Database>, userIds: readonly string[]): Promise<string[][]> {
  const { rows } = await sql<{ users: string[] }>`
    SELECT array_agg(u::text ORDER BY u) AS users FROM unnest(${userIds}::u64[]) AS u
     GROUP BY community_user_bucket(u) ORDER BY community_user_bucket(u)`.execute(db);
  return rows.map((row) => row.users);
}

/** Leaves the users of one bucket in one transaction; one answer per user, in the order given. */
export async function leaveBucket(db: Kysely<Database>, userIds: readonly string[], consent: Consent): Promise<BulkWrite[]> {
  const { rows } = await sql<BulkRow>`SELECT * FROM leave_community_layer_many(${userIds}::u64[],
    ${consent.reason}::consent_reason, ${consent.reasonText}::text, ${consent.policyVersion}::text)`.execute(db);
  return rows.map(toBulkWrite);
}

/** Rejoins the users of one bucket in one transaction; a user whose purge runs is refused in place. */
export async function rejoinBucket(db: Kysely<Database>, userIds: readonly string[], consent: Consent): Promise<BulkWrite[]> {
  const { rows } = await sql<BulkRow>`SELECT * FROM rejoin_community_layer_many(${userIds}::u64[],
    ${consent.reason}::consent_reason, ${consent.reasonText}::text, ${consent.policyVersion}::text)`.execute(db);
  return rows.map(toBulkWrite);
}

function toBulkWrite(row: BulkRow): BulkWrite {
  return {
    changed: row.changed,
    refusal: row.refusal ?? null,
    membership: { userId: row.user_id, status: row.status, leftAtNs: row.left_at_ns, version: row.version },
  };
}
