import type { Kysely } from 'kysely';
import { applySqlFiles } from './sql-files.js';

/**
 * ingest_signals v6: event ids are checked by the plain insert itself (signal_user_event_idx checks
 * each key in the descent that inserts it, where ON CONFLICT looked each key up first: a second
 * descent per signal). A group with a taken key is rolled back and written again without the
 * signals whose keys are taken or repeat an earlier one in the group.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await applySqlFiles(db, [['ingest_signals', 6]]);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await applySqlFiles(db, [['ingest_signals', 5]]);
}
