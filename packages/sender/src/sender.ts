import { setTimeout as sleep } from 'node:timers/promises';
import { backoffDelay } from './backoff.js';
import { postBatch, type Item } from './batch-request.js';
import { requestSignal } from './request-signal.js';
import { BufferFullError, type CloseResult, type Outcome, type SenderError, type SenderOptions, type Signal } from './types.js';
import { uuidV7 } from './uuid-v7.js';

interface Pending {
  signal: Signal & { eventId: string };
  /** Its JSON text, measured once and sent as is. */
  json: string;
  bytes: number;
  resolve: (outcome: Outcome) => void;
}

type Resolved = Required<Omit<SenderOptions, 'fetch' | 'token' | 'onError'>> &
  Pick<SenderOptions, 'token' | 'onError'> & { fetch: typeof fetch };

const CLOSED = 'not delivered before close({ timeoutMs }) ran out of time';

/**
 * Buffers signals and sends them in batches of `sendSignals(invalid: SKIP)`, up to `concurrency`
 * requests at once. Every signal carries an event id, so a batch resent after a lost reply is
 * stored once (the server answers `duplicate`). Network errors, timeouts, 503 and 429 are retried
 * with full-jitter backoff, never sooner than Retry-After; invalid signals and other 4xx never are.
 */
export class Sender {
  private readonly options: Resolved;
  private buffer: Pending[] = [];
  private bufferedBytes = 0;
  /** Batches cut from the buffer, waiting for a request slot. */
  private readonly queue: Pending[][] = [];
  private readonly running = new Set<Promise<void>>();
  /** Signals buffered, queued or in flight: what maxBufferedSignals bounds. */
  private held = 0;
  private timer: NodeJS.Timeout | null = null;
  private closed = false;
  /** Aborted when close's time is up: requests in flight and backoff waits end at once. */
  private readonly deadline = new AbortController();
  /** From close() on: every signal that ends `failed`. */
  private unsent: Pending['signal'][] | null = null;

  constructor(options: SenderOptions) {
    this.options = {
      maxBatchSize: 500,
      maxBatchBytes: 500_000,
      maxSignalBytes: 32_768,
      flushIntervalMs: 1000,
      maxBufferedSignals: 10_000,
      maxAttempts: 8,
      backoffMs: { initial: 100, max: 10_000 },
      requestTimeoutMs: 10_000,
      concurrency: 2,
      fetch: globalThis.fetch,
      ...options,
    } as Resolved;
  }

  /** Queues a signal; resolves with its outcome once its batch is answered. Throws BufferFullError when the buffer is full. */
  send(signal: Signal): Promise<Outcome> {
    if (this.closed) throw new Error('the sender is closed');
    if (this.held >= this.options.maxBufferedSignals) throw new BufferFullError(this.options.maxBufferedSignals);
    const withId = { ...signal, eventId: signal.eventId ?? uuidV7() };
    const json = JSON.stringify(withId);
    const bytes = Buffer.byteLength(json);
    if (bytes > this.options.maxSignalBytes) {
      return Promise.resolve({
        eventId: withId.eventId,
        result: 'invalid',
        argument: 'signal',
        reason: `larger than ${this.options.maxSignalBytes} bytes`,
      });
    }
    return new Promise((resolve) => {
      if (this.bufferedBytes + bytes > this.options.maxBatchBytes) this.cut();
      this.held++;
      this.buffer.push({ signal: withId, json, bytes, resolve: (outcome) => (this.held--, resolve(outcome)) });
      this.bufferedBytes += bytes;
      if (this.buffer.length >= this.options.maxBatchSize) this.cut();
      // Not unref(): buffered signals keep the process alive until they are sent (a script ends after them).
      else this.timer ??= setTimeout(() => this.cut(), this.options.flushIntervalMs);
    });
  }

  /** Sends everything buffered; resolves when every signal sent so far has its outcome. */
  async flush(): Promise<void> {
    this.cut();
    while (this.running.size > 0) await Promise.all(this.running);
  }

  /**
   * Refuses further signals and flushes. With `timeoutMs`, it resolves within about that time:
   * what is still unanswered then is aborted and ends `failed`. Resolves with every signal that
   * ended `failed` from now on (also retries exhausted); resending them later is safe (event ids).
   */
  async close(options: { timeoutMs?: number } = {}): Promise<CloseResult> {
    this.closed = true;
    const unsent = (this.unsent ??= []);
    const timer = options.timeoutMs === undefined ? undefined : setTimeout(() => this.deadline.abort(), options.timeoutMs);
    try {
      await this.flush();
    } finally {
      clearTimeout(timer);
    }
    return { unsent: [...unsent] };
  }

  /** Cuts the buffer into batches and starts as many as the concurrency allows. */
  private cut(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    while (this.buffer.length > 0) {
      const batch = this.buffer.splice(0, this.options.maxBatchSize);
      this.bufferedBytes -= batch.reduce((sum, pending) => sum + pending.bytes, 0);
      this.queue.push(batch);
    }
    this.pump();
  }

  private pump(): void {
    // Past the deadline every queued batch starts, to end `failed` at once.
    while (this.queue.length > 0 && (this.running.size < this.options.concurrency || this.deadline.signal.aborted)) {
      const delivery: Promise<void> = this.deliver(this.queue.shift()!).finally(() => {
        this.running.delete(delivery);
        this.pump();
      });
      this.running.add(delivery);
    }
  }

  private async deliver(batch: Pending[]): Promise<void> {
    // What has no outcome yet: after an `invalid` round, only the rest can fail.
    const left = { remaining: batch };
    try {
      await this.attempt(left);
    } catch (error) {
      // A failing token source or the deadline during a backoff: this batch fails, the others still go.
      const reason = this.deadline.signal.aborted ? CLOSED : error instanceof Error ? error.message : String(error);
      if (!this.deadline.signal.aborted)
        this.report({ reason, status: null, signals: left.remaining.length, attempt: 1, willRetry: false });
      this.fail(left.remaining, reason);
    }
  }

  private async attempt(left: { remaining: Pending[] }): Promise<void> {
    for (let attempt = 1; left.remaining.length > 0; ) {
      const remaining = left.remaining;
      if (this.deadline.signal.aborted) return this.fail(remaining, CLOSED);
      const token = typeof this.options.token === 'function' ? await this.options.token() : this.options.token;
      const request = requestSignal(this.deadline.signal, this.options.requestTimeoutMs);
      const reply = await postBatch(
        this.options.fetch,
        this.options.url,
        token,
        remaining.map((pending) => pending.json),
        request.signal,
      ).finally(request.done);
      if (reply.kind === 'items') {
        reply.items.forEach((item, i) => remaining[i]!.resolve(outcomeOf(remaining[i]!.signal.eventId, item)));
        return;
      }
      if (reply.kind === 'invalid') {
        for (const [index, problem] of reply.invalid) {
          const pending = remaining[index];
          if (pending)
            pending.resolve({ eventId: pending.signal.eventId, result: 'invalid', argument: problem.argument, reason: problem.reason });
        }
        left.remaining = remaining.filter((_, index) => !reply.invalid.has(index));
        continue;
      }
      if (this.deadline.signal.aborted) return this.fail(remaining, CLOSED);
      const willRetry = reply.kind === 'retry' && attempt < this.options.maxAttempts;
      this.report({ reason: reply.reason, status: reply.status, signals: remaining.length, attempt, willRetry });
      if (!willRetry) return this.fail(remaining, reply.reason);
      await sleep(backoffDelay(attempt++, this.options.backoffMs, reply.kind === 'retry' ? reply.retryAfterSeconds : null), undefined, {
        signal: this.deadline.signal,
      });
    }
  }

  private fail(pendings: readonly Pending[], reason: string): void {
    for (const pending of pendings) {
      this.unsent?.push(pending.signal);
      pending.resolve({ eventId: pending.signal.eventId, result: 'failed', reason });
    }
  }

  private report(error: SenderError): void {
    try {
      this.options.onError?.(error);
    } catch {
      // A throwing hook must not lose the batch's outcomes.
    }
  }
}

function outcomeOf(eventId: string, item: Item): Outcome {
  if ('argument' in item) return { eventId, result: 'invalid', argument: item.argument, reason: item.message };
  return { eventId, result: item.duplicate ? 'duplicate' : item.forwarded ? 'forwarded' : 'stored', signalId: item.signalId };
}
