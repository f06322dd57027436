import { sql, type Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import { DELIVER_TASK } from './dispatcher.js';
import { resetDelivery, type WebhookDelivery } from './webhook.store.js';

/**
 * A replay without a running queue (the operator's CLI): the delivery set PENDING and its job
 * enqueued in one transaction, for whichever instance's worker takes it. Needs graphile-worker's
 * schema, which the first instance to start installs.
 */
export function replayDelivery(db: Kysely<Database>, deliveryId: string): Promise<WebhookDelivery | undefined> {
  return db.transaction().execute(async (trx) => {
    const delivery = await resetDelivery(trx, deliveryId);
    if (delivery) await sql`SELECT graphile_worker.add_job(${DELIVER_TASK}, json_build_object('deliveryId', ${deliveryId}::text))`.execute(trx);
    return delivery;
  });
}
