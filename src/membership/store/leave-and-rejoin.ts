import { sql, type Kysely } from 'kysely';
import type { Database, MembershipStatus } from '../../db/schema.js';
import type { MembershipWrite } from './membership-records.js';

/** Membership store: the two writes, each one call of its boundary function (src/db/sql/). */

interface ChangeRow {
  changed: boolean;
  status: MembershipStatus;
  left_at_ns: string | null;
  version: string | null;
}

/** Leaving twice returns the existing record: the boundary never moves. */
export async function leave(db: Kysely<Database>, userId: string): Promise<MembershipWrite> {
  const { rows } = await sql<ChangeRow>`SELECT * FROM leave_community_layer(${userId})`.execute(db);
  return toChange(userId, rows[0]!);
}

export async function rejoin(db: Kysely<Database>, userId: string): Promise<MembershipWrite> {
  const { rows } = await sql<ChangeRow>`SELECT * FROM rejoin_community_layer(${userId})`.execute(db);
  return toChange(userId, rows[0]!);
}

function toChange(userId: string, row: ChangeRow): MembershipWrite {
  return {
    changed: row.changed,
    membership: { userId, status: row.status, leftAtNs: row.left_at_ns, version: row.version },
  };
}
