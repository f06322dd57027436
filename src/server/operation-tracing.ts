import type { AsyncLocalStorage } from 'node:async_hooks';
import { context, SpanStatusCode, trace, type Span, type Tracer } from '@opentelemetry/api';
import { getOperationAST, type DocumentNode, type ExecutionResult } from 'graphql';
import { isAsyncIterable, type Plugin } from 'graphql-yoga';
import { errorCodes, outcomeOf } from '../graphql/outcome.js';
import type { RequestRecord } from './request-observer.js';

// The OpenTelemetry GraphQL attributes are still incubating: named here, not imported.
const OPERATION_NAME = 'graphql.operation.name';
const OPERATION_TYPE = 'graphql.operation.type';

/**
 * A span per GraphQL operation (name and type: never the variables, never the document), a child of
 * the HTTP request's; resolvers run inside it, so what they do (a signal submission, a statement)
 * is its child or linked to it. An operation that answers errors ends its span with status ERROR,
 * the codes as its description and in `graphql.error.codes`, and `graphql.outcome` (rejected or
 * failed, src/graphql/outcome.ts) telling a caller's error from the service's. The operation and
 * the response's error codes are also noted for the request's access-log line. `tracer` null
 * (tracing off): only those notes, with no span and no context switch around execution.
 */
export function useOperationTracing(tracer: Tracer | null, scope: AsyncLocalStorage<{ record?: RequestRecord }>): Plugin {
  const note = (document: DocumentNode, operationName: string | null | undefined) => {
    const operation = getOperationAST(document, operationName);
    const name = operation?.name?.value ?? null;
    const type = operation?.operation ?? 'unknown';
    const record = scope.getStore()?.record;
    if (record) {
      record.operationName = name;
      record.operationType = type;
    }
    return { name, type };
  };
  // Every GraphQL answer over HTTP passes here, the ones refused before execution too.
  const noteErrors: Plugin['onResultProcess'] = ({ result }) => {
    const record = scope.getStore()?.record;
    if (!record || isAsyncIterable(result)) return;
    const codes = errorCodes((Array.isArray(result) ? result : [result]).flatMap((one: ExecutionResult) => one.errors ?? []));
    if (codes.length > 0) record.errors = codes;
  };
  if (!tracer) {
    return {
      onExecute: ({ args }) => void note(args.document, args.operationName),
      onSubscribe: ({ args }) => void note(args.document, args.operationName),
      onResultProcess: noteErrors,
    };
  }
  const begin = (document: DocumentNode, operationName: string | null | undefined): { span: Span; run<T>(fn: () => T): T } => {
    const { name, type } = note(document, operationName);
    const span = tracer.startSpan(name ? `${type} ${name}` : type, {
      attributes: { [OPERATION_TYPE]: type, ...(name ? { [OPERATION_NAME]: name } : {}) },
    });
    const active = trace.setSpan(context.active(), span);
    return { span, run: (fn) => context.with(active, fn) };
  };
  return {
    onExecute({ args, executeFn, setExecuteFn }) {
      const { span, run } = begin(args.document, args.operationName);
      setExecuteFn((executionArgs) => run(() => executeFn(executionArgs)));
      return {
        onExecuteDone({ result }) {
          if (!isAsyncIterable(result)) endWithErrors(span, result.errors);
          span.end();
        },
      };
    },
    // A subscription's span covers its start (authorization, the first read), not its lifetime.
    onSubscribe({ args, subscribeFn, setSubscribeFn }) {
      const { span, run } = begin(args.document, args.operationName);
      setSubscribeFn((subscribeArgs) => run(() => subscribeFn(subscribeArgs)));
      return {
        onSubscribeResult: ({ result }) => {
          if (!isAsyncIterable(result)) endWithErrors(span, result.errors);
          span.end();
        },
        onSubscribeError: ({ error }) => {
          endWithErrors(span, [error as { extensions?: Record<string, unknown> }]);
          span.end();
        },
      };
    },
    onResultProcess: noteErrors,
  };
}

function endWithErrors(span: Span, errors: Parameters<typeof errorCodes>[0]): void {
  if (!errors?.length) return;
  const codes = errorCodes(errors);
  span.setAttributes({ 'graphql.errors': errors.length, 'graphql.error.codes': codes.join(', '), 'graphql.outcome': outcomeOf(codes) });
  span.setStatus({ code: SpanStatusCode.ERROR, message: codes.join(', ') });
}
