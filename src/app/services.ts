import type { AsyncLocalStorage } from 'node:async_hooks';
import type { Tracer } from '@opentelemetry/api';
import type pg from 'pg';
import type { Logger } from 'pino';
import type { Services } from '../api/context.js';
import { ReceiptSigner } from '../auth/receipt-signer.js';
import { signLeaveReceipt, signPurgeReceipt } from '../api/receipt-tokens.js';
import { UserExports } from '../export/user-export.js';
import { createFairShare } from '../budgets/create-fair-share.js';
import type { AppConfig } from '../config/config.js';
import type { InstanceDatabase } from '../db/instance-database.js';
import type { Channel } from '../db/listen/channel-listener.js';
import { sessionName } from '../db/session-names.js';
import { pinnedSession } from '../db/pinned-session.js';
import { MembershipChangeFeed } from '../membership/change-feed.js';
import type { MembershipSync } from '../membership/cache/membership-sync.js';
import { Memberships } from '../membership/memberships.js';
import { MembershipStatusFeed } from '../membership/status-feed.js';
import type { Metrics } from '../observability/metrics.js';
import { PurgeJobs } from '../purge/purge-jobs.js';
import { countSignals } from '../server/request-observer.js';
import type { RequestScope } from '../server/yoga.js';
import { SignalBatcher } from '../signals/signal-batcher.js';
import { SignalStoreReads } from '../signals/signal.store.js';
import type { Part } from '../util/lifecycle.js';
import { SubscriptionCaps } from '../util/subscription-caps.js';
import { createWebhooks } from '../webhooks/webhooks.js';
import { reportBacklog, recordPurgeFinished } from './background-metrics.js';

/** What an instance's capabilities are made over: its connections, its listener, its cache and its observers. */
export interface ServicesOptions {
  config: AppConfig;
  connections: InstanceDatabase;
  listener: Channel;
  membershipCache: MembershipSync;
  requestScope: AsyncLocalStorage<RequestScope>;
  metrics: Metrics;
  logger: Logger;
  tracer: Tracer;
  /** Names the sessions of the pools made here (`sessionName`). */
  instanceId: string;
}

export interface ServicesInstance {
  /** What resolvers reach (src/api/context.ts). */
  services: Services;
  /** The two capabilities with pools of their own, each made and closed by its part. */
  webhooksPart: Part;
  fairSharePart: Part;
  pools: { 'webhook queue': pg.Pool; 'fair share': pg.Pool };
}

/** The capabilities of one instance, made in the order their metrics are registered. */
export function createServices(options: ServicesOptions): ServicesInstance {
  const { config, connections, listener, membershipCache, requestScope, metrics, logger, tracer, instanceId } = options;
  const { database, purgeDatabase } = connections;
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
  const purges = new PurgeJobs(
    database.db,
    purgeDatabase.db,
    listener,
    logger,
    config.purge,
    userStreamCaps,
    tracer,
    recordPurgeFinished(metrics),
  );
  // The change feed's streams have a set of their own, with the same limits: per principal (as per user) and per instance.
  const changeFeed = new MembershipChangeFeed(database.db, listener, new SubscriptionCaps(config.subscriptions), config.downstream, (lag) =>
    metrics.background.changeFeedLag.observe(lag),
  );
  const receipts = new ReceiptSigner(config.receiptKey, config.env === 'production');
  const {
    webhooks,
    part: webhooksPart,
    pool: queuePool,
  } = createWebhooks({
    db: database.db,
    database: config.database,
    channel: listener,
    settings: config.webhooks,
    logger,
    metrics,
    applicationName: sessionName('webhook-queue', instanceId),
  });
  reportBacklog(metrics, webhooks, purges);
  const memberships = new Memberships(database.db, membershipCache, (action, changed) =>
    metrics.membershipChanges.inc({ action, result: changed ? 'changed' : 'unchanged' }),
  );
  // Budgets per caller, cluster-wide (src/budgets).
  const {
    fairShare,
    part: fairSharePart,
    pool: budgetPool,
  } = createFairShare({
    database: config.database,
    endpoint: connections.endpoint,
    config: config.fairShare,
    logger,
    applicationName: sessionName('fair-share', instanceId),
  });
  const services: Services = {
    membership: memberships,
    membershipCache,
    signals,
    signalReads: new SignalStoreReads(database.db),
    statusFeed,
    purges,
    changeFeed,
    receipts,
    webhooks,
    metrics,
    logger,
    fairShare,
    exports: new UserExports(() => pinnedSession(database.pool), config.database.exportStatementTimeoutMs, receipts, {
      leave: (userId, leftAtNs, consent) => signLeaveReceipt(receipts, userId, leftAtNs, consent),
      purge: (purge) => signPurgeReceipt(receipts, purge),
    }),
  };
  return { services, webhooksPart, fairSharePart, pools: { 'webhook queue': queuePool, 'fair share': budgetPool } };
}
