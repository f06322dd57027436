import { context, ProxyTracerProvider, type Tracer } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { CompressionAlgorithm } from '@opentelemetry/otlp-exporter-base';
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BatchSpanProcessor,
  ParentBasedSampler,
  TraceIdRatioBasedSampler,
  TracerProvider,
  type Sampler,
} from '@opentelemetry/sdk-trace';
import type { TelemetryConfig } from '../config/groups/observability.js';
import { serviceResource } from './service-resource.js';

export interface Tracing {
  /** Spans of this app; a no-op tracer when tracing is off. */
  readonly tracer: Tracer;
  readonly enabled: boolean;
  /** Exports what is buffered and stops the exporter. */
  shutdown(): Promise<void>;
}

const TRACER_NAME = 'community-layer';
const EXPORT_TIMEOUT_MS = 10_000;

/**
 * The app's tracer provider, not registered globally: each app passes its tracer to what it builds
 * (several apps may share a process, as in the tests). Only the context manager is global (the
 * API keeps one per process, and `startActiveSpan` needs it); it holds nothing but the active
 * context, so it stays installed after stop for any other app in the process.
 *
 * The SDK is `@opentelemetry/sdk-trace`, whose provider and processor read no environment (the
 * `-base` package wraps them with `OTEL_*` fallbacks): every option comes from the parsed config.
 * The exporter still merges `OTEL_EXPORTER_OTLP_*` under the options given; each one it would use
 * is passed explicitly, so what runs is what the config checked.
 */
export function startTracing(config: TelemetryConfig, instanceId: string): Tracing {
  if (!config.exporter) return { tracer: new ProxyTracerProvider().getTracer(TRACER_NAME), enabled: false, shutdown: async () => {} };
  // Enabled only if it becomes the global one: another enabled store would tax every async resource.
  const manager = new AsyncLocalStorageContextManager();
  if (context.setGlobalContextManager(manager)) manager.enable();
  const provider = new TracerProvider({
    resource: serviceResource(config.serviceName, instanceId),
    sampler: sampler(config.sampler, config.samplerArg),
    spanLimits: { attributeCountLimit: 128, linkCountLimit: 1_024, eventCountLimit: 128, attributeValueLengthLimit: 4_096 },
    spanProcessors: [
      new BatchSpanProcessor({
        exporter: new OTLPTraceExporter({
          url: config.exporter.url,
          headers: config.exporter.headers,
          compression: CompressionAlgorithm.NONE,
          timeoutMillis: EXPORT_TIMEOUT_MS,
          concurrencyLimit: 4,
        }),
        scheduledDelayMillis: config.scheduleDelayMs,
        maxQueueSize: config.maxQueueSize,
        maxExportBatchSize: Math.min(512, config.maxQueueSize),
        exportTimeoutMillis: EXPORT_TIMEOUT_MS,
      }),
    ],
  });
  return { tracer: provider.getTracer(TRACER_NAME), enabled: true, shutdown: () => provider.shutdown() };
}

function sampler(kind: TelemetryConfig['sampler'], ratio: number): Sampler {
  switch (kind) {
    case 'always_on':
      return new AlwaysOnSampler();
    case 'always_off':
      return new AlwaysOffSampler();
    case 'traceidratio':
      return new TraceIdRatioBasedSampler(ratio);
    case 'parentbased_always_on':
      return new ParentBasedSampler({ root: new AlwaysOnSampler() });
    case 'parentbased_always_off':
      return new ParentBasedSampler({ root: new AlwaysOffSampler() });
    case 'parentbased_traceidratio':
      return new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(ratio) });
  }
}
