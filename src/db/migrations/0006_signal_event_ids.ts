import { sql, type Kysely } from 'kysely';
import type { Compatibility } from './compatibility.js';
import { applySqlFiles } from './sql-files.js';

/** contract: ingest_signals takes a tenth argument: the previous build calls the dropped nine-argument one. */
export const compatibility: Compatibility = 'contract';

/**
 * Idempotent ingestion: a signal may carry an event id, unique per user. The id lives on the signal
 * row (kept exactly as long as the signal, no table of its own), and the unique index leads with
 * user_id like every other per-user index, so it splits with the users when the data is sharded.
 * Partial: signals stored before this migration have none. COLLATE "C": event ids are opaque keys,
 * compared byte by byte, which is also cheaper in the index than a locale's rules.
 *
 * ingest_signals takes the ids as a new last argument, so the old signature is dropped first
 * (CREATE OR REPLACE would add an overload beside it).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    ALTER TABLE signal ADD COLUMN event_id text COLLATE "C"
      CONSTRAINT signal_event_id_length CHECK (char_length(event_id) BETWEEN 1 AND 128);
    CREATE UNIQUE INDEX signal_user_event_idx ON signal (user_id, event_id) WHERE event_id IS NOT NULL;
    DROP FUNCTION ingest_signals(text[], text[], signal_kind[], bigint[], timestamptz[], text[], boolean[], int[], text[]);
  `.execute(db);
  await applySqlFiles(db, [['ingest_signals', 3]]);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    DROP FUNCTION ingest_signals(text[], text[], signal_kind[], bigint[], timestamptz[], text[], boolean[], int[], text[], text[]);
    ALTER TABLE signal DROP COLUMN event_id;
  `.execute(db);
  await applySqlFiles(db, [['ingest_signals', 2]]);
}
