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

export interface OtlpReceiver {
  /** The base URL, as OTEL_EXPORTER_OTLP_ENDPOINT (traces arrive at /v1/traces). */
  url: string;
  spans: ReceivedSpan[];
  /** Export requests received (each a batch of spans). */
  exports: number;
  /** Resolves once a span satisfying `match` has arrived. */
  waitFor(match: (span: ReceivedSpan) => boolean, timeoutMs?: number): Promise<ReceivedSpan>;
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
    scopeSpans?: { spans?: (Omit<ReceivedSpan, 'attributes' | 'resource' | 'links' | 'status'> & { status?: { code?: number; message?: string }; attributes?: OtlpAttribute[]; links?: { traceId: string; spanId: string }[] })[] }[];
  }[];
}

/**
 * An OTLP/HTTP receiver on loopback, for the real exporter to send to: it accepts JSON
 * (`application/json`, what @opentelemetry/exporter-trace-otlp-http sends) and keeps the spans, or
 * with `keep: false` only counts the exports (the bench's discarding collector).
 */
export async function startOtlpReceiver(options: { keep?: boolean } = {}): Promise<OtlpReceiver> {
  const keep = options.keep ?? true;
  const spans: ReceivedSpan[] = [];
  const waiters = new Set<() => void>();
  const receiver = { spans, exports: 0 } as OtlpReceiver;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => keep && chunks.push(chunk));
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/v1/traces' || !req.headers['content-type']?.startsWith('application/json')) {
        res.writeHead(415).end();
        return;
      }
      receiver.exports++;
      if (keep) spans.push(...decode(JSON.parse(Buffer.concat(chunks).toString('utf8')) as OtlpRequest));
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      waiters.forEach((wake) => wake());
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  receiver.waitFor = (match, timeoutMs = 60_000) =>
    new Promise((resolve, reject) => {
      const timer = setTimeout(() => (waiters.delete(check), reject(new Error('no such span arrived'))), timeoutMs);
      const check = () => {
        const found = spans.find(match);
        if (!found) return;
        clearTimeout(timer);
        waiters.delete(check);
        resolve(found);
      };
      waiters.add(check);
      check();
    });
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

function flatten(attributes: OtlpAttribute[] | undefined): Record<string, unknown> {
  return Object.fromEntries(
    (attributes ?? []).map(({ key, value }) => [key, value.stringValue ?? (value.intValue !== undefined ? Number(value.intValue) : (value.doubleValue ?? value.boolValue))]),
  );
}
