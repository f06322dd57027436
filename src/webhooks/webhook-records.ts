import type { Selectable } from 'kysely';
import type { WebhookDeliveryTable, WebhookEndpointTable } from '../db/schema.js';

/** The webhook rows as the capability hands them out (the stores read and write them). */
export type WebhookEndpoint = Omit<Selectable<WebhookEndpointTable>, 'disabled_position' | 'fast_successes'>;
export type WebhookDelivery = Selectable<WebhookDeliveryTable>;
