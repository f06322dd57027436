import type { Generated } from 'kysely';
import type { Int8, MembershipEventKind } from './column-types.js';

/** The tables that tell systems downstream: webhooks, and the processors that acknowledge purges. */

/** Registered by operators (src/webhooks/*.store.ts own the webhook tables). */
export interface WebhookEndpointTable {
  id: Generated<string>;
  url: string;
  secret: string;
  event_kinds: MembershipEventKind[];
  created_at: Generated<Date>;
  consecutive_failures: Generated<number>;
  /** Since when every attempt has failed; null after a success. */
  failing_since: Generated<Date | null>;
  disabled_at: Date | null;
  disabled_reason: string | null;
  /** The dispatcher's cursor when it was disabled: enabling it delivers the events after it. */
  disabled_position: Generated<string | null>;
  /** Attempts in a row answered 2xx within WEBHOOK_SLOW_MS (up to 1000): below WEBHOOK_PROBATION_SUCCESSES, on probation. */
  fast_successes: Generated<number>;
}

export type WebhookDeliveryStatus = 'PENDING' | 'DELIVERED' | 'FAILED';

export interface WebhookDeliveryTable {
  id: Generated<string>;
  endpoint_id: Int8;
  event_position: Int8;
  status: Generated<WebhookDeliveryStatus>;
  attempts: Generated<number>;
  last_status_code: number | null;
  last_error: string | null;
  created_at: Generated<Date>;
  delivered_at: Date | null;
}

export interface WebhookDispatchTable {
  singleton: Generated<boolean>;
  position: Int8;
}

/** A system that acknowledges purges: `subject` is its token's `sub`; once retired it neither counts nor may acknowledge (owner: src/purge/acknowledgement.store.ts, of these 3 tables). */
export interface DownstreamProcessorTable {
  id: Generated<string>;
  subject: string;
  name: string;
  registered_at: Generated<Date>;
  retired_at: Date | null;
}
export type PurgeAcknowledgementState = 'DONE' | 'FAILED';
/** A processor's state for a purge (last acknowledgement wins; `reason` exactly when FAILED); each change is appended to the next. */
export interface PurgeAcknowledgementTable {
  purge_id: Int8;
  processor_id: Int8;
  state: PurgeAcknowledgementState;
  reason: string | null;
  acknowledged_at: Generated<Date>;
}
export type PurgeAcknowledgementChangeTable = Omit<PurgeAcknowledgementTable, 'acknowledged_at'> & {
  id: Generated<string>;
  acknowledged_at: Date;
};
