import type pg from 'pg';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { backgroundMetrics, observeBacklog, type Backlog } from './background-metrics.js';
import { buildInfo } from './build-info.js';
import { httpResponseMetrics } from './http-metrics.js';
import { observeMembershipCache, type ObservedMembershipCache } from './membership-cache-metrics.js';
import { fairShareMetrics } from './fair-share-metrics.js';
import { observePool } from './pool-metrics.js';
import { mirrorCounter, scrapedGauge } from './scraped-metrics.js';
import { observeSubscriptionFeed, type ObservedSubscriptions } from './subscription-metrics.js';

/** One registry per app instance (never prom-client's global one), so instances can share a process. */
export class Metrics {
  readonly registry = new Registry();
  readonly signals = new Counter({
    name: 'community_signals_total',
    help: 'Signals by outcome: forwarded to shared aggregates, gated (stored for the user only), duplicate (an event id already stored), rejected as invalid, withheld (valid, in a call refused for an invalid sibling). Each signal of a call counts once.',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });
  readonly signalGroupSize = new Histogram({
    name: 'community_signal_group_size',
    help: 'Signals written per group commit.',
    buckets: [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1000],
    registers: [this.registry],
  });
  readonly membershipChanges = new Counter({
    name: 'community_membership_changes_total',
    help: 'Leave and rejoin requests, by whether they changed the status.',
    labelNames: ['action', 'result'] as const,
    registers: [this.registry],
  });
  readonly shedRequests = new Counter({
    name: 'community_signal_requests_shed_total',
    help: 'Signal requests refused at once (503 OVERLOADED): the signal queue was full, or too many batches were already in progress or waiting.',
    registers: [this.registry],
  });
  readonly abandonedSignals = new Counter({
    name: 'community_signals_abandoned_total',
    help: 'Signals dropped unwritten because their client disconnected while they were queued.',
    registers: [this.registry],
  });
  readonly authVerifications = new Counter<'outcome'>({
    name: 'community_auth_verifications_total',
    help: 'Bearer tokens by outcome: verified, cached (verified earlier), or why they were refused.',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });
  readonly webhookEndpointsDisabled = new Counter({
    name: 'community_webhook_endpoints_disabled_total',
    help: 'Webhook endpoints this instance disabled because they kept failing (WEBHOOK_DISABLE_AFTER_MS, WEBHOOK_DISABLE_AFTER_FAILURES); see webhookEndpoints { disabledReason }.',
    registers: [this.registry],
  });
  readonly operationDuration = new Histogram({
    name: 'graphql_operation_duration_seconds',
    help: 'GraphQL execution time by operation (its name when a trusted document names it, else other), type and outcome.',
    labelNames: ['operation', 'type', 'outcome'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [this.registry],
  });
  readonly operations = new Counter({
    name: 'graphql_operations_total',
    help: "GraphQL operations by operation (its name when a trusted document names it, else other), type and outcome (ok; rejected: the caller's error or a limit; failed: the service's, alert on these) and the error code that decided it (none when ok).",
    labelNames: ['operation', 'type', 'outcome', 'code'] as const,
    registers: [this.registry],
  });

  readonly fairShare = fairShareMetrics(this.registry);
  readonly background = backgroundMetrics(this.registry);
  /** Counts one HTTP response by its status class (2xx … 5xx). */
  readonly httpResponse = httpResponseMetrics(this.registry);

  constructor() {
    collectDefaultMetrics({ register: this.registry });
    // Gauges named like counters, which `promtool check metrics` refuses; nodejs_active_*{type} has their sums.
    for (const name of ['nodejs_active_handles_total', 'nodejs_active_requests_total', 'nodejs_active_resources_total'])
      this.registry.removeSingleMetric(name);
    const build = new Gauge({
      name: 'community_layer_build_info',
      help: 'Always 1: the running build\'s version (package.json) and commit ("unknown" when built outside git).',
      labelNames: ['version', 'commit'] as const,
      registers: [this.registry],
    });
    build.set(buildInfo(), 1);
  }

  /** The signal queue's depth, read when scraped. */
  observeSignalQueue(depth: () => number): void {
    scrapedGauge(this.registry, 'community_signal_queue_depth', 'Signals waiting for a group commit on this instance.', depth);
  }

  /** Bulk requests past the door and waiting at it, read when scraped. */
  observeBulkRequests(door: { readonly inProgressCount: number; readonly waitingCount: number }): void {
    scrapedGauge(
      this.registry,
      'community_bulk_requests_in_progress',
      'Requests with bulk bodies (batches) being decoded on this instance.',
      () => door.inProgressCount,
    );
    scrapedGauge(
      this.registry,
      'community_bulk_requests_waiting',
      'Requests with bulk bodies at the door, not decoding: their bodies arriving, or arrived and waiting for a place.',
      () => door.waitingCount,
    );
  }

  /** The token key source's state, read when scraped (fetch counts only for a remote key set). */
  observeKeySource(keys: { readonly loaded: boolean; readonly fetches?: { readonly ok: number; readonly failed: number } }): void {
    scrapedGauge(
      this.registry,
      'community_auth_keys_loaded',
      '1 when the keys that verify tokens are loaded (a remote key set fetched at least once).',
      () => (keys.loaded ? 1 : 0),
    );
    const { fetches } = keys;
    if (!fetches) return;
    mirrorCounter(this.registry, 'community_auth_jwks_fetches_total', 'Successful fetches of the remote key set.', () => fetches.ok);
    mirrorCounter(this.registry, 'community_auth_jwks_fetch_failures_total', 'Failed fetches of the remote key set.', () => fetches.failed);
  }

  /** The deployment's backlog (webhooks, purges), read from the database when scraped. */
  observeBacklog(read: () => Promise<Backlog>): void {
    observeBacklog(this.registry, read);
  }

  /** Gauges and counters read from the sync layer and the pool when scraped. */
  observe(membership: ObservedMembershipCache, pool: pg.Pool): void {
    observeMembershipCache(this.registry, membership);
    observePool(this.registry, pool);
  }

  /** The subscription feed: streams, the users they watch, refusals and the reads they share. */
  observeSubscriptions(feed: ObservedSubscriptions): void {
    observeSubscriptionFeed(this.registry, feed);
  }
}
