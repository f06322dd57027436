import type { Tracer } from '@opentelemetry/api';
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { Config } from '../config/config.js';
import type { Channel } from '../db/listen/channel-listener.js';
import type { Database } from '../db/schema.js';
import type { SubscriptionCaps } from '../util/subscription-caps.js';
import { decodePurgeNotification, progressKey, PURGE_CHANNEL } from './purge-notification.js';
import { PurgeProgressFeed } from './purge-progress-feed.js';
import { PurgeWorker } from './purge-worker.js';
import { DownstreamProcessors } from './downstream-processors.js';
import { findPurge, listPurges, purgeDurationSeconds, requestPurge, runningPurges, type PurgeReceipt } from './purge.store.js';

export type { PurgeReceipt, PurgeTarget } from './purge.store.js';
export { NOT_LEFT_SQLSTATE, PURGE_RUNNING_SQLSTATE } from './purge.store.js';

/**
 * Purges as resolvers see them: request (and start the work here), read, follow; and through
 * `downstream`, what the downstream processors report of them.
 */
export class PurgeJobs {
  private readonly worker: PurgeWorker;
  readonly feed: PurgeProgressFeed;
  readonly downstream: DownstreamProcessors;

  /** `caps`: the places for the streams users follow (shared with status streams). */
  constructor(
    private readonly db: Kysely<Database>,
    workerDb: Kysely<Database>,
    channel: Channel,
    private readonly logger: Logger,
    config: Config['purge'],
    caps: SubscriptionCaps,
    tracer: Tracer,
    /** A purge finished here: the signals it removed and its time from request to end (metrics). */
    onFinished: (removed: number, seconds: number | null) => void = () => undefined,
  ) {
    this.feed = new PurgeProgressFeed(db, caps);
    this.downstream = new DownstreamProcessors(db);
    this.worker = new PurgeWorker({
      db: workerDb,
      logger,
      tracer,
      chunkSize: config.chunkSize,
      chunkPauseMs: config.chunkPauseMs,
      pollMs: config.pollMs,
      onChunk: (chunk) => {
        this.feed.changed(chunk.userId, progressKey(chunk.purgeId, chunk.finished ? 'FINISHED' : 'RUNNING', chunk.removedSoFar));
        if (!chunk.finished) return;
        void purgeDurationSeconds(db, chunk.purgeId).then(
          (seconds) => onFinished(chunk.removedSoFar, seconds),
          () => onFinished(chunk.removedSoFar, null),
        );
      },
    });
    channel.subscribe({
      channel: PURGE_CHANNEL,
      onNotification: (payload) => this.notified(payload),
      onListening: () => this.feed.resync(),
    });
  }

  /** Resumes whatever purge a crash or restart left running, then waits for new ones. */
  start(): void {
    this.worker.start();
  }

  async request(userId: string): Promise<PurgeReceipt> {
    const { purgeId } = await requestPurge(this.db, userId);
    this.worker.kick();
    this.feed.changed(userId);
    return (await findPurge(this.db, purgeId))!;
  }

  /** Purges not finished in the whole deployment. */
  running(): Promise<number> {
    return runningPurges(this.db);
  }

  /** Null for an unknown purge. */
  find(purgeId: string): Promise<PurgeReceipt | null> {
    return findPurge(this.db, purgeId);
  }

  /** A user's purges, newest first. */
  list(userId: string, limit: number): Promise<PurgeReceipt[]> {
    return listPurges(this.db, userId, limit);
  }

  /**
   * The user's newest purge now, then whenever its progress moves, until it has finished, the
   * client leaves or the server stops; nothing is emitted while the user has no purge. Takes a
   * subscription place (TooManySubscriptionsError beyond a cap).
   */
  progress(userId: string): AsyncIterableIterator<PurgeReceipt> {
    return this.feed.follow(userId);
  }

  /** A `community_purge` notification (a chunk or request on any instance, or SQL). */
  private notified(payload: string): void {
    const change = decodePurgeNotification(payload);
    if (change) this.feed.changed(change.userId, change.key);
    else this.logger.warn({ payload }, 'purge notification not understood; ignored');
  }

  /** Ends the progress streams (before draining, so they do not hold the server open). */
  closeStreams(): void {
    this.feed.close();
  }

  /** Stops after the chunk in flight, which commits or rolls back whole. */
  async stop(): Promise<void> {
    this.feed.close();
    await this.worker.stop();
  }
}
