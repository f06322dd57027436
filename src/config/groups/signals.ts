import { count, group, setting } from '../setting.js';

/** Group commit: group size, groups in flight, and the most signals waiting before requests are shed. */
export const signals = group({
  maxBatchSize: setting('SIGNAL_BATCH_MAX', count(1, 1000).default(256), 'most signals written in one group commit'),
  concurrency: setting('SIGNAL_BATCH_CONCURRENCY', count(1, 64).default(4), 'groups in flight at once per instance'),
  maxQueued: setting(
    'SIGNAL_QUEUE_MAX',
    count(1, 1_000_000).default(10_000),
    'most signals waiting for a group before signal requests are shed (503 `OVERLOADED`)',
  ),
});
