import type pg from 'pg';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/** What the membership cache shows of itself (structural: metrics import no capability). */
export interface ObservedMembershipCache {
  readonly cache: { readonly size: number };
  readonly inSync: boolean;
  readonly listenerState: string;
  readonly counters: Readonly<{ resyncs: number; fullReloads: number; ignoredNotifications: number; reconnects: number }>;
  onChange(listener: (change: unknown, sentAtUs: bigint) => void): unknown;
}

/** What a subscription feed shows of itself. */
export interface ObservedSubscriptions {
  readonly subscribers: number;
  readonly watchedUsers: number;
  readonly counters: Readonly<{ reads: number; failedReads: number; refused: { perUser: number; perInstance: number } }>;
}

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
  readonly operationDuration = new Histogram({
    name: 'graphql_operation_duration_seconds',
    help: 'GraphQL execution time by operation name and type.',
    labelNames: ['operation', 'type'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [this.registry],
  });

  constructor() {
    collectDefaultMetrics({ register: this.registry });
  }

  /** The signal queue's depth, read when scraped. */
  observeSignalQueue(depth: () => number): void {
    new Gauge({
      name: 'community_signal_queue_depth',
      help: 'Signals waiting for a group commit on this instance.',
      registers: [this.registry],
      collect() {
        this.set(depth());
      },
    });
  }

  /** Bulk requests past the door and waiting at it, read when scraped. */
  observeBulkRequests(door: { readonly inProgressCount: number; readonly waitingCount: number }): void {
    new Gauge({
      name: 'community_bulk_requests_in_progress',
      help: 'Requests with bulk bodies (batches) being read, decoded or written on this instance.',
      registers: [this.registry],
      collect() {
        this.set(door.inProgressCount);
      },
    });
    new Gauge({
      name: 'community_bulk_requests_waiting',
      help: 'Requests with bulk bodies waiting, unread, for one ahead of them to finish.',
      registers: [this.registry],
      collect() {
        this.set(door.waitingCount);
      },
    });
  }

  /** The token key source's state, read when scraped (fetch counts only for a remote key set). */
  observeKeySource(keys: { readonly loaded: boolean; readonly fetches?: { readonly ok: number; readonly failed: number } }): void {
    const registers = [this.registry];
    new Gauge({
      name: 'community_auth_keys_loaded',
      help: '1 when the keys that verify tokens are loaded (a remote key set fetched at least once).',
      registers,
      collect() {
        this.set(keys.loaded ? 1 : 0);
      },
    });
    const { fetches } = keys;
    if (!fetches) return;
    mirrorCounter(registers, 'community_auth_jwks_fetches_total', 'Successful fetches of the remote key set.', () => fetches.ok);
    mirrorCounter(registers, 'community_auth_jwks_fetch_failures_total', 'Failed fetches of the remote key set.', () => fetches.failed);
  }

  /** Gauges and counters read from the sync layer and the pool when scraped. */
  observe(membership: ObservedMembershipCache, pool: pg.Pool): void {
    const registers = [this.registry];
    new Gauge({
      name: 'community_cache_entries',
      help: 'Users currently LEFT in this instance’s membership cache.',
      registers,
      collect() {
        this.set(membership.cache.size);
      },
    });
    new Gauge({
      name: 'community_cache_in_sync',
      help: '1 when the membership cache is in sync (listener up, snapshot applied).',
      registers,
      collect() {
        this.set(membership.inSync ? 1 : 0);
      },
    });
    new Gauge({
      name: 'community_listener_state',
      help: 'The membership listener connection state (1 for the current one).',
      labelNames: ['state'] as const,
      registers,
      collect() {
        this.reset();
        this.set({ state: membership.listenerState }, 1);
      },
    });
    mirrorCounter(registers, 'community_listener_reconnects_total', 'Listener reconnections.', () => membership.counters.reconnects);
    mirrorCounter(registers, 'community_cache_resyncs_total', 'Snapshot reads applied to the cache (start-up, reconnects, backstop).', () => membership.counters.resyncs);
    mirrorCounter(registers, 'community_cache_full_reloads_total', 'Full reloads of the cache.', () => membership.counters.fullReloads);
    mirrorCounter(registers, 'community_notifications_ignored_total', 'Stale or duplicate notifications ignored.', () => membership.counters.ignoredNotifications);
    const lag = new Histogram({
      name: 'community_notification_lag_seconds',
      help: 'From the membership write (database clock in the payload) to this cache applying it.',
      buckets: [0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1],
      registers,
    });
    membership.onChange((_change, sentAtUs) => {
      const nowUs = (performance.timeOrigin + performance.now()) * 1000;
      lag.observe(Math.max(0, nowUs - Number(sentAtUs)) / 1e6);
    });
    new Gauge({
      name: 'community_db_pool_connections',
      help: 'Pool connections: in use, idle, and requests waiting for one.',
      labelNames: ['state'] as const,
      registers,
      collect() {
        this.set({ state: 'in_use' }, pool.totalCount - pool.idleCount);
        this.set({ state: 'idle' }, pool.idleCount);
        this.set({ state: 'waiting' }, pool.waitingCount);
      },
    });
    const acquires = new Counter({
      name: 'community_db_pool_acquires_total',
      help: 'Connections checked out of the pool: one per statement outside a transaction, one per transaction.',
      registers,
    });
    pool.on('acquire', () => acquires.inc());
  }

  /** The subscription feed: streams, the users they watch, refusals and the reads they share. */
  observeSubscriptions(feed: ObservedSubscriptions): void {
    const registers = [this.registry];
    new Gauge({
      name: 'community_subscriptions',
      help: 'Open communityLayerStatusChanged streams on this instance.',
      registers,
      collect() {
        this.set(feed.subscribers);
      },
    });
    new Gauge({
      name: 'community_subscription_watched_users',
      help: 'Distinct users those streams watch (one shared state each).',
      registers,
      collect() {
        this.set(feed.watchedUsers);
      },
    });
    let seen = { perUser: 0, perInstance: 0 };
    new Counter({
      name: 'community_subscriptions_refused_total',
      help: 'Subscriptions refused with TOO_MANY_SUBSCRIPTIONS, by the cap they hit.',
      labelNames: ['limit'] as const,
      registers,
      collect() {
        const { refused } = feed.counters;
        for (const limit of ['perUser', 'perInstance'] as const) {
          if (refused[limit] > seen[limit]) this.inc({ limit }, refused[limit] - seen[limit]);
        }
        seen = refused;
      },
    });
    mirrorCounter(registers, 'community_subscription_reads_total', 'Database reads for subscribers (each shared by every watched user that needed one).', () => feed.counters.reads);
    mirrorCounter(registers, 'community_subscription_failed_reads_total', 'Subscriber reads that failed (retried with backoff).', () => feed.counters.failedReads);
  }
}

/** A Prometheus counter that follows a monotonic count kept elsewhere. */
function mirrorCounter(registers: Registry[], name: string, help: string, read: () => number): void {
  let seen = 0;
  new Counter({
    name,
    help,
    registers,
    collect() {
      const current = read();
      if (current > seen) this.inc(current - seen);
      seen = current;
    },
  });
}
