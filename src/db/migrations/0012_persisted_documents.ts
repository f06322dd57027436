import { sql, type Kysely } from 'kysely';
import type { Compatibility } from './compatibility.js';

/** expand: A new table. */
export const compatibility: Compatibility = 'expand';

/**
 * Persisted documents registered at run time, shared by every instance: by an operator (the
 * `documents:register` CLI; trusted in `only` mode) or by automatic persisted queries in `allow`
 * mode (a client's hash plus query, verified; never trusted in `only` mode). The build's manifest
 * and the files named in GRAPHQL_TRUSTED_DOCUMENTS_FILES are read at start and are not stored here.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE persisted_document (
      id text PRIMARY KEY CHECK (length(id) BETWEEN 1 AND 256),
      body text NOT NULL,
      source text NOT NULL CHECK (source IN ('operator', 'apq')),
      registered_at timestamptz NOT NULL DEFAULT now()
    );
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP TABLE persisted_document`.execute(db);
}
