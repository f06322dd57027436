import { randomUUID } from 'node:crypto';
import { context, SpanStatusCode, trace, type SpanContext, type Tracer } from '@opentelemetry/api';
import type { Kysely } from 'kysely';
import pg from 'pg';
import type { Logger } from 'pino';
import type { Database } from '../db/schema.js';
import type { Metrics } from '../observability/metrics.js';
import type { ValidSignal } from './signal-input.js';
import { ingestSignals, type StoredSignal } from './signal.store.js';

export interface SignalOutcome extends StoredSignal {
  status: 'ACTIVE' | 'LEFT';
}

/** The queue is full: the request is refused at once (the API answers 503 OVERLOADED) instead of waiting. */
export class OverloadedError extends Error {
  override name = 'OverloadedError';

  constructor() {
    super('The signal queue is full.');
  }
}

/** The client went away before its signals were written: they are dropped, never written. */
export class AbandonedError extends Error {
  override name = 'AbandonedError';
}

interface Job {
  signals: readonly ValidSignal[];
  abandoned: AbortSignal | undefined;
  /** Per signal: the client's event id, or one generated here, kept for every attempt. */
  eventIds: readonly string[];
  /** Per signal: an earlier attempt whose outcome is unknown may have stored it for this request. */
  maybeStored: boolean[];
  /** The span of the request that submitted it, linked from its group's span. */
  requestSpan: SpanContext | undefined;
  resolve(outcomes: SignalOutcome[]): void;
  reject(error: unknown): void;
}

export interface SignalBatcherOptions {
  db: Kysely<Database>;
  logger: Logger;
  metrics: Metrics;
  tracer: Tracer;
  /** Told of each accepted submission, in the submitter's async context (the access log counts them). */
  onAccepted?(signals: number): void;
  /** The in-memory gate. */
  isLeft(userId: string): boolean;
  maxBatchSize: number;
  concurrency: number;
  /** The most signals waiting for a group; past it, requests are shed. */
  maxQueued: number;
}

const MAX_ATTEMPTS = 3;

/**
 * Whether a failed attempt may still have committed: the connection was lost (say while the
 * commit's reply was in flight) or the server ended the session. Any other error the server
 * reports rolled the statement back.
 */
function outcomeUnknown(error: unknown): boolean {
  if (!(error instanceof pg.DatabaseError)) return true;
  const code = error.code ?? '';
  return code.startsWith('08') || code.startsWith('57P');
}

/**
 * Every attempt carries the same event ids, so a resend is a no-op for whatever an earlier attempt
 * committed. Worth it after an unknown outcome and after a deadlock or serialization failure; any
 * other error would recur.
 */
function worthResending(error: unknown): boolean {
  const code = (error as { code?: string }).code;
  return outcomeUnknown(error) || code === '40P01' || code === '40001';
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
  private queue: Job[] = [];
  private queuedSignals = 0;
  private inFlight = 0;
  private flushScheduled = false;
  private idleWaiters: (() => void)[] = [];

  constructor(private readonly options: SignalBatcherOptions) {
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
      const job: Job = { signals, abandoned, eventIds, maybeStored: signals.map(() => false), requestSpan, resolve, reject };
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

  private dropIfQueued(job: Job): void {
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

  private takeGroup(): Job[] {
    const group: Job[] = [];
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

  private async runGroup(jobs: Job[]): Promise<void> {
    this.inFlight++;
    try {
      if (jobs.length > 0) await this.traced(jobs, () => this.write(jobs));
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
  private traced(jobs: readonly Job[], write: () => Promise<void>): Promise<void> {
    const links = jobs.flatMap((job) => (job.requestSpan ? [{ context: job.requestSpan }] : []));
    const attributes = { 'signals.count': jobs.reduce((sum, job) => sum + job.signals.length, 0), 'signals.requests': jobs.length };
    return this.options.tracer.startActiveSpan('signals group commit', { root: true, links, attributes }, (span) => write().finally(() => span.end()));
  }

  private notifyIfIdle(): void {
    if (this.inFlight === 0 && this.queue.length === 0) this.idleWaiters.splice(0).forEach((resolve) => resolve());
  }

  private async write(jobs: Job[]): Promise<void> {
    try {
      const outcomes = await this.writeWithRetry(jobs);
      let offset = 0;
      for (const job of jobs) {
        job.resolve(outcomes.slice(offset, offset + job.signals.length));
        offset += job.signals.length;
      }
    } catch (error) {
      trace.getActiveSpan()?.setStatus({ code: SpanStatusCode.ERROR });
      if (jobs.length === 1) {
        jobs[0]!.reject(error);
        return;
      }
      // One bad job must not fail its neighbours: retry each alone (same event ids: a no-op for what
      // the group may have committed).
      this.options.logger.warn({ err: error, jobs: jobs.length }, 'signal group failed; writing its requests one by one');
      await Promise.all(jobs.map((job) => this.write([job])));
    }
  }

  private count(outcomes: readonly SignalOutcome[]): void {
    let duplicate = 0;
    let forwarded = 0;
    for (const outcome of outcomes) {
      if (outcome.duplicate) duplicate++;
      else if (outcome.forwarded) forwarded++;
    }
    this.options.metrics.signals.inc({ outcome: 'forwarded' }, forwarded);
    this.options.metrics.signals.inc({ outcome: 'gated' }, outcomes.length - duplicate - forwarded);
    this.options.metrics.signals.inc({ outcome: 'duplicate' }, duplicate);
    this.options.metrics.signalGroupSize.observe(outcomes.length);
  }

  private async writeWithRetry(jobs: readonly Job[]): Promise<SignalOutcome[]> {
    const signals = joined(jobs, (job) => job.signals);
    const eventIds = joined(jobs, (job) => job.eventIds);
    for (let attempt = 1; ; attempt++) {
      const gateOpen = signals.map((signal) => !this.options.isLeft(signal.userId));
      try {
        const stored = await ingestSignals(this.options.db, { signals, gateOpen, eventIds });
        const maybeStored = joined(jobs, (job) => job.maybeStored);
        const outcomes = stored.map(
          (row, i): SignalOutcome => ({
            signalId: row.signalId,
            status: row.forwarded ? 'ACTIVE' : 'LEFT',
            forwarded: row.forwarded,
            cohortsAttributed: row.cohortsAttributed,
            // Not a duplicate if this request's own earlier attempt stored it (the only way a generated id is found).
            duplicate: row.duplicate && !maybeStored[i],
          }),
        );
        this.count(outcomes);
        return outcomes;
      } catch (error) {
        if (outcomeUnknown(error)) markMaybeStored(jobs);
        if (attempt >= MAX_ATTEMPTS || !worthResending(error)) throw error;
        this.options.logger.warn({ err: error, attempt, signals: signals.length }, 'signal group failed; resending it with the same event ids');
      }
    }
  }
}

/** A lone job's array as it is (a large call is usually alone in its group), else the jobs' arrays end to end. */
function joined<T>(jobs: readonly Job[], field: (job: Job) => readonly T[]): readonly T[] {
  return jobs.length === 1 ? field(jobs[0]!) : jobs.flatMap(field);
}

/** After an unknown outcome: the first occurrence of each (user, event id) in the group may be stored now. */
function markMaybeStored(jobs: readonly Job[]): void {
  const seen = new Set<string>();
  for (const job of jobs) {
    job.signals.forEach((signal, i) => {
      const key = `${signal.userId}/${job.eventIds[i]}`;
      if (!seen.has(key)) job.maybeStored[i] = true;
      seen.add(key);
    });
  }
}
