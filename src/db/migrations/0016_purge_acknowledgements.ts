import { sql, type Kysely } from 'kysely';
import type { Compatibility } from './compatibility.js';

/** expand: New tables and a type. */
export const compatibility: Compatibility = 'expand';

/**
 * Downstream purge acknowledgements: the processors operators register (each named by the `sub` of
 * its service token), every processor's current state per purge (the last acknowledgement wins),
 * and every change of that state, kept (src/purge/acknowledgement.store.ts owns all three).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE downstream_processor (
      id bigserial PRIMARY KEY,
      -- The token subject (sub) the processor acknowledges with; never a UInt64 (that is a user id).
      subject text NOT NULL UNIQUE CHECK (subject <> '' AND subject !~ '^[0-9]+$'),
      name text NOT NULL CHECK (name <> ''),
      registered_at timestamptz NOT NULL DEFAULT now(),
      retired_at timestamptz
    );

    CREATE TYPE purge_acknowledgement_state AS ENUM ('DONE', 'FAILED');
    CREATE TABLE purge_acknowledgement (
      purge_id bigint NOT NULL REFERENCES community_purge (id) ON DELETE CASCADE,
      processor_id bigint NOT NULL REFERENCES downstream_processor (id),
      state purge_acknowledgement_state NOT NULL,
      reason text,
      acknowledged_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (purge_id, processor_id),
      CONSTRAINT reason_iff_failed CHECK ((state = 'FAILED') = (reason IS NOT NULL))
    );

    -- Append-only: one row per change of a processor's state for a purge (a repeat changes nothing).
    CREATE TABLE purge_acknowledgement_change (
      id bigserial PRIMARY KEY,
      purge_id bigint NOT NULL,
      processor_id bigint NOT NULL,
      state purge_acknowledgement_state NOT NULL,
      reason text,
      acknowledged_at timestamptz NOT NULL,
      FOREIGN KEY (purge_id, processor_id) REFERENCES purge_acknowledgement (purge_id, processor_id) ON DELETE CASCADE
    );
    CREATE INDEX purge_acknowledgement_change_idx ON purge_acknowledgement_change (purge_id, processor_id, id);
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    DROP TABLE purge_acknowledgement_change, purge_acknowledgement, downstream_processor;
    DROP TYPE purge_acknowledgement_state;
  `.execute(db);
}
