import { AsyncLocalStorage } from 'node:async_hooks';
import { randomBytes } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import { sql } from 'kysely';
import type { Logger } from 'pino';
import { Authenticator } from './auth/authenticate.js';
import { createKeySource } from './auth/create-key-source.js';
import { ChannelListener } from './db/listen/channel-listener.js';
import { checkListenSession } from './db/listen/listen-check.js';
import { MembershipSync } from './membership/cache/membership-sync.js';
import type { AppConfig } from './config/config.js';
import { DurabilityMonitor } from './db/durability-monitor.js';
import { connectDatabase } from './db/database.js';
import { openInstanceDatabase } from './db/instance-database.js';
import { ensureSchema } from './db/migrations/schema-version.js';
import { persistedDocuments } from './db/persisted-documents.js';
import { checkSessionLimits } from './db/session-limits.js';
import { acceptsWrites } from './db/writable.js';
import type { Services } from './api/context.js';
import { membershipSource } from './membership/store/cache-source.js';
import { MembershipStatusFeed } from './membership/status-feed.js';
import { MembershipChangeFeed } from './membership/change-feed.js';
import { ReceiptSigner } from './auth/receipt-signer.js';
import { createFairShare } from './budgets/fair-share.js';
import { WebhookQueue } from './webhooks/webhook-queue.js';
import { Metrics } from './observability/metrics.js';
import { PURGE_CHANNEL } from './purge/purge-notification.js';
import { startTracing } from './observability/tracing.js';
import { PurgeJobs } from './purge/purge-jobs.js';
import { countSignals } from './server/request-observer.js';
import { createTransports } from './server/transports.js';
import { createLogger } from './observability/logger.js';
import type { OperationLimitsPlugin, RequestLayer, RequestScope } from './server/yoga.js';
import { SignalBatcher } from './signals/signal-batcher.js';
import { SubscriptionCaps } from './util/subscription-caps.js';

export interface App {
  /** Checks the schema (migrating it when MIGRATE_ON_START), restores the membership cache, then listens. Resolves when ready to serve. */
  start(): Promise<void>;
  /** Stops accepting, lets in-flight requests finish, then closes listener and pool. */
  stop(): Promise<void>;
  /** The GraphQL endpoint, once started. */
  readonly url: string;
  /** Where Prometheus scrapes, once started (its own listener: METRICS_HOST, METRICS_PORT). */
  readonly metricsUrl: string;
  readonly services: Services;
  /** Distinguishes instances in logs and in pg_stat_activity.application_name. */
  readonly instanceId: string;
}

export interface AppOptions {
  logger?: Logger;
  /**
   * false: never start the membership listener, so the cache never hears of a leave (readiness
   * stays false). Tests use it to prove the database guard alone keeps the boundary.
   */
  membershipSync?: boolean;
  /** Replaces the operation-limits plugin: the benchmark compares the cost model with the limits it replaced. */
  operationLimits?: OperationLimitsPlugin;
  /** Request layers to leave out: the benchmark prices each layer by running without it. */
  without?: readonly RequestLayer[];
}

/** The composition root: everything an instance owns is created here and nowhere else. */
export function createApp(config: AppConfig, options: AppOptions = {}): App {
  const instanceId = randomBytes(4).toString('hex');
  const logger = (options.logger ?? createLogger(config)).child({ instance: instanceId });
  const metrics = new Metrics();
  const tracing = startTracing(config.tracing, instanceId);
  const { tracer } = tracing;
  const traced = tracing.enabled ? { tracer } : {};
  const keys = createKeySource(config.auth, logger);
  metrics.observeKeySource(keys);
  const authenticator = new Authenticator(keys, config.auth, (outcome) => metrics.authVerifications.inc({ outcome }));
  const connections = openInstanceDatabase(config.database, logger, traced);
  const { database, purgeDatabase } = connections;
  const durability = new DurabilityMonitor(database.db, logger, config.database.requireSynchronousCommit, metrics.registry);
  // Another host, or the listener back after a loss (a repointed pooler): the primary may be another.
  connections.endpoint.onHostChange(() => durability.recheck());
  const membership = new MembershipSync({
    source: membershipSource(database.db),
    logger,
    tracer,
    ...config.cache,
    // A session connection of its own for LISTEN (never a transaction pooler).
    openChannel: (handlers) =>
      new ChannelListener({
        endpoint: connections.listenEndpoint,
        applicationName: `community-layer listener ${instanceId}`,
        ...config.listener,
        logger,
        onStateChange: (state) => state === 'listening' && durability.recheck(),
        ...handlers,
        // Purge progress rides the same session: one LISTEN connection per instance.
        also: [{ channel: PURGE_CHANNEL, onNotification: (payload) => purges.notified(payload), onListening: () => purges.feed.resync() }],
      }),
  });
  metrics.observe(membership, database.pool);
  const requestScope = new AsyncLocalStorage<RequestScope>();
  const signals = new SignalBatcher({
    db: database.db, logger, metrics, tracer,
    onAccepted: countSignals(requestScope),
    isLeft: (userId) => membership.cache.isLeft(userId),
    ...config.signals,
  });
  // One set of places for every stream, whatever it follows: the caps and the gauge see them all.
  const subscriptionCaps = new SubscriptionCaps(config.subscriptions);
  const statusFeed = new MembershipStatusFeed(database.db, membership, subscriptionCaps, logger);
  metrics.observeSubscriptions(statusFeed);
  const purges = new PurgeJobs(database.db, purgeDatabase.db, logger, config.purge, subscriptionCaps, tracer);
  // Feed streams are capped like status streams: per principal (as per user) and per instance.
  const changeFeed = new MembershipChangeFeed(database.db, membership, new SubscriptionCaps(config.subscriptions), {
    pageSize: config.downstream.feedPageSize,
    pollMs: config.downstream.feedPollMs,
  });
  const receipts = new ReceiptSigner(config.receiptKey, config.env === 'production');
  const webhooks = new WebhookQueue({
    database: connectDatabase({ url: config.database.listenUrl, poolMax: config.webhooks.concurrency + 2, logger, limits: config.database }),
    ...config.webhooks,
    logger,
  });
  membership.onChange(() => webhooks.wake());
  const fairShare = createFairShare(database.db, logger, config.fairShare); // budgets per caller, cluster-wide (src/budgets)
  const services: Services = { db: database.db, membership, signals, statusFeed, purges, changeFeed, receipts, webhooks, metrics, logger, fairShare };
  const transports = createTransports({
    config,
    services,
    authenticator,
    documents: persistedDocuments(database.db, config.graphql.apqMaxDocuments),
    receiptKeys: () => receipts.jwks(),
    requestScope,
    tracer: tracing.enabled ? tracer : null,
    operationLimits: options.operationLimits,
    without: options.without,
    readiness: [
      { name: 'database', check: () => acceptsWrites(database.db) },
      { name: 'membershipCache', check: async () => membership.inSync },
      { name: 'authKeys', check: async () => keys.loaded },
      { name: 'durableCommits', check: async () => durability.acceptable },
    ],
    readinessDetails: () => ({ durability: durability.current }),
  });
  let [url, metricsUrl] = ['', ''];

  return {
    services,
    instanceId,
    get url() {
      return url;
    },
    get metricsUrl() {
      return metricsUrl;
    },
    async start() {
      try {
        await receipts.ready();
        await checkSessionLimits(database.db, config.database);
        await durability.start();
        const applied = await ensureSchema(database.db, { migrateOnStart: config.database.migrateOnStart, migrate: () => connections.migrate() });
        if (applied.length > 0) logger.info({ applied }, 'migrations applied');
        if (options.membershipSync !== false) {
          await checkListenSession({
            endpoint: connections.listenEndpoint,
            applicationName: `community-layer listen check ${instanceId}`,
            timeoutMs: config.listener.heartbeatTimeoutMs,
            notify: async (channel, payload) => void (await sql`SELECT pg_notify(${channel}, ${payload})`.execute(database.db)),
          });
          await membership.start();
        }
        purges.start();
        await webhooks.start();
        fairShare.start();
      } catch (error) {
        // A refused start leaves nothing open behind it.
        await connections.close();
        await tracing.shutdown();
        throw error;
      }
      // In the background: an unreachable identity provider delays readiness, not the start.
      keys.start();
      ({ url, metricsUrl } = await transports.listen());
    },
    async stop() {
      transports.stopAccepting();
      // Readiness is false from here; a grace period lets load balancers notice before we refuse.
      await delay(config.shutdown.graceMs);
      statusFeed.close();
      changeFeed.close();
      purges.closeStreams();
      await transports.drain();
      await signals.drained();
      await purges.stop();
      await webhooks.stop();
      await fairShare.stop();
      await purgeDatabase.close();
      keys.stop();
      transports.stopSampling();
      await membership.stop();
      await database.close();
      await tracing.shutdown();
      requestScope.disable(); // while enabled, every later async resource in the process carries a slot for it
    },
  };
}
