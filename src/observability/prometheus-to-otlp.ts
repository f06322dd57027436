import { ValueType, type Attributes, type HrTime } from '@opentelemetry/api';
import { AggregationTemporality, DataPointType, type DataPoint, type Histogram, type MetricData } from '@opentelemetry/sdk-metrics';

/**
 * One metric as prom-client's `Registry.getMetricsAsJSON()` gives it. Its declared types leave out a
 * histogram sample's own name (`_bucket`, `_sum`, `_count`) and call `type` an enum, which at run
 * time is the exposition's word (`counter`, `gauge`, …).
 */
export interface PrometheusMetric {
  name: string;
  help: string;
  type: unknown;
  values: readonly { value: number; labels: Partial<Record<string, string | number>>; metricName?: string }[];
}

type Labels = PrometheusMetric['values'][number]['labels'];

/**
 * The registry's metrics as OpenTelemetry data, under the same names, help, labels (as attributes)
 * and values: counters as monotonic cumulative sums, gauges as gauges, histograms as cumulative
 * explicit-bucket histograms. Counts run from `startTime` (the start of the export). Summaries have
 * no type in the SDK's data model; the app defines none. Metrics without samples are left out.
 */
export function prometheusToOtlp(metrics: readonly PrometheusMetric[], startTime: HrTime, endTime: HrTime): MetricData[] {
  const point = <T>(labels: Labels, value: T): DataPoint<T> => ({ startTime, endTime, attributes: attributes(labels), value });
  return metrics.flatMap((metric): MetricData[] => {
    if (metric.values.length === 0) return [];
    const descriptor = { name: metric.name, description: metric.help, unit: '', valueType: ValueType.DOUBLE };
    const temporality = AggregationTemporality.CUMULATIVE;
    switch (String(metric.type)) {
      case 'counter':
        return [
          {
            descriptor,
            aggregationTemporality: temporality,
            dataPointType: DataPointType.SUM,
            isMonotonic: true,
            dataPoints: metric.values.map(({ labels, value }) => point(labels, value)),
          },
        ];
      case 'gauge':
        return [
          {
            descriptor,
            aggregationTemporality: temporality,
            dataPointType: DataPointType.GAUGE,
            dataPoints: metric.values.map(({ labels, value }) => point(labels, value)),
          },
        ];
      case 'histogram':
        return [
          {
            descriptor,
            aggregationTemporality: temporality,
            dataPointType: DataPointType.HISTOGRAM,
            dataPoints: histograms(metric).map(({ labels, value }) => point(labels, value)),
          },
        ];
      default:
        return [];
    }
  });
}

/** One histogram per label set, from its `_bucket` (cumulative, by `le`), `_sum` and `_count` samples. */
function histograms(metric: PrometheusMetric): { labels: Labels; value: Histogram }[] {
  const series = new Map<string, { labels: Labels; buckets: { le: number; cumulative: number }[]; sum: number; count: number }>();
  for (const { labels, value, metricName } of metric.values) {
    const { le, ...own } = labels;
    const key = JSON.stringify(Object.entries(own).sort(([a], [b]) => a.localeCompare(b)));
    const entry = series.get(key) ?? { labels: own, buckets: [], sum: 0, count: 0 };
    series.set(key, entry);
    if (metricName === `${metric.name}_bucket`) entry.buckets.push({ le: Number(le), cumulative: value });
    else if (metricName === `${metric.name}_sum`) entry.sum = value;
    else if (metricName === `${metric.name}_count`) entry.count = value;
  }
  return [...series.values()].map(({ labels, buckets, sum, count }) => {
    // Prometheus counts each bucket with all below it; OTLP counts each apart, the last above every boundary.
    const finite = buckets.filter(({ le }) => Number.isFinite(le)).sort((a, b) => a.le - b.le);
    const counts = [...finite.map(({ cumulative }) => cumulative), count].map(
      (cumulative, index, all) => cumulative - (index === 0 ? 0 : all[index - 1]!),
    );
    return { labels, value: { buckets: { boundaries: finite.map(({ le }) => le), counts }, sum, count } };
  });
}

function attributes(labels: Labels): Attributes {
  return Object.fromEntries(Object.entries(labels).flatMap(([name, value]) => (value === undefined ? [] : [[name, String(value)]])));
}
