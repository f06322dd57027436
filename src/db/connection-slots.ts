import { sql, type Kysely } from 'kysely';
import type { Database } from './schema.js';

/** What PostgreSQL allows and holds now: the numbers the start-up warning about connection slots gives. */
export interface ConnectionSlots {
  maxConnections: number;
  superuserReservedConnections: number;
  /** `reserved_connections` (PostgreSQL 16+, for roles with pg_use_reserved_connections); 0 before. */
  reservedConnections: number;
  /** Client sessions of the whole server, this instance's included. */
  sessions: number;
  /** Those of them whose application_name ends in `instanceId` (`sessionName`). */
  ownSessions: number;
}

/**
 * Reads the server's connection limits and its client sessions. A role without pg_read_all_stats sees
 * other roles' sessions with most columns hidden, so those count when their backend type is hidden too
 * but they have a role (background processes have none and take no connection slot).
 */
export async function readConnectionSlots(db: Kysely<Database>, instanceId: string): Promise<ConnectionSlots> {
  const { rows } = await sql<ConnectionSlots>`SELECT
      current_setting('max_connections')::int AS "maxConnections",
      current_setting('superuser_reserved_connections')::int AS "superuserReservedConnections",
      coalesce(current_setting('reserved_connections', true), '0')::int AS "reservedConnections",
      count(*)::int AS sessions,
      count(*) FILTER (WHERE application_name LIKE ${`community-layer % ${instanceId}`})::int AS "ownSessions"
    FROM pg_stat_activity
    WHERE backend_type = 'client backend' OR (backend_type IS NULL AND usesysid IS NOT NULL)`.execute(db);
  return rows[0]!;
}
