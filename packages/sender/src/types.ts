import type { SignalInput } from './operation-types.js';

export type { SignalKind } from './operation-types.js';

/** One engagement, as the server's SignalInput takes it (generated from the schema). `eventId` is filled in when left out. */
export type Signal = SignalInput;

/**
 * What became of one signal:
 * - `forwarded`: stored and counted in the shared aggregates; `stored`: stored for its owner only
 *   (the owner left the community layer); `duplicate`: an earlier attempt (or send) already stored it;
 * - `invalid`: refused, with the reason and field; never retried;
 * - `failed`: not delivered (retries exhausted, refused as unauthorized, or `close({ timeoutMs })` ran out of time).
 */
export type Outcome =
  | { eventId: string; result: 'forwarded' | 'stored' | 'duplicate'; signalId: string }
  | { eventId: string; result: 'invalid'; argument: string; reason: string }
  | { eventId: string; result: 'failed'; reason: string };

export interface SenderOptions {
  /** The GraphQL endpoint, e.g. https://community.example.com/graphql. */
  url: string;
  /** A service token (scope `signals:write`), or a function returning the current one. */
  token: string | (() => string | Promise<string>);
  /** Most signals per request (the server takes up to 1000). Default 500. */
  maxBatchSize?: number;
  /** Most bytes of signals per request. Default 500,000. */
  maxBatchBytes?: number;
  /** Largest single signal; larger ones are `invalid` without a request. Default 32,768. */
  maxSignalBytes?: number;
  /** A batch that is not full is sent after this long. Default 1000 ms. */
  flushIntervalMs?: number;
  /** Most signals held (buffered and in flight). `send` past it throws BufferFullError. Default 10,000. */
  maxBufferedSignals?: number;
  /** Attempts per batch for retryable failures (network, 503, 429). Default 8. */
  maxAttempts?: number;
  /** First backoff and its cap; the delay doubles per attempt, with full jitter. Default 100 / 10,000 ms. */
  backoffMs?: { initial: number; max: number };
  /** Longest wait for one request's answer (then it counts as a network error and is retried). Default 10,000 ms. */
  requestTimeoutMs?: number;
  /** Requests in flight at once. Default 2. */
  concurrency?: number;
  /** Told of every failed attempt (`willRetry`) and every batch given up (`failed` outcomes). Must not throw. */
  onError?: (error: SenderError) => void;
  fetch?: typeof fetch;
}

/** One failed request (or token lookup): what went wrong, for how many signals, and whether it is tried again. */
export interface SenderError {
  reason: string;
  /** HTTP status, when an answer came. */
  status: number | null;
  signals: number;
  /** 1 for the first attempt. */
  attempt: number;
  willRetry: boolean;
}

/** What `close()` could not deliver in time (or at all): resend them later; their event ids make it safe. */
export interface CloseResult {
  /** Signals that ended `failed` after close() was called, in the order they were sent. */
  unsent: (Signal & { eventId: string })[];
}

export class BufferFullError extends Error {
  constructor(limit: number) {
    super(`the sender holds ${limit} signals already (maxBufferedSignals): await flush() or send fewer`);
  }
}
