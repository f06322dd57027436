import { performance, type EventLoopUtilization } from 'node:perf_hooks';

const SAMPLE_MS = 50;

/**
 * How busy this process's event loop was over the last SAMPLE_MS: the share of time it ran code
 * rather than waited for I/O. Near 1, it reads new sockets late (the kernel holds them, and every
 * client waits, even for a refusal), so the bulk door takes no more work until it drops.
 */
export class EventLoopLoad {
  private last: EventLoopUtilization = performance.eventLoopUtilization();
  private timer: NodeJS.Timeout | null = null;
  private lastUtilization = 0;

  get utilization(): number {
    return this.lastUtilization;
  }

  /** `onSample` runs after each sample (the door lets waiting requests in when the loop has room). */
  start(onSample: () => void): void {
    this.timer = setInterval(() => {
      const now = performance.eventLoopUtilization();
      this.lastUtilization = performance.eventLoopUtilization(now, this.last).utilization;
      this.last = now;
      onSample();
    }, SAMPLE_MS);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }
}
