import { z } from 'zod';
import { count, group, milliseconds, optional, setting } from '../setting.js';

const bytes = count(1024, 64 * 1024 * 1024);

export const http = group({
  host: setting('HOST', z.string().min(1).default('127.0.0.1'), 'where the HTTP server listens'),
  port: setting('PORT', count(0, 65_535).default(4000), 'the port it listens on (`0`: any free port)'),
  corsOrigins: setting(
    'CORS_ORIGINS',
    z
      .string()
      .transform((value) =>
        value
          .split(',')
          .map((origin) => origin.trim())
          .filter(Boolean),
      )
      .pipe(z.array(z.url({ message: 'must be a comma-separated list of origins like https://app.example.com' })))
      .default([]),
    'comma-separated origins allowed to call from browsers (and to embed the settings page)',
  ),
  bodyLimitBytes: setting('BODY_LIMIT_BYTES', bytes.default(1024 * 1024), 'largest request body, and largest WebSocket message'),
  webSocketOperationsPerSocket: setting(
    'WEBSOCKET_OPERATIONS_PER_SOCKET_MAX',
    count(1, 10_000).default(16),
    'operations in flight on one WebSocket (queries, mutations, open subscriptions); beyond them `OVERLOADED`',
  ),
});

/**
 * Requests with longer bodies than `requestBytes` are bulk: at most `maxInProgress` being decoded,
 * `maxWaiting` waiting to be, and none enters while the event loop was busier than `maxEventLoopUtilization`.
 */
export const bulk = group({
  requestBytes: setting('BULK_REQUEST_BYTES', bytes.default(4096), 'a longer POST body is bulk (a batch): it passes the door below'),
  maxInProgress: setting('BULK_REQUESTS_MAX', count(1, 10_000).default(1), 'bulk requests decoded at once'),
  maxWaiting: setting(
    'BULK_REQUESTS_WAITING_MAX',
    count(0, 100_000).default(32),
    'bulk requests at the door besides those decoding: bodies arriving (read into memory) or arrived and waiting for a place; beyond them 503 `OVERLOADED`',
  ),
  maxEventLoopUtilization: setting(
    'BULK_MAX_EVENT_LOOP_UTILIZATION',
    z.coerce.number().min(0.1).max(1).default(0.9),
    'no bulk request enters while the event loop was busier than this over the last 50 ms',
  ),
  maxPerAddress: setting(
    'BULK_REQUESTS_PER_ADDRESS_MAX',
    count(0, 100_000).default(8),
    'places (decoding or waiting) one client address may hold; `0`: no cap (behind a proxy every client shares its address)',
  ),
  maxPerCredential: setting(
    'BULK_REQUESTS_PER_CREDENTIAL_MAX',
    count(0, 100_000).default(8),
    'places one bearer token may hold; `0`: no cap',
  ),
  bodyTimeoutMs: setting(
    'BULK_BODY_TIMEOUT_MS',
    milliseconds.default(5_000),
    'an admitted bulk request must send its whole body within this, else 408 and its place is freed; a body still arriving holds no place to decode',
  ),
});

/** Prometheus metrics, on a listener of their own: the API port is public. */
export const metrics = group({
  host: setting(
    'METRICS_HOST',
    z.string().min(1).default('127.0.0.1'),
    'where `GET /metrics` listens (loopback: a scraper on the same host or pod)',
  ),
  port: setting(
    'METRICS_PORT',
    optional(count(0, 65_535)),
    'its port (`0`: any free port)',
    '`PORT` + 5464 (9464 with the default `PORT`), so instances on one machine with different `PORT`s never collide; `0` when `PORT` is 0 or the sum is past 65535',
  ),
});

/** The metrics port when METRICS_PORT is unset: beside the API's, so another PORT gets another one. */
export function derivedMetricsPort(apiPort: number): number {
  const port = apiPort + 5464;
  return apiPort === 0 || port > 65_535 ? 0 : port;
}
