import type { Kysely } from 'kysely';
import type { Compatibility } from './compatibility.js';
import { applySqlFiles } from './sql-files.js';

/** expand: ingest_signals replaced with the same signature. */
export const compatibility: Compatibility = 'expand';

/** ingest_signals v4: a group's shared bucket locks in one statement instead of one per bucket. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await applySqlFiles(db, [['ingest_signals', 4]]);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await applySqlFiles(db, [['ingest_signals', 3]]);
}
