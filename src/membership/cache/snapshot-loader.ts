import type { Logger } from 'pino';
import type { MembershipCache } from './membership-cache.js';
import type { MembershipSource } from './membership-source.js';

const PROGRESS_EVERY = 200_000;

/**
 * Brings the cache up to a database snapshot: a full reload (start-up, drift), or only the rows
 * above the applied version (reconnects, the backstop). Notifications that arrive meanwhile are
 * recorded by the cache and replayed over the snapshot. `unbroken()` tells, at the end, whether one
 * LISTEN session delivered every notification since before the read began.
 */
export class SnapshotLoader {
  constructor(
    private readonly cache: MembershipCache,
    private readonly source: MembershipSource,
    private readonly logger: Logger,
  ) {}

  async fullReload(unbroken: () => boolean): Promise<void> {
    const started = performance.now();
    this.cache.beginReload();
    try {
      let loaded = 0;
      const version = await this.source.readLeftUsers({
        expect: (count) => this.cache.expectLeft(count),
        add: (packedUserIds) => {
          this.cache.addSnapshotLeft(packedUserIds);
          const before = loaded;
          loaded += packedUserIds.length / 8;
          if (Math.floor(loaded / PROGRESS_EVERY) > Math.floor(before / PROGRESS_EVERY)) {
            this.logger.info({ loaded }, 'loading membership cache');
          }
        },
      });
      this.cache.finishReload(version, unbroken());
      this.logger.info(
        { entries: this.cache.size, version: version.toString(), ms: Math.round(performance.now() - started) },
        'membership cache loaded',
      );
    } catch (error) {
      this.cache.abortReading();
      throw error;
    }
  }

  /** Applies rows above the applied version; false when the LEFT count says a full reload is due. */
  async deltaResync(unbroken: () => boolean): Promise<boolean> {
    const since = this.cache.beginDelta();
    try {
      const snapshot = await this.source.readChangesSince(since);
      return this.cache.finishDelta(snapshot, unbroken());
    } catch (error) {
      this.cache.abortReading();
      throw error;
    }
  }
}
