import type { Kysely } from 'kysely';
import type pg from 'pg';
import { connectDatabase } from '../db/database.js';
import type { Channel } from '../db/listen/channel-listener.js';
import type { Database, MembershipEventKind } from '../db/schema.js';
import type { DeliveryOutcome } from './delivery-attempt.js';
import { listDeliveries, pendingDeliveries } from './delivery.store.js';
import { dispatchLagSeconds } from './dispatch.store.js';
import { ADDRESS_NOT_ALLOWED, DestinationPolicy } from './destination-policy.js';
import { disableEndpoint, enableEndpoint, listEndpoints, registerEndpoint } from './endpoint.store.js';
import { replayDelivery } from './replay-delivery.js';
import type { Logger } from 'pino';
import type { AppConfig, Config } from '../config/config.js';
import type { Metrics } from '../observability/metrics.js';
import { partOf, type Part } from '../util/lifecycle.js';
import { WebhookQueue } from './webhook-queue.js';
import type { WebhookDelivery, WebhookEndpoint } from './webhook-records.js';

/** A registration refused (a bad URL, user info, an address not allowed): nothing is written. */
export class WebhookRefusal extends Error {
  constructor(
    message: string,
    readonly field: string,
  ) {
    super(message);
    this.name = 'WebhookRefusal';
  }
}

export interface WebhooksOptions {
  /** The request pool: endpoints and deliveries as admins read and change them. */
  db: Kysely<Database>;
  /** DATABASE_LISTEN_URL (a session connection: WebhookQueueOptions.database) and the session limits. */
  database: AppConfig['database'];
  /** The instance's LISTEN session, which the dispatcher follows. */
  channel: Channel;
  settings: Config['webhooks'];
  logger: Logger;
  metrics: Metrics;
  /** The queue's sessions' `application_name`. */
  applicationName: string;
}

export interface WebhooksInstance {
  /** What the API reaches. */
  webhooks: Webhooks;
  /** Starts the queue; stopped, or refused at its start, it stops what it started, then closes the queue's pool. */
  part: Part;
  /** The queue's pool, for its use (`poolUsage`). */
  pool: pg.Pool;
}

/** The capability with its queue, and the queue's own pool, made here and closed by `part`. */
export function createWebhooks({ db, database, channel, settings, logger, metrics, applicationName }: WebhooksOptions): WebhooksInstance {
  // The queue's own pool of WEBHOOK_QUEUE_CONNECTIONS: graphile-worker's LISTEN and the liveness locks hold
  // one each; job fetches and completions, the dispatcher and the sweeps share the rest (a delivery holds
  // none while its receiver answers). Its commits do not wait for a WAL flush, so the leave's never
  // queues behind them (docs/downstream.md, "Delivery and durability").
  const queueDatabase = connectDatabase({
    url: database.listenUrl,
    poolMax: settings.queueConnections,
    applicationName,
    logger,
    limits: database,
    asynchronousCommit: true,
  });
  const destinations = new DestinationPolicy(settings.allowedDestinations);
  const onDisabled = (endpointId: string, reason: string) => {
    metrics.webhookEndpointsDisabled.inc();
    logger.warn({ endpointId, reason }, 'webhook endpoint disabled');
  };
  // The cause the admin API does not tell (refused, silent, not resolved, not allowed: all "no response" there).
  const onFailed = (endpointId: string, deliveryId: string, detail: string) =>
    logger.info({ endpointId, deliveryId, detail }, 'webhook attempt failed');
  const onOutcome = (outcome: DeliveryOutcome, count: number) => metrics.background.webhookDeliveries.inc({ outcome }, count);
  const queue = new WebhookQueue({ ...settings, database: queueDatabase, channel, destinations, logger, onDisabled, onFailed, onOutcome });
  const part = partOf('webhooks', [{ name: 'webhook queue pool', stop: () => queueDatabase.close() }, ...queue.parts()]);
  return { webhooks: new Webhooks(db, destinations), part, pool: queueDatabase.pool };
}

/**
 * The webhooks capability as the API reaches it: endpoints and deliveries on the request pool
 * (the stores); the queue delivers them, on its own connections.
 */
export class Webhooks {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly destinations: DestinationPolicy,
  ) {}

  register(url: string, eventKinds: readonly MembershipEventKind[]): Promise<WebhookEndpoint> {
    const refusal = this.destinations.refusal(url);
    if (refusal !== null)
      throw new WebhookRefusal(
        refusal === ADDRESS_NOT_ALLOWED ? `url: ${refusal} (an internal address; see WEBHOOK_ALLOWED_DESTINATIONS)` : refusal,
        'url',
      );
    if (eventKinds.length === 0) throw new WebhookRefusal('name at least one event kind', 'eventKinds');
    return registerEndpoint(this.db, url, [...new Set(eventKinds)]);
  }

  endpoints(): Promise<WebhookEndpoint[]> {
    return listEndpoints(this.db);
  }

  /** Enabled again, and what it missed while disabled replayed; undefined for an unknown id. */
  enable(id: string): Promise<WebhookEndpoint | undefined> {
    return enableEndpoint(this.db, id);
  }

  disable(id: string, reason: string): Promise<WebhookEndpoint | undefined> {
    return disableEndpoint(this.db, id, reason);
  }

  deliveries(endpointId: string, last: number): Promise<WebhookDelivery[]> {
    return listDeliveries(this.db, endpointId, last);
  }

  /** The deployment's backlog: pending deliveries, the oldest one's age, the dispatcher's lag. */
  async backlog(): Promise<{ pending: number; oldestPendingSeconds: number; dispatchLagSeconds: number }> {
    const [{ pending, oldestSeconds }, lag] = await Promise.all([pendingDeliveries(this.db), dispatchLagSeconds(this.db)]);
    return { pending, oldestPendingSeconds: oldestSeconds, dispatchLagSeconds: lag };
  }

  /** Delivers again (a replay), with the same webhook-id; undefined for an unknown delivery. */
  replay(deliveryId: string): Promise<WebhookDelivery | undefined> {
    return replayDelivery(this.db, deliveryId);
  }
}
