import { AsyncLocalStorage } from 'node:async_hooks';
import { randomBytes } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import type { Logger } from 'pino';
import type { Services } from './api/context.js';
import { listenerParts } from './app/listener-parts.js';
import { readiness } from './app/readiness.js';
import { createServices } from './app/services.js';
import { startUpChecks } from './app/start-up-checks.js';
import { buildTransportOptions } from './app/transport-options.js';
import { Authenticator } from './auth/authenticate.js';
import { createKeySource } from './auth/create-key-source.js';
import type { AppConfig } from './config/config.js';
import { DurabilityMonitor } from './db/durability-monitor.js';
import { openInstanceDatabase } from './db/instance-database.js';
import { ChannelListener } from './db/listen/channel-listener.js';
import { poolUsage } from './db/pool-usage.js';
import { sessionName } from './db/session-names.js';
import { MembershipSync } from './membership/cache/membership-sync.js';
import { membershipSource } from './membership/membership-snapshot.store.js';
import { createLogger } from './observability/logger.js';
import { Metrics } from './observability/metrics.js';
import { metricsExport } from './observability/metrics-export.js';
import { startTracing } from './observability/tracing.js';
import { createTransports, type TransportsOptions } from './server/transports.js';
import type { RequestScope } from './server/yoga.js';
import { lifecycle, type Part } from './util/lifecycle.js';

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
  const tracing = startTracing(config.telemetry, instanceId);
  const { tracer } = tracing;
  const keys = createKeySource(config.auth, logger);
  metrics.observeKeySource(keys);
  const authenticator = new Authenticator(keys, config.auth, (outcome) => metrics.authVerifications.inc({ outcome }));
  const connections = openInstanceDatabase(config.database, logger, instanceId, tracing.enabled ? { tracer } : {});
  const { database, purgeDatabase } = connections;
  const durability = new DurabilityMonitor(database.db, logger, config.database.requireSynchronousCommit, metrics.registry);
  // Another host, or the listener back after a loss (a repointed pooler): the primary may be another.
  connections.endpoint.onHostChange(() => durability.recheck());
  // The instance's one LISTEN session, on a session connection of its own (never a transaction pooler).
  // Its followers subscribe themselves: the membership sync, purge progress, the change feed, the webhook dispatcher.
  const listener = new ChannelListener({
    endpoint: connections.listenEndpoint,
    applicationName: sessionName('listener', instanceId),
    ...config.listener,
    logger,
    onStateChange: (state) => state === 'listening' && durability.recheck(),
  });
  const membershipCache = new MembershipSync({ source: membershipSource(database.db), logger, tracer, ...config.cache, channel: listener });
  metrics.observe(membershipCache, database.pool);
  const requestScope = new AsyncLocalStorage<RequestScope>();
  const {
    services,
    webhooksPart,
    fairSharePart,
    pools: capabilityPools,
  } = createServices({
    config,
    connections,
    listener,
    membershipCache,
    requestScope,
    metrics,
    logger,
    tracer,
    instanceId,
  });
  const { signals, statusFeed, purges, changeFeed, receipts } = services;
  const transportOptions = buildTransportOptions({
    config,
    services,
    authenticator,
    requestScope,
    tracer: tracing.enabled ? tracer : null,
    db: database.db,
    ...readiness({ database, membershipCache, keys, durability }),
  });
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
      ...metricsExport(config.telemetry.metricsExporter, metrics.registry, instanceId, config.telemetry.serviceName, logger),
    },
    startUpChecks({ config, connections, receipts, durability, logger, instanceId }),
    ...(followsMembership ? listenerParts({ config, connections, listener, membershipCache, instanceId }) : []),
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
  const pools = () => poolUsage({ request: database.pool, purge: purgeDatabase.pool, ...capabilityPools });
  return { instance, parts, logger, pools };
}
