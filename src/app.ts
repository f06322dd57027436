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
import { poolUsage } from './db/pool-usage.js';
import { ensureSchema } from './db/migrations/schema-version.js';
import { persistedDocuments } from './db/persisted-documents.js';
import { checkSessionLimits } from './db/session-limits.js';
import { acceptsWrites } from './db/writable.js';
import type { Services } from './api/context.js';
import { membershipSource } from './membership/membership-snapshot.store.js';
import { Memberships } from './membership/memberships.js';
import { MEMBERSHIP_CHANNEL } from './membership/membership-notification.js';
import { MembershipStatusFeed } from './membership/status-feed.js';
import { MembershipChangeFeed } from './membership/change-feed.js';
import { ReceiptSigner } from './auth/receipt-signer.js';
import { createFairShare } from './budgets/fair-share.js';
import { createWebhooks } from './webhooks/webhooks.js';
import { buildInfo } from './observability/build-info.js';
import { Metrics } from './observability/metrics.js';
import { PURGE_CHANNEL } from './purge/purge-notification.js';
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

/** The composition root: everything an instance owns is created here (appParts) and nowhere else. */
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
  const listener = new ChannelListener({
    endpoint: connections.listenEndpoint,
    applicationName: `community-layer listener ${instanceId}`,
    ...config.listener,
    logger,
    onStateChange: (state) => state === 'listening' && durability.recheck(),
  });
  const membership = new MembershipSync({ source: membershipSource(database.db), logger, tracer, ...config.cache, channel: listener });
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
  const { background } = metrics;
  const purges = new PurgeJobs(database.db, purgeDatabase.db, logger, config.purge, subscriptionCaps, tracer, (removed, seconds) => {
    background.purgesFinished.inc();
    background.purgeEntries.inc(removed);
    if (seconds !== null) background.purgeDuration.observe(seconds);
  });
  // Feed streams are capped like status streams: per principal (as per user) and per instance.
  const changeFeed = new MembershipChangeFeed(database.db, new SubscriptionCaps(config.subscriptions), config.downstream, (lag) => background.changeFeedLag.observe(lag));
  const receipts = new ReceiptSigner(config.receiptKey, config.env === 'production');
  // The queue's own pool: its workers, the dispatcher, the liveness session and a sweep. Its commits
  // do not wait for a WAL flush, so the leave's never queues behind them (docs/downstream.md, "Delivery and durability").
  const queueDatabase = connectDatabase({ url: config.database.listenUrl, poolMax: config.webhooks.concurrency + 3, logger, limits: config.database, asynchronousCommit: true });
  const webhooks = createWebhooks({ db: database.db, queueDatabase, settings: config.webhooks, logger, metrics });
  metrics.observeBacklog(async () => {
    const [webhook, purgesRunning] = await Promise.all([webhooks.backlog(), purges.running()]);
    return { webhookPending: webhook.pending, webhookOldestPendingSeconds: webhook.oldestPendingSeconds, webhookDispatchLagSeconds: webhook.dispatchLagSeconds, purgesRunning };
  });
  // The listener's other followers (the membership sync subscribed itself). The feed and the
  // dispatcher read the outbox: any membership notification, or a new session, may mean new rows.
  listener.subscribe({ channel: PURGE_CHANNEL, onNotification: (payload) => purges.notified(payload), onListening: () => purges.feed.resync() });
  listener.subscribe({ channel: MEMBERSHIP_CHANNEL, onNotification: () => changeFeed.wake(), onListening: () => changeFeed.wake() });
  listener.subscribe({ channel: MEMBERSHIP_CHANNEL, onNotification: () => webhooks.wake() });
  const memberships = new Memberships(database.db, membership, (action, changed) =>
    metrics.membershipChanges.inc({ action, result: changed ? 'changed' : 'unchanged' }),
  );
  const signalReads = new SignalReads(database.db);
  // Budgets per caller, cluster-wide (src/budgets); leases on a pool of their own, never behind a request.
  const budgetDatabase = connectDatabase({ url: config.database.url, endpoint: connections.endpoint, poolMax: 1, logger, limits: config.database });
  const fairShare = createFairShare(budgetDatabase.db, logger, config.fairShare);
  const services: Services = { membership: memberships, membershipCache: membership, signals, signalReads, statusFeed, purges, changeFeed, receipts, webhooks, metrics, logger, fairShare };
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
      { name: 'membershipCache', check: async () => membership.inSync },
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
    {
      name: 'start-up checks',
      async start() {
        await receipts.ready();
        await checkSessionLimits(database.db, config.database);
        await durability.start();
        const applied = await ensureSchema(database.db, { migrateOnStart: config.database.migrateOnStart, migrate: () => connections.migrate() });
        if (applied.length > 0) logger.info({ applied }, 'migrations applied');
      },
    },
    ...(followsMembership ? [
      {
        name: 'listener',
        async start() {
          await checkListenSession({
            endpoint: connections.listenEndpoint,
            applicationName: `community-layer listen check ${instanceId}`,
            timeoutMs: config.listener.heartbeatTimeoutMs,
            notify: async (channel, payload) => void (await sql`SELECT pg_notify(${channel}, ${payload})`.execute(database.db)),
          });
          await listener.start(); // the cache is loaded once it resolves
        },
        stop: () => listener.stop(),
      },
      { name: 'membership backstop', start: () => membership.start(), stop: () => membership.stop() },
    ] : []),
    { name: 'event-loop sampler', start: () => transports.startSampling(), stop: () => transports.stopSampling() },
    // In the background: an unreachable identity provider delays readiness, not the start.
    { name: 'auth keys', start: () => keys.start(), stop: () => keys.stop() },
    { name: 'purge database', stop: () => purgeDatabase.close() },
    { name: 'fair share', start: () => fairShare.start(), stop: () => fairShare.stop().finally(() => budgetDatabase.close()) },
    // A refused start closes the queue's own pool too.
    { name: 'webhooks', start: () => webhooks.start().catch((error: unknown) => webhooks.stop().then(() => Promise.reject(error))), stop: () => webhooks.stop() },
    { name: 'purge worker', start: () => purges.start(), stop: () => purges.stop() },
    { name: 'signals', stop: () => signals.drained() },
    { name: 'http', start: async () => void Object.assign(urls, await transports.listen()), stop: () => transports.drain() },
    { name: 'streams', stop: () => { statusFeed.close(); changeFeed.close(); purges.closeStreams(); } },
    // Readiness false from here; a grace period lets load balancers notice before we refuse.
    { name: 'readiness', stop: async () => { transports.stopAccepting(); await delay(config.shutdown.graceMs); } },
  ];
  const instance = { services, instanceId, transportOptions, get url() { return urls.url; }, get metricsUrl() { return urls.metricsUrl; } };
  const pools = () => poolUsage({ request: database.pool, purge: purgeDatabase.pool, 'webhook queue': queueDatabase.pool, 'fair share': budgetDatabase.pool });
  return { instance, parts, logger, pools };
}
