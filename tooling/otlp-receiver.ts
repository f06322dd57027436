import http from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  decodeMetrics,
  decodeSpans,
  type OtlpMetricsRequest,
  type OtlpSpansRequest,
  type ReceivedMetrics,
  type ReceivedSpan,
} from './otlp-json.js';

export interface OtlpReceiver {
  /** The base URL, as OTEL_EXPORTER_OTLP_ENDPOINT (traces arrive at /v1/traces, metrics at /v1/metrics). */
  url: string;
  spans: ReceivedSpan[];
  /** Trace export requests received (each a batch of spans). */
  exports: number;
  /** Metrics export requests received, in order of arrival. */
  metricExports: ReceivedMetrics[];
  /** Resolves once a span satisfying `match` has arrived. */
  waitFor(match: (span: ReceivedSpan) => boolean, timeoutMs?: number): Promise<ReceivedSpan>;
  /** Resolves once a metrics export satisfying `match` has arrived. */
  waitForMetrics(match: (received: ReceivedMetrics) => boolean, timeoutMs?: number): Promise<ReceivedMetrics>;
  close(): Promise<void>;
}

/**
 * An OTLP/HTTP receiver on loopback, for the real exporters to send to: it accepts JSON
 * (`application/json`, what @opentelemetry/exporter-trace-otlp-http and -metrics-otlp-http send)
 * and keeps the spans and metrics, or with `keep: false` only counts the exports (the bench's
 * discarding collector).
 */
export async function startOtlpReceiver(options: { keep?: boolean } = {}): Promise<OtlpReceiver> {
  const keep = options.keep ?? true;
  const spans: ReceivedSpan[] = [];
  const metricExports: ReceivedMetrics[] = [];
  const waiters = new Set<() => void>();
  const receiver = { spans, metricExports, exports: 0 } as OtlpReceiver;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => keep && chunks.push(chunk));
    req.on('end', () => {
      const signal = req.method === 'POST' && req.headers['content-type']?.startsWith('application/json') ? req.url : undefined;
      if (signal !== '/v1/traces' && signal !== '/v1/metrics') {
        res.writeHead(415).end();
        return;
      }
      const body = keep ? (JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown) : undefined;
      if (signal === '/v1/traces') {
        receiver.exports++;
        if (keep) spans.push(...decodeSpans(body as OtlpSpansRequest));
      } else {
        metricExports.push(...(keep ? decodeMetrics(body as OtlpMetricsRequest) : []));
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      waiters.forEach((wake) => wake());
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const waitFor =
    <T>(items: T[], what: string) =>
    (match: (item: T) => boolean, timeoutMs = 60_000) =>
      new Promise<T>((resolve, reject) => {
        const timer = setTimeout(() => (waiters.delete(check), reject(new Error(`no such ${what} arrived`))), timeoutMs);
        const check = () => {
          const found = items.find(match);
          if (!found) return;
          clearTimeout(timer);
          waiters.delete(check);
          resolve(found);
        };
        waiters.add(check);
        check();
      });
  receiver.waitFor = waitFor(spans, 'span');
  receiver.waitForMetrics = waitFor(metricExports, 'metrics export');
  receiver.close = () => new Promise((resolve) => server.close(() => resolve()));
  return receiver;
}
