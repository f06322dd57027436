import type { AsyncLocalStorage } from 'node:async_hooks';
import type http from 'node:http';
import {
  defaultTextMapGetter,
  isSpanContextValid,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Context,
  type Span,
  type Tracer,
} from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import {
  ATTR_HTTP_REQUEST_METHOD,
  ATTR_HTTP_RESPONSE_STATUS_CODE,
  ATTR_HTTP_ROUTE,
  ATTR_URL_PATH,
} from '@opentelemetry/semantic-conventions';
import type { Logger } from 'pino';
import { outcomeOf } from '../graphql/outcome.js';

/** What the access log tells of a request beyond HTTP, filled in while it runs. */
export interface RequestRecord {
  operationName: string | null;
  operationType: string | null;
  /** Signals accepted for writing. */
  signals: number;
  /** Refused 429 RATE_LIMITED by fair share: which limit (`budget`, `membershipChanges`). */
  limited?: string;
  /** The `extensions.code` of the errors the GraphQL answer carried (none: absent). */
  errors?: string[];
}

export interface RequestObserverOptions {
  /** null: tracing is off, so no span is started (not even a no-op one); the caller's trace id is still logged. */
  tracer: Tracer | null;
  logger: Logger;
  /** Share of requests written to the access log (0 to 1). */
  accessLogSample: number;
}

/** Starts watching one request; returns the context to run it in and the record to fill. */
export type RequestObserver = (
  req: http.IncomingMessage,
  res: http.ServerResponse,
  requestId: string,
  path: string,
) => { context: Context; record: RequestRecord };

/** Adds the signals a request submitted to its record (the batcher calls it in the request's async context). */
export function countSignals(scope: AsyncLocalStorage<{ record?: RequestRecord }>): (count: number) => void {
  return (count) => {
    const record = scope.getStore()?.record;
    if (record) record.signals += count;
  };
}

/** No span and no access-log line (the bench leaves the observer out with the other request layers to price them). */
export const unobserved: RequestObserver = () => ({
  context: ROOT_CONTEXT,
  record: { operationName: null, operationType: null, signals: 0 },
});

const ROUTES = new Set(['/graphql', '/settings', '/']);

/**
 * The HTTP request's span, a child of the caller's W3C `traceparent` (the propagator is used
 * directly, not installed globally), and one access-log line when the response closes, with the
 * outcome (`ok`, `rejected` or `failed`: src/graphql/outcome.ts) from the HTTP status and the
 * GraphQL error codes, which a GraphQL answer may carry with a 200. A failed request's span has
 * status ERROR.
 * `bytesOut` is what the connection carried for this response, headers included (requests on one
 * keep-alive connection are sequential).
 */
export function requestObserver(options: RequestObserverOptions): RequestObserver {
  const propagator = new W3CTraceContextPropagator();
  const accessLog = options.logger.child({ log: 'access' });
  // A request pays only for what is on: with neither, it is only given a record.
  const logged = options.accessLogSample > 0 && accessLog.isLevelEnabled('info');
  const { tracer } = options;
  if (!tracer && !logged) return unobserved;
  return (req, res, requestId, path) => {
    const started = performance.now();
    const socket = req.socket;
    const writtenBefore = socket.bytesWritten;
    const method = req.method ?? 'GET';
    const parent = propagator.extract(ROOT_CONTEXT, req.headers, defaultTextMapGetter);
    const span = tracer ? startSpan(tracer, parent, method, path, requestId) : null;
    const record: RequestRecord = { operationName: null, operationType: null, signals: 0 };
    res.once('close', () => {
      const errors = record.errors ?? [];
      const outcome = outcomeOf(errors, res.statusCode);
      if (span) {
        span.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, res.statusCode);
        if (outcome === 'failed') span.setStatus({ code: SpanStatusCode.ERROR, message: errors.join(', ') || `HTTP ${res.statusCode}` });
        span.end();
      }
      if (!logged || (options.accessLogSample < 1 && Math.random() >= options.accessLogSample)) return;
      // Without tracing, the caller's trace id still ties the line to its trace.
      const spanContext = span ? span.spanContext() : trace.getSpanContext(parent);
      accessLog.info(
        {
          requestId,
          traceId: spanContext && isSpanContextValid(spanContext) ? spanContext.traceId : null,
          method,
          path,
          status: res.statusCode,
          outcome,
          ...(errors.length > 0 ? { errors } : {}),
          ...(res.writableFinished ? {} : { aborted: true }),
          durationMs: Math.round((performance.now() - started) * 1000) / 1000,
          bytesIn: Number(req.headers['content-length'] ?? 0),
          bytesOut: socket.bytesWritten - writtenBefore,
          operation: record.operationName,
          operationType: record.operationType,
          signals: record.signals,
          ...(record.limited ? { rateLimited: record.limited } : {}),
        },
        'request',
      );
    });
    return { context: span ? trace.setSpan(parent, span) : parent, record };
  };
}

function startSpan(tracer: Tracer, parent: Context, method: string, path: string, requestId: string): Span {
  const route = ROUTES.has(path)
    ? path
    : path.startsWith('/settings/')
      ? '/settings/*'
      : path.startsWith('/graphiql/assets/')
        ? '/graphiql/assets/*'
        : null;
  return tracer.startSpan(
    route ? `${method} ${route}` : method,
    {
      kind: SpanKind.SERVER,
      attributes: {
        [ATTR_HTTP_REQUEST_METHOD]: method,
        [ATTR_URL_PATH]: path,
        ...(route ? { [ATTR_HTTP_ROUTE]: route } : {}),
        'http.request.id': requestId,
      },
    },
    parent,
  );
}
