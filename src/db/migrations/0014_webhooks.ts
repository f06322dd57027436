import { sql, type Kysely } from 'kysely';
import type { Compatibility } from './compatibility.js';

/** expand: New tables and a type. */
export const compatibility: Compatibility = 'expand';

/**
 * Webhooks: endpoints operators register, one delivery per (endpoint, feed event), and the
 * dispatcher's cursor into the change feed (membership_event). Deliveries are attempted by
 * graphile-worker jobs (its own schema, installed by its runner); these tables are the record.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE webhook_endpoint (
      id bigserial PRIMARY KEY,
      url text NOT NULL,
      -- Standard Webhooks signing secret, whsec_<base64>.
      secret text NOT NULL,
      event_kinds membership_event_kind[] NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      consecutive_failures int NOT NULL DEFAULT 0,
      disabled_at timestamptz,
      disabled_reason text,
      CONSTRAINT disabled_with_reason CHECK ((disabled_at IS NULL) = (disabled_reason IS NULL))
    );

    CREATE TYPE webhook_delivery_status AS ENUM ('PENDING', 'DELIVERED', 'FAILED');
    CREATE TABLE webhook_delivery (
      id bigserial PRIMARY KEY,
      endpoint_id bigint NOT NULL REFERENCES webhook_endpoint (id) ON DELETE CASCADE,
      event_position bigint NOT NULL REFERENCES membership_event (position),
      status webhook_delivery_status NOT NULL DEFAULT 'PENDING',
      attempts int NOT NULL DEFAULT 0,
      last_status_code int,
      last_error text,
      created_at timestamptz NOT NULL DEFAULT now(),
      delivered_at timestamptz,
      CONSTRAINT webhook_delivery_once UNIQUE (endpoint_id, event_position)
    );
    CREATE INDEX webhook_delivery_endpoint_idx ON webhook_delivery (endpoint_id, id);

    -- How far the dispatcher has turned feed events into deliveries (one row; any instance holds it).
    CREATE TABLE webhook_dispatch (
      singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
      position bigint NOT NULL
    );
    -- Deliveries start with the events recorded from now on.
    INSERT INTO webhook_dispatch (position) SELECT coalesce(max(position), 0) FROM membership_event;
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    DROP TABLE webhook_dispatch, webhook_delivery, webhook_endpoint;
    DROP TYPE webhook_delivery_status;
  `.execute(db);
}
