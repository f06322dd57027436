/**
 * The share of an instance's delivery workers (half of them, at least one) that may be held by
 * attempts not known to be quick: those of endpoints on probation (new ones, and any since a
 * failure or a slow attempt, until WEBHOOK_PROBATION_SUCCESSES quick successes in a row) and those
 * of trusted endpoints that have run past WEBHOOK_SLOW_MS. The other workers serve trusted endpoints
 * only, each of their attempts for at most WEBHOOK_SLOW_MS before it joins the lane or is cut.
 * In memory, per instance: it bounds this instance's workers, which is what a hang takes.
 */
export class SlowLane {
  private running = 0;

  constructor(readonly size: number) {}

  static forWorkers(workers: number): SlowLane {
    return new SlowLane(Math.max(1, Math.floor(workers / 2)));
  }

  /** A place in the lane, if one is free; the caller leaves it when its job ends. */
  enter(): boolean {
    if (this.running >= this.size) return false;
    this.running++;
    return true;
  }

  get full(): boolean {
    return this.running >= this.size;
  }

  leave(): void {
    this.running--;
  }
}
