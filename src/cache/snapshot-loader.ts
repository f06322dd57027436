import type { Logger } from 'pino';
import type { MembershipCache } from './membership-cache.js';
import type { MembershipSource } from './membership-source.js';
import { U64HashSet } from './u64-hash-set.js';

const PROGRESS_EVERY = 200_000;

/**
 * Brings the cache up to a database snapshot: a full reload (start-up, drift), or only the rows
 * above the applied version (reconnects, the backstop). Notifications that arrive meanwhile are
 * recorded by the cache and replayed over the snapshot.
 */
export class SnapshotLoader {
  constructor(
    private readonly cache: MembershipCache,
    private readonly source: MembershipSource,
    private readonly logger: Logger,
  ) {}

  async fullReload(): Promise<void> {
    const started = performance.now();
    this.cache.beginSnapshot();
    try {
      let set = new U64HashSet();
      const version = await this.source.readLeftUsers({
        // Pre-sized from the planner's estimate so the set does not rehash as it fills.
        expect: (count) => (set = new U64HashSet(count)),
        add: (userIds) => {
          const before = set.size;
          for (const userId of userIds) set.add(userId);
          if (Math.floor(set.size / PROGRESS_EVERY) > Math.floor(before / PROGRESS_EVERY)) {
            this.logger.info({ loaded: set.size }, 'loading membership cache');
          }
        },
      });
      set.compact();
      this.cache.finishReload(set, version);
      this.logger.info(
        { entries: set.size, version: version.toString(), ms: Math.round(performance.now() - started) },
        'membership cache loaded',
      );
    } catch (error) {
      this.cache.abortSnapshot();
      throw error;
    }
  }

  /** Applies rows above the applied version; false when the LEFT count says a full reload is due. */
  async deltaResync(): Promise<boolean> {
    this.cache.beginSnapshot();
    const since = this.cache.appliedVersion;
    try {
      const snapshot = await this.source.readChangesSince(since);
      this.cache.finishDelta(snapshot.rows, snapshot.version);
      // Deletes leave no row behind to resync from; a drifting count catches them.
      return this.cache.appliedVersion !== snapshot.version || this.cache.size === snapshot.leftCount;
    } catch (error) {
      this.cache.abortSnapshot();
      throw error;
    }
  }
}
