import { isIP } from 'node:net';
import { z } from 'zod';
import { count, group, milliseconds, setting } from '../setting.js';

/** Webhook deliveries (Standard Webhooks), run by any instance on the graphile-worker queue. */
export const webhooks = group(
  {
    retryPeriodMs: setting(
      'WEBHOOK_RETRY_PERIOD_MS',
      count(1_000, 30 * 86_400_000).default(3 * 86_400_000),
      'how long a failing delivery is retried (from its first attempt) before it is FAILED',
    ),
    backoffMinMs: setting(
      'WEBHOOK_BACKOFF_MIN_MS',
      count(10, 3_600_000).default(5_000),
      'first retry delay (exponential, with full jitter)',
    ),
    backoffMaxMs: setting('WEBHOOK_BACKOFF_MAX_MS', count(10, 86_400_000).default(3_600_000), 'longest retry delay'),
    timeoutMs: setting('WEBHOOK_TIMEOUT_MS', milliseconds.default(10_000), 'how long one delivery attempt may take'),
    disableAfterMs: setting(
      'WEBHOOK_DISABLE_AFTER_MS',
      count(1_000, 30 * 86_400_000).default(86_400_000),
      'how long an endpoint may fail (every attempt since its last success) before it is disabled, with the reason recorded; enabling it replays what it missed',
    ),
    disableAfterFailures: setting(
      'WEBHOOK_DISABLE_AFTER_FAILURES',
      count(1, 1_000_000).default(100),
      'consecutive failed attempts after which an endpoint is disabled (with the reason recorded)',
    ),
    delivery: setting(
      'WEBHOOK_DELIVERY',
      z.enum(['on', 'off']).default('on'),
      'on: this instance dispatches and attempts deliveries; off: it only records them (run delivery on other instances, off the request path)',
    ),
    concurrency: setting('WEBHOOK_CONCURRENCY', count(1, 100).default(4), 'deliveries attempted at once per instance'),
    queueConnections: setting(
      'WEBHOOK_QUEUE_CONNECTIONS',
      count(3, 100).default(3),
      "direct sessions of an instance's webhook queue (on `DATABASE_LISTEN_URL`): one listens for new jobs, one holds the workers' liveness locks, the rest serve job fetches, the dispatcher and the sweeps (a delivery holds none while its receiver answers); docs/scaling.md",
    ),
    slowMs: setting(
      'WEBHOOK_SLOW_MS',
      milliseconds.default(2_000),
      'an attempt unanswered this long is slow: it moves into the slow lane (half the workers), or is cut when that is full, and its endpoint is on probation again',
    ),
    probationSuccesses: setting(
      'WEBHOOK_PROBATION_SUCCESSES',
      count(1, 1_000).default(3),
      'attempts in a row answered 2xx within WEBHOOK_SLOW_MS after which an endpoint on probation (new, or since a failure or a slow attempt) leaves the slow lane',
    ),
    dispatchCoalesceMs: setting(
      'WEBHOOK_DISPATCH_COALESCE_MS',
      milliseconds.default(200),
      'how long a change waits before it is dispatched, so a burst of changes makes fewer, larger delivery jobs',
    ),
    allowedDestinations: setting(
      'WEBHOOK_ALLOWED_DESTINATIONS',
      z
        .string()
        .default('')
        .transform((value, ctx) => {
          const entries = value
            .split(',')
            .map((entry) => entry.trim().toLowerCase())
            .filter(Boolean);
          const bad = entries.find((entry) => !destinationEntry(entry));
          if (bad !== undefined)
            ctx.addIssue({ code: 'custom', message: `${bad}: not a CIDR (10.1.0.0/16, fd12::/64), an address or a host name` });
          return entries;
        }),
      'internal receivers webhooks may reach, comma-separated: CIDRs, addresses, host names (any address they resolve to); unset, only public addresses (docs/downstream.md)',
      'unset',
    ),
    recoveryMs: setting(
      'WEBHOOK_RECOVERY_MS',
      milliseconds.default(10_000),
      "how often each instance releases the deliveries held by delivery workers that died (a crash costs about this much, not the queue's 4-hour lock expiry)",
    ),
    pollMs: setting(
      'WEBHOOK_POLL_MS',
      milliseconds.default(1_000),
      'how often the queue and the dispatcher look for due work without a notification',
    ),
  },
  (settings) =>
    settings.superRefine((config, ctx) => {
      if (config.backoffMinMs > config.backoffMaxMs)
        ctx.addIssue({ code: 'custom', path: ['backoffMinMs'], message: 'must not exceed WEBHOOK_BACKOFF_MAX_MS' });
    }),
);

/** An allow-list entry: an address, a CIDR, or a host name. */
function destinationEntry(entry: string): boolean {
  const [network, prefix, extra] = entry.split('/');
  const family = isIP(network!);
  if (prefix === undefined) return family !== 0 || /^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$/.test(entry);
  return family !== 0 && extra === undefined && /^\d{1,3}$/.test(prefix) && Number(prefix) <= (family === 4 ? 32 : 128);
}
