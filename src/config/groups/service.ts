import { z } from 'zod';
import { count, group, milliseconds, setting } from '../setting.js';

/** Settings of the whole process; they sit at the top of the configuration (docs group `service`). */
export const serviceSettings = {
  env: setting(
    'NODE_ENV',
    z.enum(['development', 'production', 'test']).default('development'),
    '`production`: JSON logs, GraphiQL, introspection and field suggestions off, `DATABASE_URL` and a key source required (with a remote key set: issuer, audience, https)',
  ),
  logLevel: setting(
    'LOG_LEVEL',
    z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
    '`fatal` … `trace`, or `silent`',
  ),
  retryAfterSeconds: setting(
    'RETRY_AFTER_SECONDS',
    count(1, 3600).default(1),
    '`Retry-After` of every 503 (database unavailable, overload): what clients are told to wait',
  ),
};

export const shutdown = group({
  timeoutMs: setting('SHUTDOWN_TIMEOUT_MS', milliseconds.default(10_000), 'how long in-flight requests may take to finish on stop'),
  graceMs: setting(
    'SHUTDOWN_GRACE_MS',
    count(0, 600_000).default(0),
    'readiness false before the server stops accepting connections (set for load balancers)',
  ),
});
