import type { Metrics } from '../observability/metrics.js';
import type { PurgeJobs } from '../purge/purge-jobs.js';
import type { Webhooks } from '../webhooks/webhooks.js';

/** What a finished purge adds to the background metrics (PurgeJobs' onFinished). */
export function recordPurgeFinished({ background }: Metrics) {
  return (removed: number, seconds: number | null) => {
    background.purgesFinished.inc();
    background.purgeEntries.inc(removed);
    if (seconds !== null) background.purgeDuration.observe(seconds);
  };
}

/** The backlog gauges, read from the webhook queue and the purges at each scrape. */
export function reportBacklog(metrics: Metrics, webhooks: Webhooks, purges: PurgeJobs): void {
  metrics.observeBacklog(async () => {
    const [webhook, purgesRunning] = await Promise.all([webhooks.backlog(), purges.running()]);
    return {
      webhookPending: webhook.pending,
      webhookOldestPendingSeconds: webhook.oldestPendingSeconds,
      webhookDispatchLagSeconds: webhook.dispatchLagSeconds,
      purgesRunning,
    };
  });
}
