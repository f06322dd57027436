import { sql, type Kysely } from 'kysely';
import type { DocumentRegistry, Registration } from '../graphql/trusted-documents/registry.js';
import type { Database } from './schema.js';

/** The one owner of `persisted_document`: the run-time registry of persisted documents. */
export function persistedDocuments(db: Kysely<Database>, maxApqDocuments: number): DocumentRegistry {
  return {
    async find(id) {
      const row = await db.selectFrom('persisted_document').select(['body', 'source']).where('id', '=', id).executeTakeFirst();
      return row ? { body: row.body, registeredBy: row.source } : null;
    },
    async register(id, body, by): Promise<Registration> {
      if (by === 'apq') {
        // The cap bounds what anonymous clients can make us store; a racing pair may pass it by one.
        const stored = await db
          .insertInto('persisted_document')
          .columns(['id', 'body', 'source'])
          .expression(
            db
              .selectNoFrom([sql<string>`${id}::text`.as('id'), sql<string>`${body}::text`.as('body'), sql<'apq'>`'apq'`.as('source')])
              .where(
                db
                  .selectFrom('persisted_document')
                  .select((eb) => eb.fn.countAll().as('n'))
                  .where('source', '=', 'apq'),
                '<',
                maxApqDocuments,
              ),
          )
          .onConflict((conflict) => conflict.column('id').doNothing())
          .executeTakeFirst();
        if (Number(stored.numInsertedOrUpdatedRows ?? 0) === 1) return 'stored';
      } else {
        const stored = await db
          .insertInto('persisted_document')
          .values({ id, body, source: 'operator' })
          .onConflict((conflict) => conflict.column('id').doUpdateSet({ source: 'operator' }).where('persisted_document.body', '=', body))
          .executeTakeFirst();
        if (Number(stored.numInsertedOrUpdatedRows ?? 0) === 1) return 'stored';
      }
      const existing = await this.find(id);
      if (existing) return existing.body === body ? 'exists' : 'conflict';
      return 'full';
    },
  };
}
