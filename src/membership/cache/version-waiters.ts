/**
 * Read-your-writes: callers wait until the cache has applied a version. Waiters are released when
 * the version is applied, when the cache falls out of sync (a request must not stall on a lost
 * listener), or after their timeout.
 */
export class VersionWaiters {
  private waiters: { version: bigint; resolve(): void }[] = [];

  wait(version: bigint, timeoutMs: number): Promise<void> {
    return new Promise((resolve) => {
      const waiter = { version, resolve };
      const timer = setTimeout(() => this.release(waiter), timeoutMs);
      waiter.resolve = () => {
        clearTimeout(timer);
        resolve();
      };
      this.waiters.push(waiter);
    });
  }

  /** Releases every waiter whose version is at or below `applied`. */
  reached(applied: bigint): void {
    if (this.waiters.length === 0) return;
    const due = this.waiters.filter((waiter) => waiter.version <= applied);
    if (due.length === 0) return;
    this.waiters = this.waiters.filter((waiter) => waiter.version > applied);
    for (const waiter of due) waiter.resolve();
  }

  releaseAll(): void {
    for (const waiter of this.waiters.splice(0)) waiter.resolve();
  }

  private release(waiter: { version: bigint; resolve(): void }): void {
    this.waiters = this.waiters.filter((other) => other !== waiter);
    waiter.resolve();
  }
}
