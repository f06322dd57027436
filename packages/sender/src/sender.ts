import { setTimeout as sleep } from 'node:timers/promises';
import { backoffDelay } from './backoff.js';
import { postBatch, type Item } from './batch-request.js';
import { BufferFullError, type Outcome, type SenderOptions, type Signal } from './types.js';
import { uuidV7 } from './uuid-v7.js';

interface Pending {
  signal: Signal & { eventId: string };
  bytes: number;
  resolve: (outcome: Outcome) => void;
}

/**
 * Buffers signals and sends them in batches of `sendSignals(invalid: SKIP)`, one batch at a time.
 * Every signal carries an event id, so a batch resent after a lost reply is stored once (the
 * server answers `duplicate`). Network errors, 503 and 429 are retried with full-jitter backoff,
 * never sooner than Retry-After; invalid signals and other 4xx are never retried.
 */
export class Sender {
  private readonly options: Required<Omit<SenderOptions, 'fetch' | 'token'>> & Pick<SenderOptions, 'token'> & { fetch: typeof fetch };
  private buffer: Pending[] = [];
  private bufferedBytes = 0;
  private inFlight = 0;
  private sending: Promise<void> = Promise.resolve();
  private timer: NodeJS.Timeout | null = null;
  private closed = false;

  constructor(options: SenderOptions) {
    this.options = {
      maxBatchSize: 500,
      maxBatchBytes: 500_000,
      maxSignalBytes: 32_768,
      flushIntervalMs: 1000,
      maxBufferedSignals: 10_000,
      maxAttempts: 8,
      backoffMs: { initial: 100, max: 10_000 },
      fetch: globalThis.fetch,
      ...options,
    } as Sender['options'];
  }

  /** Queues a signal; resolves with its outcome once its batch is answered. Throws BufferFullError when the buffer is full. */
  send(signal: Signal): Promise<Outcome> {
    if (this.closed) throw new Error('the sender is closed');
    if (this.buffer.length + this.inFlight >= this.options.maxBufferedSignals) throw new BufferFullError(this.options.maxBufferedSignals);
    const withId = { ...signal, eventId: signal.eventId ?? uuidV7() };
    const bytes = Buffer.byteLength(JSON.stringify(withId));
    if (bytes > this.options.maxSignalBytes) {
      return Promise.resolve({ eventId: withId.eventId, result: 'invalid', argument: 'signal', reason: `larger than ${this.options.maxSignalBytes} bytes` });
    }
    return new Promise((resolve) => {
      if (this.bufferedBytes + bytes > this.options.maxBatchBytes) this.startFlush();
      this.buffer.push({ signal: withId, bytes, resolve });
      this.bufferedBytes += bytes;
      if (this.buffer.length >= this.options.maxBatchSize) this.startFlush();
      else this.timer ??= setTimeout(() => this.startFlush(), this.options.flushIntervalMs).unref();
    });
  }

  /** Sends everything buffered; resolves when every signal sent so far has its outcome. */
  async flush(): Promise<void> {
    this.startFlush();
    await this.sending;
  }

  /** Flushes, then refuses further signals. Call it on shutdown. */
  async close(): Promise<void> {
    await this.flush();
    this.closed = true;
  }

  private startFlush(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    while (this.buffer.length > 0) {
      const batch = this.buffer.splice(0, this.options.maxBatchSize);
      this.bufferedBytes -= batch.reduce((sum, pending) => sum + pending.bytes, 0);
      this.inFlight += batch.length;
      this.sending = this.sending.then(() => this.deliver(batch)).finally(() => (this.inFlight -= batch.length));
    }
  }

  private async deliver(batch: Pending[]): Promise<void> {
    try {
      await this.attempt(batch);
    } catch (error) {
      // A failing token source, say: this batch fails, the ones after it still go.
      for (const pending of batch) pending.resolve({ eventId: pending.signal.eventId, result: 'failed', reason: error instanceof Error ? error.message : String(error) });
    }
  }

  private async attempt(batch: Pending[]): Promise<void> {
    let remaining = batch;
    for (let attempt = 0; remaining.length > 0; ) {
      const token = typeof this.options.token === 'function' ? await this.options.token() : this.options.token;
      const reply = await postBatch(this.options.fetch, this.options.url, token, remaining.map((pending) => pending.signal));
      if (reply.kind === 'items') {
        reply.items.forEach((item, i) => remaining[i]!.resolve(outcomeOf(remaining[i]!.signal.eventId, item)));
        return;
      }
      if (reply.kind === 'invalid') {
        for (const [index, problem] of reply.invalid) {
          remaining[index]?.resolve({ eventId: remaining[index]!.signal.eventId, result: 'invalid', argument: problem.argument, reason: problem.reason });
        }
        remaining = remaining.filter((_, index) => !reply.invalid.has(index));
        continue;
      }
      if (reply.kind === 'retry' && ++attempt < this.options.maxAttempts) {
        await sleep(backoffDelay(attempt, this.options.backoffMs, reply.retryAfterSeconds));
        continue;
      }
      for (const pending of remaining) pending.resolve({ eventId: pending.signal.eventId, result: 'failed', reason: reply.reason });
      return;
    }
  }
}

function outcomeOf(eventId: string, item: Item): Outcome {
  if ('argument' in item) return { eventId, result: 'invalid', argument: item.argument, reason: item.message };
  return { eventId, result: item.duplicate ? 'duplicate' : item.forwarded ? 'forwarded' : 'stored', signalId: item.signalId };
}
