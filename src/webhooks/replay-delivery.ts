import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import { resetDelivery } from './delivery.store.js';
import { enqueueDeliveries } from './queue.store.js';
import type { WebhookDelivery } from './webhook-records.js';

/**
 * A replay: the delivery set PENDING and its job enqueued in its endpoint's lane in one
 * transaction, for whichever instance's worker takes it (the API and the operator's CLI alike).
 * Needs graphile-worker's schema, which the first instance to start installs.
 */
export function replayDelivery(db: Kysely<Database>, deliveryId: string): Promise<WebhookDelivery | undefined> {
  return db.transaction().execute(async (trx) => {
    const delivery = await resetDelivery(trx, deliveryId);
    if (delivery) await enqueueDeliveries(trx, delivery.endpoint_id, [delivery.id]);
    return delivery;
  });
}
