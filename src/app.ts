import { AsyncLocalStorage } from 'node:async_hooks';
import { randomBytes } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import type { Logger } from 'pino';
import { Authenticator } from './auth/authenticate.js';
import { createKeySource } from './auth/create-key-source.js';
import { ChannelListener } from './db/listen/channel-listener.js';
import { checkListenSession } from './db/listen/listen-check.js';
import { MembershipSync } from './membership/cache/membership-sync.js';
import type { AppConfig } from './config/config.js';
import { DurabilityMonitor } from './db/durability-monitor.js';
import { openInstanceDatabase } from './db/instance-database.js';
import { poolUsage } from './db/pool-usage.js';
import { ensureSchema } from './db/migrations/schema-version.js';
import { persistedDocuments } from './db/persisted-documents.js';
import { checkSessionLimits } from './db/session-limits.js';
import { acceptsWrites } from './db/writable.js';
import type { Services } from './api/context.js';
import { membershipSource } from './membership/membership-snapshot.store.js';
import { Memberships } from './membership/memberships.js';
import { MembershipStatusFeed } from './membership/status-feed.js';
import { MembershipChangeFeed } from './membership/change-feed.js';
import { ReceiptSigner } from './auth/receipt-signer.js';
import { createFairShare } from './budgets/create-fair-share.js';
import { createWebhooks } from './webhooks/webhooks.js';
import { buildInfo } from './observability/build-info.js';
import { Metrics } from './observability/metrics.js';
import { metricsExport } from './observability/metrics-export.js';
import { startTracing } from './observability/tracing.js';
import { PurgeJobs } from './purge/purge-jobs.js';
import { countSignals } from './server/request-observer.js';
import { requestPipeline } from './server/request-pipeline.js';
import { createTransports, type TransportsOptions } from './server/transports.js';
import { createLogger } from './observability/logger.js';
import type { RequestScope } from './server/yoga.js';
import { SignalBatcher } from './signals/signal-batcher.js';
import { SignalReads } from './signals/signal-reads.js';
import { lifecycle, type Part } from './util/lifecycle.js';
import { SubscriptionCaps } from './util/subscription-caps.js';

export interface App {
  /** Starts its parts in order: checks, the schema (migrated when MIGRATE_ON_START), the cache restored, then listens. A refused start leaves nothing running. */
  start(): Promise<void>;
  /** Stops them in reverse: stops accepting, lets in-flight requests finish, then the workers, the listener and the pools. */
  stop(): Promise<void>;
  /** What a start or stop under way is doing: its part, and what each pool holds (a stop that hangs says where). */
  progress(): string;
  /** The GraphQL endpoint, once started. */
  readonly url: string;
  /** Where Prometheus scrapes, once started (its own listener: METRICS_HOST, METRICS_PORT). */
  readonly metricsUrl: string;
  readonly services: Services;
  /** Distinguishes instances in logs and in pg_stat_activity.application_name. */
  readonly instanceId: string;
  /** What its transports are built from: another server over the same instance can be built from them (createTransports). */
  readonly transportOptions: TransportsOptions;
}

export interface AppOptions {
  logger?: Logger;
  /**
   * false: never start the listener, so the cache never hears of a leave (readiness stays false).
   * Tests use it to prove the database guard alone keeps the boundary.
   */
  membershipSync?: boolean;
}

/** An instance built and not started: its parts in start order (stopped in reverse), and the app they make. */
export interface AppParts {
  readonly instance: Omit<App, 'start' | 'stop' | 'progress'>;
  readonly parts: readonly Part[];
  readonly logger: Logger;
  /** Its pools' use, by name (`poolUsage`). */
  readonly pools: () => string;
}

/** The composition root: an instance's parts are made and put in order here (appParts); each part closes what it opens. */
export function createApp(config: AppConfig, options: AppOptions = {}): App {
  const { instance, parts, logger, pools } = appParts(config, options);
  const { start, stop, activity } = lifecycle(parts, {
    onStopFailed: (part, error) => logger.warn({ err: error, part }, 'part failed to stop'),
    onSlowStop: (part, ms) => logger.warn({ part, seconds: Math.round(ms / 1000), pools: pools() }, 'a part is slow to stop'),
  });
  return Object.assign(instance, { start, stop, progress: () => `${activity() ?? 'idle'}; ${pools()}` });
}

export function appParts(config: AppConfig, options: AppOptions = {}): AppParts {
  const instanceId = randomBytes(4).toString('hex');
  const logger = (options.logger ?? createLogger(config)).child({ instance: instanceId });
  const metrics = new Metrics();
  const tracing = startTracing(config.tracing, instanceId);
  const { tracer } = tracing;
  const keys = createKeySource(config.auth, logger);
  metrics.observeKeySource(keys);
  const authenticator = new Authenticator(keys, config.auth, (outcome) => metrics.authVerifications.inc({ outcome }));
  const connections = openInstanceDatabase(config.database, logger, tracing.enabled ? { tracer } : {});
  const { database, purgeDatabase } = connections;
  const durability = new DurabilityMonitor(database.db, logger, config.database.requireSynchronousCommit, metrics.registry);
  // Another host, or the listener back after a loss (a repointed pooler): the primary may be another.
  connections.endpoint.onHostChange(() => durability.recheck());
  // The instance's one LISTEN session, on a session connection of its own (never a transaction pooler).
  // Its followers subscribe themselves: the membership sync, purge progress, the change feed, the webhook dispatcher.
  const listener = new ChannelListener({
    endpoint: connections.listenEndpoint,
    applicationName: `community-layer listener ${instanceId}`,
    ...config.listener,
    logger,
    onStateChange: (state) => state === 'listening' && durability.recheck(),
  });
  const membershipCache = new MembershipSync({ source: membershipSource(database.db), logger, tracer, ...config.cache, channel: listener });
  metrics.observe(membershipCache, database.pool);
  const requestScope = new AsyncLocalStorage<RequestScope>();
  const signals = new SignalBatcher({
    db: database.db,
    logger,
    metrics,
    tracer,
    onAccepted: countSignals(requestScope),
    isLeft: (userId) => membershipCache.cache.isLeft(userId),
    ...config.signals,
  });
  // The streams users follow (status, purge progress) share one set of places, which the gauge counts.
  const userStreamCaps = new SubscriptionCaps(config.subscriptions);
  const statusFeed = new MembershipStatusFeed(database.db, membershipCache, userStreamCaps, logger);
  metrics.observeSubscriptions(statusFeed);
  const { background } = metrics;
  const purges = new PurgeJobs(
    database.db,
    purgeDatabase.db,
    listener,
    logger,
    config.purge,
    userStreamCaps,
    tracer,
    (removed, seconds) => {
      background.purgesFinished.inc();
      background.purgeEntries.inc(removed);
      if (seconds !== null) background.purgeDuration.observe(seconds);
    },
  );
  // The change feed's streams have a set of their own, with the same limits: per principal (as per user) and per instance.
  const changeFeed = new MembershipChangeFeed(database.db, listener, new SubscriptionCaps(config.subscriptions), config.downstream, (lag) =>
    background.changeFeedLag.observe(lag),
  );
  const receipts = new ReceiptSigner(config.receiptKey, config.env === 'production');
  const {
    webhooks,
    part: webhooksPart,
    pool: queuePool,
  } = createWebhooks({ db: database.db, database: config.database, channel: listener, settings: config.webhooks, logger, metrics });
  metrics.observeBacklog(async () => {
    const [webhook, purgesRunning] = await Promise.all([webhooks.backlog(), purges.running()]);
    return {
      webhookPending: webhook.pending,
      webhookOldestPendingSeconds: webhook.oldestPendingSeconds,
      webhookDispatchLagSeconds: webhook.dispatchLagSeconds,
      purgesRunning,
    };
  });
  const memberships = new Memberships(database.db, membershipCache, (action, changed) =>
    metrics.membershipChanges.inc({ action, result: changed ? 'changed' : 'unchanged' }),
  );
  const signalReads = new SignalReads(database.db);
  // Budgets per caller, cluster-wide (src/budgets).
  const {
    fairShare,
    part: fairSharePart,
    pool: budgetPool,
  } = createFairShare({ database: config.database, endpoint: connections.endpoint, config: config.fairShare, logger });
  const services: Services = {
    membership: memberships,
    membershipCache,
    signals,
    signalReads,
    statusFeed,
    purges,
    changeFeed,
    receipts,
    webhooks,
    metrics,
    logger,
    fairShare,
  };
  const documents = persistedDocuments(database.db, config.graphql.apqMaxDocuments);
  const transportOptions: TransportsOptions = {
    config,
    services,
    authenticator,
    requestScope,
    pipeline: requestPipeline({ config, services, authenticator, requestScope, tracer: tracing.enabled ? tracer : null, documents }),
    receiptKeys: () => receipts.jwks(),
    readiness: [
      { name: 'database', check: () => acceptsWrites(database.db) },
      { name: 'membershipCache', check: async () => membershipCache.inSync },
      { name: 'authKeys', check: async () => keys.loaded },
      { name: 'durableCommits', check: async () => durability.acceptable },
    ],
    readinessDetails: () => ({ durability: durability.current, build: buildInfo() }),
  };
  const transports = createTransports(transportOptions);
  const urls = { url: '', metricsUrl: '' };
  const followsMembership = options.membershipSync !== false;
  // Started in this order, stopped in reverse; a part that fails to start stops those before it.
  const parts: Part[] = [
    // While enabled, every later async resource in the process carries a slot for it.
    { name: 'request scope', stop: () => requestScope.disable() },
    { name: 'tracing', stop: () => tracing.shutdown() },
    { name: 'database', stop: () => database.close() },
    // Stopped before the database: the final export still reads the backlog gauges from it.
    {
      name: 'metrics export',
      ...metricsExport(config.tracing.metricsExporter, metrics.registry, instanceId, config.tracing.serviceName, logger),
    },
    {
      name: 'start-up checks',
      async start() {
        await receipts.ready();
        await checkSessionLimits(database.db, config.database);
        await durability.start();
        const applied = await ensureSchema(database.db, {
          migrateOnStart: config.database.migrateOnStart,
          migrate: () => connections.migrate(),
        });
        if (applied.length > 0) logger.info({ applied }, 'migrations applied');
      },
    },
    ...(followsMembership
      ? [
          {
            name: 'listener',
            async start() {
              await checkListenSession({
                endpoint: connections.listenEndpoint,
                applicationName: `community-layer listen check ${instanceId}`,
                timeoutMs: config.listener.heartbeatTimeoutMs,
                db: database.db,
              });
              await listener.start(); // the cache is loaded once it resolves
            },
            stop: () => listener.stop(),
          },
          { name: 'membership backstop', start: () => membershipCache.start(), stop: () => membershipCache.stop() },
        ]
      : []),
    { name: 'event-loop sampler', start: () => transports.startSampling(), stop: () => transports.stopSampling() },
    // In the background: an unreachable identity provider delays readiness, not the start.
    { name: 'auth keys', start: () => keys.start(), stop: () => keys.stop() },
    { name: 'purge database', stop: () => purgeDatabase.close() },
    fairSharePart,
    webhooksPart,
    { name: 'purge worker', start: () => purges.start(), stop: () => purges.stop() },
    { name: 'signals', stop: () => signals.drained() },
    { name: 'http', start: async () => void Object.assign(urls, await transports.listen()), stop: () => transports.drain() },
    {
      name: 'streams',
      stop: () => {
        statusFeed.close();
        changeFeed.close();
        purges.closeStreams();
      },
    },
    // Readiness false from here; a grace period lets load balancers notice before we refuse.
    {
      name: 'readiness',
      stop: async () => {
        transports.stopAccepting();
        await delay(config.shutdown.graceMs);
      },
    },
  ];
  const instance = {
    services,
    instanceId,
    transportOptions,
    get url() {
      return urls.url;
    },
    get metricsUrl() {
      return urls.metricsUrl;
    },
  };
  const pools = () =>
    poolUsage({ request: database.pool, purge: purgeDatabase.pool, 'webhook queue': queuePool, 'fair share': budgetPool });
  return { instance, parts, logger, pools };
}
