import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** A span as OTLP/HTTP JSON carries it, attributes flattened to plain values. */
export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  kind: number;
  links: { traceId: string; spanId: string }[];
  attributes: Record<string, unknown>;
  resource: Record<string, unknown>;
  /** 0 unset, 1 ok, 2 error (OTLP's StatusCode), with the error's description. */
  status: { code: number; message: string };
}

/** One metric of one metrics export, as OTLP/HTTP JSON carries it, attributes flattened. */
export interface ReceivedMetric {
  name: string;
  description: string;
  kind: 'sum' | 'gauge' | 'histogram' | 'other';
  /** Sums and histograms: 1 delta, 2 cumulative (OTLP's AggregationTemporality). */
  temporality: number;
  monotonic: boolean;
  points: {
    attributes: Record<string, unknown>;
    /** A sum's or a gauge's value. */
    value: number;
    /** A histogram's: explicit bounds, a count per bucket (one more than bounds), sum and count. */
    histogram?: { bounds: number[]; bucketCounts: number[]; sum: number; count: number };
  }[];
}

/** One metrics export request: the resource it came from and its metrics. */
export interface ReceivedMetrics {
  resource: Record<string, unknown>;
  metrics: ReceivedMetric[];
}

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

interface OtlpValue {
  stringValue?: string;
  intValue?: string | number;
  doubleValue?: number;
  boolValue?: boolean;
}
type OtlpAttribute = { key: string; value: OtlpValue };
interface OtlpRequest {
  resourceSpans?: {
    resource?: { attributes?: OtlpAttribute[] };
    scopeSpans?: {
      spans?: (Omit<ReceivedSpan, 'attributes' | 'resource' | 'links' | 'status'> & {
        status?: { code?: number; message?: string };
        attributes?: OtlpAttribute[];
        links?: { traceId: string; spanId: string }[];
      })[];
    }[];
  }[];
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
        if (keep) spans.push(...decode(body as OtlpRequest));
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

function decode(request: OtlpRequest): ReceivedSpan[] {
  return (request.resourceSpans ?? []).flatMap((resourceSpans) => {
    const resource = flatten(resourceSpans.resource?.attributes);
    return (resourceSpans.scopeSpans ?? []).flatMap((scope) =>
      (scope.spans ?? []).map((span) => ({
        traceId: span.traceId,
        spanId: span.spanId,
        parentSpanId: span.parentSpanId ?? '',
        name: span.name,
        kind: span.kind,
        links: (span.links ?? []).map(({ traceId, spanId }) => ({ traceId, spanId })),
        attributes: flatten(span.attributes),
        resource,
        status: { code: span.status?.code ?? 0, message: span.status?.message ?? '' },
      })),
    );
  });
}

interface OtlpNumberPoint {
  attributes?: OtlpAttribute[];
  asDouble?: number;
  asInt?: string | number;
}
interface OtlpHistogramPoint {
  attributes?: OtlpAttribute[];
  count: string | number;
  sum?: number;
  bucketCounts?: (string | number)[];
  explicitBounds?: number[];
}
interface OtlpMetricsRequest {
  resourceMetrics?: {
    resource?: { attributes?: OtlpAttribute[] };
    scopeMetrics?: {
      metrics?: {
        name: string;
        description?: string;
        sum?: { dataPoints?: OtlpNumberPoint[]; aggregationTemporality?: number; isMonotonic?: boolean };
        gauge?: { dataPoints?: OtlpNumberPoint[] };
        histogram?: { dataPoints?: OtlpHistogramPoint[]; aggregationTemporality?: number };
      }[];
    }[];
  }[];
}

function decodeMetrics(request: OtlpMetricsRequest): ReceivedMetrics[] {
  return (request.resourceMetrics ?? []).map((resourceMetrics) => ({
    resource: flatten(resourceMetrics.resource?.attributes),
    metrics: (resourceMetrics.scopeMetrics ?? []).flatMap((scope) =>
      (scope.metrics ?? []).map((metric): ReceivedMetric => {
        const numbers = (metric.sum ?? metric.gauge)?.dataPoints ?? [];
        const base = { name: metric.name, description: metric.description ?? '' };
        if (metric.histogram) {
          const points = (metric.histogram.dataPoints ?? []).map((point) => ({
            attributes: flatten(point.attributes),
            value: Number(point.count),
            histogram: {
              bounds: point.explicitBounds ?? [],
              bucketCounts: (point.bucketCounts ?? []).map(Number),
              sum: point.sum ?? 0,
              count: Number(point.count),
            },
          }));
          return { ...base, kind: 'histogram', temporality: metric.histogram.aggregationTemporality ?? 0, monotonic: false, points };
        }
        const points = numbers.map((point) => ({ attributes: flatten(point.attributes), value: point.asDouble ?? Number(point.asInt) }));
        if (metric.sum)
          return {
            ...base,
            kind: 'sum',
            temporality: metric.sum.aggregationTemporality ?? 0,
            monotonic: metric.sum.isMonotonic ?? false,
            points,
          };
        return { ...base, kind: metric.gauge ? 'gauge' : 'other', temporality: 0, monotonic: false, points };
      }),
    ),
  }));
}

function flatten(attributes: OtlpAttribute[] | undefined): Record<string, unknown> {
  return Object.fromEntries(
    (attributes ?? []).map(({ key, value }) => [
      key,
      value.stringValue ?? (value.intValue !== undefined ? Number(value.intValue) : (value.doubleValue ?? value.boolValue)),
    ]),
  );
}
