import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

/** Figures of the whole deployment, read from the database when scraped (the same on every instance). */
export interface Backlog {
  webhookPending: number;
  webhookOldestPendingSeconds: number;
  webhookDispatchLagSeconds: number;
  purgesRunning: number;
}

/** Work off the request path: webhook deliveries, purges, the change feed. */
export function backgroundMetrics(registry: Registry) {
  const registers = [registry];
  return {
    webhookDeliveries: new Counter<'outcome'>({
      name: 'community_webhook_deliveries_total',
      help: 'Webhook deliveries handled on this instance, by outcome: delivered (a 2xx), retrying (an attempt failed; tried again after a backoff), failed (for good: its retry period is over), skipped (its endpoint is disabled).',
      labelNames: ['outcome'] as const,
      registers,
    }),
    purgesFinished: new Counter({
      name: 'community_purges_finished_total',
      help: 'Purges whose last chunk ran on this instance.',
      registers,
    }),
    purgeDuration: new Histogram({
      name: 'community_purge_duration_seconds',
      help: "A finished purge's time from its request to its last chunk (database clock), for purges finished on this instance.",
      buckets: [1, 5, 15, 60, 300, 900, 3600, 4 * 3600, 24 * 3600],
      registers,
    }),
    purgeEntries: new Counter({
      name: 'community_purge_signals_removed_total',
      help: 'Signals (with their cohort entries) removed from shared aggregates by purges finished on this instance, counted when each finishes.',
      registers,
    }),
    changeFeedLag: new Histogram({
      name: 'community_change_feed_lag_seconds',
      help: "Live change-feed streams on this instance: an event's commit (recorded_at, database clock) to its push to the stream. Catching up on history is not counted.",
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers,
    }),
  };
}

const BACKLOG_GAUGES: [keyof Backlog, string, string][] = [
  [
    'webhookPending',
    'community_webhook_backlog',
    'Webhook deliveries pending in the whole deployment (read from the database when scraped; every instance reports the same).',
  ],
  [
    'webhookOldestPendingSeconds',
    'community_webhook_oldest_pending_seconds',
    'Age of the oldest pending webhook delivery in the deployment; 0 when none is pending.',
  ],
  [
    'webhookDispatchLagSeconds',
    'community_webhook_dispatch_lag_seconds',
    'Age of the oldest membership event the dispatcher has not turned into deliveries yet; 0 when it is caught up.',
  ],
  ['purgesRunning', 'community_purges_running', 'Purges requested and not finished in the whole deployment.'],
];

/**
 * The deployment's backlog as gauges: one read per scrape for all of them (a second within a second
 * shares it). A failed read keeps the last figures (metrics must answer while the database does not;
 * community_db_pool_* and /readyz tell of the database).
 */
export function observeBacklog(registry: Registry, read: () => Promise<Backlog>): void {
  let last: Backlog = { webhookPending: 0, webhookOldestPendingSeconds: 0, webhookDispatchLagSeconds: 0, purgesRunning: 0 };
  let reading: { at: number; figures: Promise<Backlog> } | null = null;
  const current = (): Promise<Backlog> => {
    if (!reading || performance.now() - reading.at > 1_000) {
      reading = {
        at: performance.now(),
        figures: read().then(
          (figures) => (last = figures),
          () => last,
        ),
      };
    }
    return reading.figures;
  };
  for (const [key, name, help] of BACKLOG_GAUGES) {
    new Gauge({
      name,
      help,
      registers: [registry],
      async collect() {
        this.set((await current())[key]);
      },
    });
  }
}
