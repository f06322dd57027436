import { setTimeout as delay } from 'node:timers/promises';
import type { Tracer } from '@opentelemetry/api';
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { Config } from '../config/config.js';
import type { Database } from '../db/schema.js';
import { PurgeWorker } from './purge-worker.js';
import { findPurge, listPurges, requestPurge, type PurgeReceipt } from './purge.store.js';

/** Purges as resolvers see them: request (and start the work here), read, follow. */
export class PurgeJobs {
  private readonly worker: PurgeWorker;
  private readonly closing = new AbortController();

  constructor(
    private readonly db: Kysely<Database>,
    workerDb: Kysely<Database>,
    logger: Logger,
    private readonly config: Config['purge'],
    tracer: Tracer,
  ) {
    this.worker = new PurgeWorker({ db: workerDb, logger, tracer, chunkSize: config.chunkSize, chunkPauseMs: config.chunkPauseMs, pollMs: config.pollMs });
  }

  /** Resumes whatever purge a crash or restart left running, then waits for new ones. */
  start(): void {
    this.worker.start();
  }

  async request(userId: string): Promise<PurgeReceipt> {
    const { purgeId } = await requestPurge(this.db, userId);
    this.worker.kick();
    return (await findPurge(this.db, purgeId))!;
  }

  /**
   * The user's newest purge now, then whenever its progress moves (re-read every `progressMs`:
   * purges are rare, so a poll per watcher costs less than another notification channel), until
   * it has finished or the server stops. Nothing is emitted while the user has no purge.
   */
  async *progress(userId: string): AsyncGenerator<PurgeReceipt> {
    let shown = '';
    while (!this.closing.signal.aborted) {
      const [receipt] = await listPurges(this.db, userId, 1);
      if (receipt) {
        const key = `${receipt.purgeId}/${receipt.status}/${receipt.removedSoFar}`;
        if (key !== shown) {
          shown = key;
          yield receipt;
        }
        if (receipt.status === 'FINISHED') return;
      }
      await delay(this.config.progressMs, undefined, { signal: this.closing.signal }).catch(() => undefined);
    }
  }

  /** Ends the progress streams (before draining, so they do not hold the server open). */
  closeStreams(): void {
    this.closing.abort();
  }

  /** Stops after the chunk in flight, which commits or rolls back whole. */
  async stop(): Promise<void> {
    this.closing.abort();
    await this.worker.stop();
  }
}
