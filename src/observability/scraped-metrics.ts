import { Counter, Gauge, type Registry } from 'prom-client';

/** A Prometheus gauge that reads its value from elsewhere when scraped. */
export function scrapedGauge(registry: Registry, name: string, help: string, read: () => number): void {
  new Gauge({
    name,
    help,
    registers: [registry],
    collect() {
      this.set(read());
    },
  });
}

/** A Prometheus counter that follows a monotonic count kept elsewhere. */
export function mirrorCounter(registry: Registry, name: string, help: string, read: () => number): void {
  let seen = 0;
  new Counter({
    name,
    help,
    registers: [registry],
    collect() {
      const current = read();
      if (current > seen) this.inc(current - seen);
      seen = current;
    },
  });
}
