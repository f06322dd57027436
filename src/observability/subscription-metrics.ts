import { Counter, type Registry } from 'prom-client';
import { mirrorCounter, scrapedGauge } from './scraped-metrics.js';

/** What a subscription feed shows of itself. */
export interface ObservedSubscriptions {
  readonly subscribers: number;
  readonly watchedUsers: number;
  readonly counters: Readonly<{ reads: number; failedReads: number; refused: { perUser: number; perInstance: number } }>;
}

/** The subscription feed: streams, the users they watch, refusals and the reads they share. */
export function observeSubscriptionFeed(registry: Registry, feed: ObservedSubscriptions): void {
  scrapedGauge(registry, 'community_subscriptions', 'Open communityLayerStatusChanged streams on this instance.', () => feed.subscribers);
  scrapedGauge(
    registry,
    'community_subscription_watched_users',
    'Distinct users those streams watch (one shared state each).',
    () => feed.watchedUsers,
  );
  let seen = { perUser: 0, perInstance: 0 };
  new Counter({
    name: 'community_subscriptions_refused_total',
    help: 'Subscriptions refused with TOO_MANY_SUBSCRIPTIONS, by the cap they hit.',
    labelNames: ['limit'] as const,
    registers: [registry],
    collect() {
      const { refused } = feed.counters;
      for (const limit of ['perUser', 'perInstance'] as const) {
        if (refused[limit] > seen[limit]) this.inc({ limit }, refused[limit] - seen[limit]);
      }
      seen = refused;
    },
  });
  mirrorCounter(
    registry,
    'community_subscription_reads_total',
    'Database reads for subscribers (each shared by every watched user that needed one).',
    () => feed.counters.reads,
  );
  mirrorCounter(
    registry,
    'community_subscription_failed_reads_total',
    'Subscriber reads that failed (retried with backoff).',
    () => feed.counters.failedReads,
  );
}
