import { setTimeout as delay } from 'node:timers/promises';
import { SpanStatusCode, type Tracer } from '@opentelemetry/api';
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { Database } from '../db/schema.js';
import { runChunk, type ChunkResult } from './purge.store.js';

export interface PurgeWorkerOptions {
  db: Kysely<Database>;
  logger: Logger;
  tracer: Tracer;
  /** Signals (with their cohort entries) per chunk, one transaction each. */
  chunkSize: number;
  /** Pause between chunks, leaving the database to other work. */
  chunkPauseMs: number;
  /** How often an idle worker looks for purges requested on other instances or left by a crash. */
  pollMs: number;
  /** Told after each committed chunk (progress streams of this instance hear of it at once). */
  onChunk(chunk: ChunkResult): void;
}

/**
 * Runs purges chunk by chunk. The purge table is the queue: each chunk claims a running purge with
 * FOR UPDATE SKIP LOCKED inside its own transaction, so any number of instances share the work, a
 * crash loses at most the uncommitted chunk (rolled back), and restarts resume from the cursor.
 */
export class PurgeWorker {
  private readonly stopping = new AbortController();
  private wake: (() => void) | null = null;
  /** Set by a kick that found the loop busy, so its next sleep is skipped. */
  private kicked = false;
  private loop: Promise<void> | null = null;

  constructor(private readonly options: PurgeWorkerOptions) {}

  start(): void {
    this.loop ??= this.run();
  }

  /** A purge was requested here: start at once rather than at the next poll. */
  kick(): void {
    this.kicked = true;
    this.wake?.();
  }

  async stop(): Promise<void> {
    this.stopping.abort();
    this.wake?.();
    await this.loop;
  }

  private async run(): Promise<void> {
    const { db, logger, chunkSize, chunkPauseMs, pollMs } = this.options;
    let backoffMs = 100;
    while (!this.stopping.signal.aborted) {
      this.kicked = false;
      try {
        const chunk = await this.tracedChunk(() => runChunk(db, chunkSize));
        backoffMs = 100;
        if (chunk) this.options.onChunk(chunk);
        if (chunk?.finished) logger.info({ purgeId: chunk.purgeId, userId: chunk.userId, removed: chunk.removedSoFar }, 'purge finished');
        if (chunk) {
          if (chunkPauseMs > 0) await this.sleep(chunkPauseMs);
          continue;
        }
        await this.sleep(pollMs);
      } catch (error) {
        // The chunk rolled back; it is taken again after the pause.
        logger.warn({ err: error }, 'purge chunk failed; retrying');
        await this.sleep(backoffMs);
        backoffMs = Math.min(backoffMs * 2, 5_000);
      }
    }
  }

  /**
   * A span per chunk, made once it is known there was one (an idle poll, once a second, makes none):
   * the chunk is one statement, so the span is that statement's time.
   */
  private async tracedChunk(run: () => Promise<ChunkResult | null>): Promise<ChunkResult | null> {
    const startTime = performance.timeOrigin + performance.now();
    const span = (attributes: Record<string, string | number | boolean>) =>
      this.options.tracer.startSpan('purge chunk', { root: true, startTime, attributes });
    try {
      const chunk = await run();
      if (chunk) span({ 'purge.id': chunk.purgeId, 'purge.removed_so_far': chunk.removedSoFar, 'purge.finished': chunk.finished }).end();
      return chunk;
    } catch (error) {
      const failed = span({ 'purge.chunk_size': this.options.chunkSize });
      failed.setStatus({ code: SpanStatusCode.ERROR });
      failed.end();
      throw error;
    }
  }

  private async sleep(ms: number): Promise<void> {
    if (this.stopping.signal.aborted || this.kicked) return;
    const woken = new Promise<void>((resolve) => (this.wake = resolve));
    await Promise.race([delay(ms, undefined, { signal: this.stopping.signal }).catch(() => undefined), woken]);
    this.wake = null;
  }
}
