import { performance, type EventLoopUtilization } from 'node:perf_hooks';

const SAMPLE_MS = 50;

/**
 * How busy this process's event loop was over the last SAMPLE_MS: the share of time it ran code
 * rather than waited for I/O. Near 1, it reads new sockets late (the kernel holds them, and every
 * client waits, even for a refusal), so the bulk door takes no more work until it drops.
 *
 * The share is at most the CPU time the process had in that time: on a host whose cores other
 * processes also want, a loop waiting for a core counts as running, and its utilization alone
 * stayed near 1 with little work of its own, closing the door to every batch (bench case 12).
 */
export class EventLoopLoad {
  private last: EventLoopUtilization = performance.eventLoopUtilization();
  private lastCpu = process.cpuUsage();
  private lastAt = performance.now();
  private timer: NodeJS.Timeout | null = null;
  private lastUtilization = 0;

  get utilization(): number {
    return this.lastUtilization;
  }

  /** `onSample` runs after each sample (the door lets waiting requests in when the loop has room). */
  start(onSample: () => void): void {
    this.timer = setInterval(() => {
      const now = performance.eventLoopUtilization();
      const cpu = process.cpuUsage();
      const at = performance.now();
      const cpuMs = (cpu.user - this.lastCpu.user + cpu.system - this.lastCpu.system) / 1000;
      this.lastUtilization = Math.min(performance.eventLoopUtilization(now, this.last).utilization, cpuMs / Math.max(1, at - this.lastAt));
      this.last = now;
      this.lastCpu = cpu;
      this.lastAt = at;
      onSample();
    }, SAMPLE_MS);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }
}
