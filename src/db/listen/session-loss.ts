import type pg from 'pg';
import { withTimeout } from '../../util/with-timeout.js';

/**
 * Checks every `everyMs` that the session still LISTENs on every channel, answered within
 * `timeoutMs` (a half-open socket raises nothing by itself); calls `lost` with the cause once it does
 * not. Clear the returned timer to stop.
 */
export function startHeartbeat(
  client: pg.Client,
  channels: string[],
  { everyMs, timeoutMs }: { everyMs: number; timeoutMs: number },
  lost: (cause: unknown) => void,
): NodeJS.Timeout {
  let beating = false;
  const timer = setInterval(() => {
    // One at a time: a slow answer is its timeout's to judge, and pg would queue the next behind it.
    if (beating) return;
    beating = true;
    withTimeout(
      client.query<{ listened: number }>('SELECT count(*)::int AS listened FROM pg_listening_channels() AS c WHERE c = ANY($1::text[])', [
        channels,
      ]),
      timeoutMs,
    )
      .then((result) => {
        if (result.rows[0]?.listened !== channels.length) lost('a channel no longer listened');
      })
      .catch((error: unknown) => lost(error))
      .finally(() => (beating = false));
  }, everyMs);
  return timer.unref();
}

/** The delay before reconnect attempt `attempt` (from 0): capped exponential backoff with full jitter. */
export function reconnectDelay(attempt: number, minMs: number, maxMs: number): number {
  const ceiling = Math.min(maxMs, minMs * 2 ** Math.min(attempt, 20));
  return minMs + Math.random() * (ceiling - minMs);
}

/** Tears the socket down hard: a half-open connection may never complete a graceful end. */
export function destroySocket(client: pg.Client): void {
  const connection = (client as unknown as { connection?: { stream?: { destroy(): void } } }).connection;
  connection?.stream?.destroy();
}
