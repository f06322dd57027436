import type { ColumnType } from 'kysely';

/** `persisted_document` as Kysely sees it, beside its one owner (persisted-documents.ts); src/db/schema.ts composes it into `Database`. */
export interface PersistedDocumentTable {
  id: string;
  body: string;
  source: PersistedDocumentSource;
  registered_at: ColumnType<Date, never, never>;
}

/** `operator`: trusted in every mode; `apq`: registered by a client in `allow` mode, trusted in that mode only. */
export type PersistedDocumentSource = 'operator' | 'apq';
