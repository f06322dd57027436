import { Counter, type Registry } from 'prom-client';

const CLASSES = ['1xx', '2xx', '3xx', '4xx', '5xx'] as const;

/**
 * HTTP responses by status class. A response is counted in a plain array (no label lookup on the
 * request path); the counter takes the sums when scraped, as fair share's counters do.
 */
export function httpResponseMetrics(registry: Registry): (status: number) => void {
  const pending = CLASSES.map(() => 0);
  new Counter<'status_class'>({
    name: 'community_http_responses_total',
    help: "HTTP responses of the API port (the probes /healthz and /readyz left out) by status class: 2xx, 3xx, 4xx (the caller's), 5xx (the service's).",
    labelNames: ['status_class'] as const,
    registers: [registry],
    collect() {
      CLASSES.forEach((statusClass, index) => {
        this.inc({ status_class: statusClass }, pending[index]!);
        pending[index] = 0;
      });
    },
  });
  return (status) => {
    const index = Math.floor(status / 100) - 1;
    if (index >= 0 && index < CLASSES.length) pending[index]!++;
  };
}
