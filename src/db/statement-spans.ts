import { context, SpanKind, SpanStatusCode, trace, type Tracer } from '@opentelemetry/api';
import { ATTR_DB_QUERY_TEXT, ATTR_DB_SYSTEM_NAME, ATTR_ERROR_TYPE } from '@opentelemetry/semantic-conventions';
import type { LogEvent } from 'kysely';

/**
 * A span per database statement, from Kysely's `log` hook, which runs in the statement's async
 * context just after it ends: the span is made then with the measured start, as a child of whatever
 * span was active (the group commit, the operation, a resync). A statement outside any span (a
 * probe's `SELECT 1`, an idle purge poll) makes none: alone it would be a trace of its own, noise.
 * Explicit rather than the `pg`
 * instrumentation, whose require hooks do not see this ESM app's imports.
 * The text is Kysely's parameterized SQL: values are never in it.
 */
export function statementSpans(tracer: Tracer): (event: LogEvent) => void {
  return (event) => {
    if (!trace.getSpan(context.active())) return;
    const endTime = performance.timeOrigin + performance.now();
    const span = tracer.startSpan(operationName(event.query.sql), {
      kind: SpanKind.CLIENT,
      startTime: endTime - event.queryDurationMillis,
      attributes: { [ATTR_DB_SYSTEM_NAME]: 'postgresql', [ATTR_DB_QUERY_TEXT]: event.query.sql },
    });
    if (event.level === 'error') {
      const code = (event.error as { code?: unknown }).code;
      span.setAttribute(ATTR_ERROR_TYPE, typeof code === 'string' ? code : 'error');
      span.setStatus({ code: SpanStatusCode.ERROR });
    }
    span.end(endTime);
  };
}

/** The statement's first keyword (SELECT, INSERT, WITH…): low-cardinality, as span names must be. */
function operationName(text: string): string {
  return /^\s*(\w+)/.exec(text)?.[1]?.toUpperCase() ?? 'SQL';
}
