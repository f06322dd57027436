import { Gauge, Histogram, type Registry } from 'prom-client';
import { mirrorCounter, scrapedGauge } from './scraped-metrics.js';

/** What the membership cache shows of itself (structural: metrics import no capability). */
export interface ObservedMembershipCache {
  readonly cache: { readonly size: number };
  readonly inSync: boolean;
  readonly listenerState: string;
  readonly counters: Readonly<{ resyncs: number; fullReloads: number; ignoredNotifications: number; reconnects: number }>;
  onChange(listener: (change: unknown, sentAtUs: bigint, appliedAtUs: number) => void): unknown;
}

/** The cache's size and sync state, its listener, and how late notifications arrive. */
export function observeMembershipCache(registry: Registry, membership: ObservedMembershipCache): void {
  scrapedGauge(
    registry,
    'community_cache_entries',
    'Users currently LEFT in this instance’s membership cache.',
    () => membership.cache.size,
  );
  scrapedGauge(registry, 'community_cache_in_sync', '1 when the membership cache is in sync (listener up, snapshot applied).', () =>
    membership.inSync ? 1 : 0,
  );
  new Gauge({
    name: 'community_listener_state',
    help: 'The membership listener connection state (1 for the current one).',
    labelNames: ['state'] as const,
    registers: [registry],
    collect() {
      this.reset();
      this.set({ state: membership.listenerState }, 1);
    },
  });
  mirrorCounter(registry, 'community_listener_reconnects_total', 'Listener reconnections.', () => membership.counters.reconnects);
  mirrorCounter(
    registry,
    'community_cache_resyncs_total',
    'Snapshot reads applied to the cache (start-up, reconnects, backstop).',
    () => membership.counters.resyncs,
  );
  mirrorCounter(registry, 'community_cache_full_reloads_total', 'Full reloads of the cache.', () => membership.counters.fullReloads);
  mirrorCounter(
    registry,
    'community_notifications_ignored_total',
    'Stale or duplicate notifications ignored.',
    () => membership.counters.ignoredNotifications,
  );
  const lag = new Histogram({
    name: 'community_notification_lag_seconds',
    help: 'From the membership write (database clock in the payload) to this cache applying it.',
    buckets: [0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1],
    registers: [registry],
  });
  membership.onChange((_change, sentAtUs, appliedAtUs) => lag.observe(Math.max(0, appliedAtUs - Number(sentAtUs)) / 1e6));
}
