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
import { connectDatabase } from './db/database.js';
import { migrateToLatest } from './db/migrations/migrate.js';
import { checkSessionLimits } from './db/session-limits.js';
import { acceptsWrites } from './db/writable.js';
import type { Services } from './api/context.js';
import { operationIds, TrustedDocuments } from './graphql/trusted-documents/trusted-documents.js';
import { membershipSource } from './membership/store/cache-source.js';
import { MembershipStatusFeed } from './membership/status-feed.js';
import { MembershipChangeFeed } from './membership/change-feed.js';
import { SubscriptionCaps } from './membership/subscription-caps.js';
import { ReceiptSigner } from './auth/receipt-signer.js';
import { WebhookQueue } from './webhooks/webhook-queue.js';
import { Metrics } from './observability/metrics.js';
import { PurgeJobs } from './purge/purge-jobs.js';
import { BulkAdmission } from './server/bulk-admission.js';
import { EventLoopLoad } from './server/event-loop-load.js';
import { createHttpServer } from './server/http.js';
import { createMetricsServer } from './server/metrics-server.js';
import { drain, listen } from './server/lifecycle.js';
import { createLogger } from './observability/logger.js';
import { createGraphQLWebSocket } from './server/websocket.js';
import { createGraphQLServer, GRAPHQL_ENDPOINT, type OperationLimitsPlugin, type RequestScope } from './server/yoga.js';
import { createSettingsPage, SETTINGS_OPERATIONS_FILE } from './settings/settings-page.js';
import { SignalBatcher } from './signals/signal-batcher.js';
import { projectRoot } from './util/project-root.js';

export interface App {
  /** Migrates, restores the membership cache, then listens. Resolves when ready to serve. */
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
}

/** The composition root: everything an instance owns is created here and nowhere else. */
export function createApp(config: AppConfig, options: AppOptions = {}): App {
  const instanceId = randomBytes(4).toString('hex');
  const logger = (options.logger ?? createLogger(config)).child({ instance: instanceId });
  const metrics = new Metrics();
  const keys = createKeySource(config.auth, logger);
  metrics.observeKeySource(keys);
  const authenticator = new Authenticator(keys, config.auth, (outcome) => metrics.authVerifications.inc({ outcome }));
  const database = connectDatabase({ url: config.database.url, poolMax: config.database.poolMax, logger, limits: config.database });
  const membership = new MembershipSync({
    source: membershipSource(database.db),
    logger,
    ...config.cache,
    // A session connection of its own for LISTEN (never a transaction pooler).
    openChannel: (handlers) =>
      new ChannelListener({
        connectionString: config.database.listenUrl,
        applicationName: `community-layer listener ${instanceId}`,
        ...config.listener,
        logger,
        ...handlers,
      }),
  });
  metrics.observe(membership, database.pool);
  const signals = new SignalBatcher({
    db: database.db,
    logger,
    metrics,
    isLeft: (userId) => membership.cache.isLeft(userId),
    ...config.signals,
  });
  const statusFeed = new MembershipStatusFeed(database.db, membership, config.subscriptions, logger);
  metrics.observeSubscriptions(statusFeed);
  // The purge worker's own connection: its chunks never wait for, or hold, a request's pool slot.
  const purgeDatabase = connectDatabase({ url: config.database.url, poolMax: 1, logger, limits: config.database });
  const purges = new PurgeJobs(database.db, purgeDatabase.db, logger, config.purge);
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
  const services: Services = { db: database.db, membership, signals, statusFeed, purges, changeFeed, receipts, webhooks, metrics, logger };
  const requestScope = new AsyncLocalStorage<RequestScope>();
  const root = projectRoot();
  const trusted = TrustedDocuments.load(root, config.graphql.trustedDocuments);
  const yoga = createGraphQLServer(config, services, authenticator, requestScope, trusted, options.operationLimits);
  const webSocket = createGraphQLWebSocket({
    yoga,
    trusted,
    bodyLimitBytes: config.http.bodyLimitBytes,
    corsOrigins: config.http.corsOrigins,
  });
  let shuttingDown = false;
  const eventLoop = new EventLoopLoad();
  const bulkAdmission = new BulkAdmission({
    ...config.bulk,
    saturated: () => services.signals.full,
    busy: () => eventLoop.utilization > config.bulk.maxEventLoopUtilization,
  });
  metrics.observeBulkRequests(bulkAdmission);
  const server = createHttpServer({
    yoga,
    webSocket,
    bodyLimitBytes: config.http.bodyLimitBytes,
    bulkAdmission,
    authenticator,
    overloaded: { retryAfterSeconds: config.retryAfterSeconds, onRefused: () => metrics.shedRequests.inc() },
    receiptKeys: () => receipts.jwks(),
    pages: createSettingsPage({ parentOrigins: config.http.corsOrigins, documents: operationIds(root, SETTINGS_OPERATIONS_FILE) }),
    requestScope,
    isShuttingDown: () => shuttingDown,
    readiness: [
      { name: 'database', check: () => acceptsWrites(database.db) },
      { name: 'membershipCache', check: async () => membership.inSync },
      { name: 'authKeys', check: async () => keys.loaded },
    ],
  });
  const metricsServer = createMetricsServer(metrics.registry);
  let url = '';
  let metricsUrl = '';

  /**
   * Kysely's migration lock is a session advisory lock (pg_advisory_lock … pg_advisory_unlock in
   * separate statements): through a transaction pooler the unlock may reach another server session
   * and the lock would leak. Migrations therefore use a short-lived session on the listen URL.
   */
  const migrateOverSession = async (): Promise<string[]> => {
    const session = connectDatabase({ url: config.database.listenUrl, poolMax: 1, logger });
    try {
      return await migrateToLatest(session.db);
    } finally {
      await session.close();
    }
  };

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
        const applied = await migrateOverSession();
        if (applied.length > 0) logger.info({ applied }, 'migrations applied');
        if (options.membershipSync !== false) {
          await checkListenSession({
            connectionString: config.database.listenUrl,
            applicationName: `community-layer listen check ${instanceId}`,
            timeoutMs: config.listener.heartbeatTimeoutMs,
            notify: async (channel, payload) => void (await sql`SELECT pg_notify(${channel}, ${payload})`.execute(database.db)),
          });
          await membership.start();
        }
        purges.start();
        await webhooks.start();
      } catch (error) {
        // A refused start leaves nothing open behind it.
        await database.close();
        throw error;
      }
      // In the background: an unreachable identity provider delays readiness, not the start.
      keys.start();
      eventLoop.start(() => bulkAdmission.next());
      metricsUrl = `${await listen(metricsServer, config.metrics.port, config.metrics.host)}/metrics`;
      url = `${await listen(server, config.http.port, config.http.host)}${GRAPHQL_ENDPOINT}`;
    },
    async stop() {
      shuttingDown = true;
      // Readiness is false from here; a grace period lets load balancers notice before we refuse.
      await delay(config.shutdown.graceMs);
      statusFeed.close();
      changeFeed.close();
      purges.closeStreams();
      await webSocket.close();
      await drain(server, config.shutdown.timeoutMs);
      // Scraped until the API has drained: the last requests still count.
      await drain(metricsServer, config.shutdown.timeoutMs);
      await signals.drained();
      await purges.stop();
      await webhooks.stop();
      await purgeDatabase.close();
      keys.stop();
      eventLoop.stop();
      await membership.stop();
      await database.close();
    },
  };
}
