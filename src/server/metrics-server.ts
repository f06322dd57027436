import http from 'node:http';
import type { Registry } from 'prom-client';

/**
 * Prometheus metrics on a listener of their own (METRICS_HOST, loopback by default, and
 * METRICS_PORT): the API port is public, and metrics tell an outsider the traffic, the cache and
 * the pool. A scraper on the same host or network namespace (a sidecar, the node's agent) reaches it.
 */
export function createMetricsServer(registry: Registry): http.Server {
  return http.createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (req.method !== 'GET' || path !== '/metrics') {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found: GET /metrics\n');
      return;
    }
    registry.metrics().then(
      (body) => res.writeHead(200, { 'content-type': registry.contentType, 'cache-control': 'no-store' }).end(body),
      () => res.writeHead(500, { 'content-type': 'text/plain' }).end('metrics unavailable\n'),
    );
  });
}
