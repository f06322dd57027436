import { setImmediate as nextTurn } from 'node:timers/promises';
import { SpanStatusCode, trace } from '@opentelemetry/api';
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import { isDeadlineError } from '../db/database-errors.js';
import type { Database } from '../db/schema.js';
import type { Metrics } from '../observability/metrics.js';
import type { QueuedRequest, SignalOutcome } from './queued-request.js';
import { MAX_ATTEMPTS, outcomeUnknown, worthResending } from './resend-policy.js';
import { ingestSignals } from './signal.store.js';

/** What writing a group needs; the batcher's options carry it. */
/**
 * Requests settled per event-loop turn. Settling one runs its whole response (serialization, the
 * write); a group of hundreds settled at once is one long turn that shedding and every other
 * socket wait behind.
 */
const SETTLED_PER_TURN = 8;

export interface GroupWriterOptions {
  db: Kysely<Database>;
  logger: Logger;
  metrics: Metrics;
  /** The in-memory gate. */
  isLeft(userId: string): boolean;
}

/**
 * Writes a group of requests in one statement and settles each request with its own outcomes.
 * The gate is consulted per signal at each attempt; the database guard still decides for every
 * signal the cache lets through.
 */
export class GroupWriter {
  constructor(private readonly options: GroupWriterOptions) {}

  async write(jobs: readonly QueuedRequest[]): Promise<void> {
    let outcomes: SignalOutcome[];
    try {
      outcomes = await this.writeWithRetry(jobs);
    } catch (error) {
      trace.getActiveSpan()?.setStatus({ code: SpanStatusCode.ERROR });
      // A database that did not answer fails every job alike: writing them one by one would wait
      // the deadline once more for each.
      if (jobs.length === 1 || isDeadlineError(error)) {
        for (const job of jobs) job.reject(error);
        return;
      }
      // One bad job must not fail its neighbours: retry each alone (same event ids: a no-op for what
      // the group may have committed).
      this.options.logger.warn({ err: error, jobs: jobs.length }, 'signal group failed; writing its requests one by one');
      await Promise.all(jobs.map((job) => this.write([job])));
      return;
    }
    let offset = 0;
    for (const [i, job] of jobs.entries()) {
      if (i > 0 && i % SETTLED_PER_TURN === 0) await nextTurn();
      job.resolve(outcomes.slice(offset, offset + job.signals.length));
      offset += job.signals.length;
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

  private async writeWithRetry(jobs: readonly QueuedRequest[]): Promise<SignalOutcome[]> {
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
        this.options.logger.warn(
          { err: error, attempt, signals: signals.length },
          'signal group failed; resending it with the same event ids',
        );
      }
    }
  }
}

/** A lone job's array as it is (a large call is usually alone in its group), else the jobs' arrays end to end. */
function joined<T>(jobs: readonly QueuedRequest[], field: (job: QueuedRequest) => readonly T[]): readonly T[] {
  return jobs.length === 1 ? field(jobs[0]!) : jobs.flatMap(field);
}

/** After an unknown outcome: the first occurrence of each (user, event id) in the group may be stored now. */
function markMaybeStored(jobs: readonly QueuedRequest[]): void {
  const seen = new Set<string>();
  for (const job of jobs) {
    job.signals.forEach((signal, i) => {
      const key = `${signal.userId}/${job.eventIds[i]}`;
      if (!seen.has(key)) job.maybeStored[i] = true;
      seen.add(key);
    });
  }
}
