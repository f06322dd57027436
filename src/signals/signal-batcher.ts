import { randomUUID } from 'node:crypto';
import { context, trace, type Tracer } from '@opentelemetry/api';
import { AbandonedError, OverloadedError } from './errors.js';
import { GroupWriter, type GroupWriterOptions } from './group-writer.js';
import type { QueuedRequest, SignalOutcome } from './queued-request.js';
import type { ValidSignal } from './signal-input.js';

/** The batcher's constructor options: the group writer's needs and the queue's bounds. */
export interface SignalBatcherOptions extends GroupWriterOptions {
  maxBatchSize: number;
  concurrency: number;
  /** The most signals waiting for a group; past it, requests are shed. */
  maxQueued: number;
  tracer: Tracer;
  /** Told of each accepted submission, in the submitter's async context (the access log counts them). */
  onAccepted?(signals: number): void;
}

/**
 * Group commit: signals that arrive while earlier groups are in flight are written together in one
 * statement, so the database cost per request shrinks as load grows. The gate is consulted per
 * signal when its group is formed; the database guard still decides for every signal the cache
 * lets through, so grouping never weakens the boundary.
 *
 * The queue is bounded by signals: beyond `maxQueued` a request is refused at once, so overload
 * costs neither memory nor latency for the requests already accepted. A request whose client
 * disconnected before its group was formed is dropped.
 */
export class SignalBatcher {
  private queue: QueuedRequest[] = [];
  private queuedSignals = 0;
  private inFlight = 0;
  private flushScheduled = false;
  private idleWaiters: (() => void)[] = [];
  private readonly writer: GroupWriter;

  constructor(private readonly options: SignalBatcherOptions) {
    this.writer = new GroupWriter(options);
    options.metrics.observeSignalQueue(() => this.queuedSignals);
  }

  /** Signals waiting for a group (not yet sent to the database). */
  get queued(): number {
    return this.queuedSignals;
  }

  /** No more signals are accepted until the queue drains below its bound. */
  get full(): boolean {
    return this.queuedSignals >= this.options.maxQueued;
  }

  submit(signals: readonly ValidSignal[], abandoned?: AbortSignal): Promise<SignalOutcome[]> {
    if (this.queuedSignals + signals.length > this.options.maxQueued && this.queue.length > 0) {
      this.options.metrics.shedRequests.inc();
      return Promise.reject(new OverloadedError());
    }
    if (abandoned?.aborted) return Promise.reject(new AbandonedError('the client disconnected'));
    return new Promise((resolve, reject) => {
      // A signal without the client's event id gets one here, so that no resend can store it twice.
      const eventIds = signals.map((signal) => signal.eventId ?? randomUUID());
      const requestSpan = trace.getSpanContext(context.active());
      const job: QueuedRequest = { signals, abandoned, eventIds, maybeStored: signals.map(() => false), requestSpan, resolve, reject };
      this.queue.push(job);
      this.queuedSignals += signals.length;
      abandoned?.addEventListener('abort', () => this.dropIfQueued(job), { once: true });
      this.options.onAccepted?.(signals.length);
      this.scheduleFlush();
    });
  }

  /** Resolves when nothing is queued or in flight (graceful shutdown). */
  drained(): Promise<void> {
    if (this.inFlight === 0 && this.queue.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private dropIfQueued(job: QueuedRequest): void {
    const index = this.queue.indexOf(job);
    if (index < 0) return;
    this.queue.splice(index, 1);
    this.queuedSignals -= job.signals.length;
    this.options.metrics.abandonedSignals.inc(job.signals.length);
    job.reject(new AbandonedError('the client disconnected'));
    this.notifyIfIdle();
  }

  // setImmediate lets every request parsed in this I/O turn join the group, adding no timer delay.
  private scheduleFlush(): void {
    if (this.flushScheduled || this.inFlight >= this.options.concurrency) return;
    this.flushScheduled = true;
    setImmediate(() => {
      this.flushScheduled = false;
      while (this.queue.length > 0 && this.inFlight < this.options.concurrency) void this.runGroup(this.takeGroup());
    });
  }

  private takeGroup(): QueuedRequest[] {
    const group: QueuedRequest[] = [];
    let size = 0;
    while (this.queue.length > 0) {
      const next = this.queue[0]!;
      if (group.length > 0 && size + next.signals.length > this.options.maxBatchSize) break;
      group.push(this.queue.shift()!);
      this.queuedSignals -= next.signals.length;
      size += next.signals.length;
    }
    return group;
  }

  private async runGroup(jobs: QueuedRequest[]): Promise<void> {
    this.inFlight++;
    try {
      if (jobs.length > 0) await this.traced(jobs);
    } finally {
      this.inFlight--;
      if (this.queue.length > 0) this.scheduleFlush();
      else this.notifyIfIdle();
    }
  }

  /**
   * One span per group, in a trace of its own (a group serves many requests, so it is no one
   * request's child), linked to the span of each request it carries; its statements are its children.
   */
  private traced(jobs: readonly QueuedRequest[]): Promise<void> {
    const links = jobs.flatMap((job) => (job.requestSpan ? [{ context: job.requestSpan }] : []));
    const attributes = { 'signals.count': jobs.reduce((sum, job) => sum + job.signals.length, 0), 'signals.requests': jobs.length };
    return this.options.tracer.startActiveSpan('signals group commit', { root: true, links, attributes }, (span) =>
      this.writer.write(jobs).finally(() => span.end()),
    );
  }

  private notifyIfIdle(): void {
    if (this.inFlight === 0 && this.queue.length === 0) this.idleWaiters.splice(0).forEach((resolve) => resolve());
  }
}
