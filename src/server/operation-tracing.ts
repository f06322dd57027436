import type { AsyncLocalStorage } from 'node:async_hooks';
import { context, trace, type Span, type Tracer } from '@opentelemetry/api';
import { getOperationAST, type DocumentNode } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { RequestRecord } from './request-observer.js';

// The OpenTelemetry GraphQL attributes are still incubating: named here, not imported.
const OPERATION_NAME = 'graphql.operation.name';
const OPERATION_TYPE = 'graphql.operation.type';

/**
 * A span per GraphQL operation (name and type: never the variables, never the document), a child of
 * the HTTP request's; resolvers run inside it, so what they do (a signal submission, a statement)
 * is its child or linked to it. The operation is also noted for the request's access-log line.
 * `tracer` null (tracing off): only that note, with no span and no context switch around execution.
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
  if (!tracer) {
    return {
      onExecute: ({ args }) => void note(args.document, args.operationName),
      onSubscribe: ({ args }) => void note(args.document, args.operationName),
    };
  }
  const begin = (document: DocumentNode, operationName: string | null | undefined): { span: Span; run<T>(fn: () => T): T } => {
    const { name, type } = note(document, operationName);
    const span = tracer.startSpan(name ? `${type} ${name}` : type, { attributes: { [OPERATION_TYPE]: type, ...(name ? { [OPERATION_NAME]: name } : {}) } });
    const active = trace.setSpan(context.active(), span);
    return { span, run: (fn) => context.with(active, fn) };
  };
  return {
    onExecute({ args, executeFn, setExecuteFn }) {
      const { span, run } = begin(args.document, args.operationName);
      setExecuteFn((executionArgs) => run(() => executeFn(executionArgs)));
      return {
        onExecuteDone({ result }) {
          if ('errors' in result && result.errors) span.setAttribute('graphql.errors', result.errors.length);
          span.end();
        },
      };
    },
    // A subscription's span covers its start (authorization, the first read), not its lifetime.
    onSubscribe({ args, subscribeFn, setSubscribeFn }) {
      const { span, run } = begin(args.document, args.operationName);
      setSubscribeFn((subscribeArgs) => run(() => subscribeFn(subscribeArgs)));
      return { onSubscribeResult: () => void span.end(), onSubscribeError: () => void span.end() };
    },
  };
}
