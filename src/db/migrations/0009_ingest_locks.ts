import type { Kysely } from 'kysely';
import { applySqlFiles } from './sql-files.js';

/** ingest_signals v4: a group's shared bucket locks in one statement instead of one per bucket. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await applySqlFiles(db, [['ingest_signals', 4]]);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await applySqlFiles(db, [['ingest_signals', 3]]);
}
