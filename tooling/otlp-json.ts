// OTLP/HTTP JSON, as the exporters send it, decoded into plain spans and metrics (attributes flattened to values).

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

interface OtlpValue {
  stringValue?: string;
  intValue?: string | number;
  doubleValue?: number;
  boolValue?: boolean;
}
type OtlpAttribute = { key: string; value: OtlpValue };
export interface OtlpSpansRequest {
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

export function decodeSpans(request: OtlpSpansRequest): ReceivedSpan[] {
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
export interface OtlpMetricsRequest {
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

export function decodeMetrics(request: OtlpMetricsRequest): ReceivedMetrics[] {
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
