import { hrTime } from '@opentelemetry/core';
import { OTLPMetricExporter } from '@opentelemetry/exporter-metrics-otlp-http';
import { CompressionAlgorithm } from '@opentelemetry/otlp-exporter-base';
import { emptyResource } from '@opentelemetry/resources';
import {
  AggregationTemporality,
  MeterProvider,
  PeriodicExportingMetricReader,
  type CollectionResult,
  type MetricProducer,
} from '@opentelemetry/sdk-metrics';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { MetricsExportConfig } from '../config/groups/observability.js';
import { buildInfo } from './build-info.js';
import { prometheusToOtlp } from './prometheus-to-otlp.js';
import { serviceResource } from './service-resource.js';

export interface MetricsExport {
  /** Exports every interval from now on. */
  start(): void;
  /** Exports once more and stops; gives up (with a warning) after EXPORT_TIMEOUT_MS. */
  stop(): Promise<void>;
}

const EXPORT_TIMEOUT_MS = 10_000;
const SCOPE_NAME = 'community-layer';

/**
 * The app's Prometheus registry, pushed over OTLP/HTTP (JSON) as well as scraped: one source, so
 * both carry the same metrics. The SDK's MeterProvider holds no instruments of its own; its periodic
 * reader collects from a producer that reads the registry. As in tracing.ts, every exporter option
 * comes from the parsed config, and nothing is registered globally.
 */
export function metricsExport(
  config: MetricsExportConfig,
  registry: Registry,
  instanceId: string,
  serviceName: string,
  logger: Logger,
): MetricsExport {
  if (!config) return { start: () => {}, stop: async () => {} };
  let provider: MeterProvider | null = null;
  return {
    start() {
      const exporter = new OTLPMetricExporter({
        url: config.url,
        headers: config.headers,
        compression: CompressionAlgorithm.NONE,
        timeoutMillis: EXPORT_TIMEOUT_MS,
        concurrencyLimit: 1,
        temporalityPreference: AggregationTemporality.CUMULATIVE,
      });
      const reader = new PeriodicExportingMetricReader({
        exporter,
        exportIntervalMillis: config.intervalMs,
        // The SDK requires an export to end within the interval.
        exportTimeoutMillis: Math.min(config.intervalMs, EXPORT_TIMEOUT_MS),
        metricProducers: [registryProducer(registry)],
      });
      provider = new MeterProvider({ resource: serviceResource(serviceName, instanceId), readers: [reader] });
    },
    async stop() {
      // A collector that does not answer must not hold up the stop.
      await provider
        ?.shutdown({ timeoutMillis: EXPORT_TIMEOUT_MS })
        .catch((error: unknown) => logger.warn({ err: error }, 'the final metrics export did not finish'));
    },
  };
}

/** Reads the registry at each collection, with counts running from the producer's creation. */
function registryProducer(registry: Registry): MetricProducer {
  const startTime = hrTime();
  const scope = { name: SCOPE_NAME, version: buildInfo().version };
  return {
    async collect(): Promise<CollectionResult> {
      // The reader keeps its own resource; a producer's is ignored.
      const resource = emptyResource();
      try {
        const metrics = prometheusToOtlp(await registry.getMetricsAsJSON(), startTime, hrTime());
        return { resourceMetrics: { resource, scopeMetrics: [{ scope, metrics }] }, errors: [] };
      } catch (error) {
        return { resourceMetrics: { resource, scopeMetrics: [] }, errors: [error] };
      }
    },
  };
}
