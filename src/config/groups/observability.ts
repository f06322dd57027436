import { z } from 'zod';
import { count, flag, group, httpUrl, optional, setting } from '../setting.js';

const SAMPLERS = [
  'always_on',
  'always_off',
  'traceidratio',
  'parentbased_always_on',
  'parentbased_always_off',
  'parentbased_traceidratio',
] as const;

/** `key=value` pairs separated by commas, values URL-encoded (the OTLP exporter specification's format). */
const headerList = z.string().transform((value, ctx) => {
  const headers: Record<string, string> = {};
  for (const pair of value.split(',').filter((entry) => entry.trim() !== '')) {
    const at = pair.indexOf('=');
    const name = pair.slice(0, at).trim();
    if (at < 1 || name === '') {
      ctx.addIssue({ code: 'custom', message: 'must be comma-separated key=value pairs' });
      return z.NEVER;
    }
    headers[name] = decodeURIComponent(pair.slice(at + 1).trim());
  }
  return headers;
});

/**
 * Telemetry: the OpenTelemetry export of traces and of metrics, read from the standard variables of
 * the OpenTelemetry specification (the SDKs are given these parsed values; see docs/operations.md).
 * Each signal is off unless an OTLP endpoint for it is set.
 */
export const telemetry = group(
  {
    endpoint: setting(
      'OTEL_EXPORTER_OTLP_ENDPOINT',
      optional(httpUrl),
      "OTLP/HTTP base URL (traces go to `<url>/v1/traces`, metrics to `<url>/v1/metrics`); unset with a signal's own URL unset: that signal is not exported, no SDK started for it",
    ),
    tracesEndpoint: setting(
      'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT',
      optional(httpUrl),
      'OTLP/HTTP URL for traces, used as it is',
      '`OTEL_EXPORTER_OTLP_ENDPOINT` + `/v1/traces`',
    ),
    metricsEndpoint: setting(
      'OTEL_EXPORTER_OTLP_METRICS_ENDPOINT',
      optional(httpUrl),
      'OTLP/HTTP URL for metrics, used as it is',
      '`OTEL_EXPORTER_OTLP_ENDPOINT` + `/v1/metrics`',
    ),
    headers: setting(
      'OTEL_EXPORTER_OTLP_HEADERS',
      optional(headerList),
      'headers of every export, `key=value,…` (URL-encoded values), e.g. a collector token',
      '(none)',
    ),
    disabled: setting(
      'OTEL_SDK_DISABLED',
      flag.default(false),
      '`true`: neither traces nor metrics are exported, even with an endpoint set',
    ),
    serviceName: setting(
      'OTEL_SERVICE_NAME',
      z.string().min(1).default('community-layer'),
      '`service.name` of every exported span and metric',
    ),
    sampler: setting(
      'OTEL_TRACES_SAMPLER',
      z.enum(SAMPLERS).default('parentbased_always_on'),
      '`always_on`, `always_off`, `traceidratio` or their `parentbased_` forms (a sampled `traceparent` is followed)',
    ),
    samplerArg: setting(
      'OTEL_TRACES_SAMPLER_ARG',
      z.coerce.number().min(0).max(1).default(1),
      'the ratio of the `traceidratio` samplers, 0 to 1',
    ),
    scheduleDelayMs: setting(
      'OTEL_BSP_SCHEDULE_DELAY',
      count(1, 600_000).default(5_000),
      'most time a finished span waits before it is exported',
    ),
    maxQueueSize: setting(
      'OTEL_BSP_MAX_QUEUE_SIZE',
      count(1, 1_000_000).default(2_048),
      'most finished spans waiting for export; beyond them spans are dropped',
    ),
    metricExportIntervalMs: setting(
      'OTEL_METRIC_EXPORT_INTERVAL',
      count(100, 3_600_000).default(60_000),
      'time between two exports of the metrics over OTLP',
    ),
  },
  (settings) =>
    settings.transform(({ endpoint, tracesEndpoint, metricsEndpoint, disabled, headers, metricExportIntervalMs, ...rest }) => {
      const base = endpoint?.replace(/\/$/, '');
      const url = tracesEndpoint ?? (base ? `${base}/v1/traces` : undefined);
      const metricsUrl = metricsEndpoint ?? (base ? `${base}/v1/metrics` : undefined);
      return {
        ...rest,
        exporter: url && !disabled ? { url, headers: headers ?? {} } : null,
        metricsExporter: metricsUrl && !disabled ? { url: metricsUrl, headers: headers ?? {}, intervalMs: metricExportIntervalMs } : null,
      };
    }),
);

export type TelemetryConfig = z.output<typeof telemetry.schema>;
/** Where and how often the metrics go over OTLP; null: not exported. */
export type MetricsExportConfig = TelemetryConfig['metricsExporter'];

/** One line per HTTP request (probes excepted), at `info`. */
export const accessLog = group({
  sample: setting(
    'ACCESS_LOG_SAMPLE',
    z.coerce.number().min(0).max(1).default(1),
    'share of requests written to the access log, 0 (none) to 1 (every one)',
  ),
});
