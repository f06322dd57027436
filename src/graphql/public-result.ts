import { GraphQLError, type ExecutionResult, type GraphQLFormattedError } from 'graphql';
import { heldStream, relay } from '../util/held-stream.js';

/**
 * Errors as clients see them on transports outside Yoga's HTTP responses (graphql-ws,
 * graphql-sse single connection): Yoga's internal `http` hints removed, as Yoga does on HTTP.
 */
export function publicError(error: GraphQLError): GraphQLFormattedError {
  const { http: _http, ...extensions } = error.extensions ?? {};
  const { extensions: _all, ...formatted } = error.toJSON();
  return Object.keys(extensions).length > 0 ? { ...formatted, extensions } : formatted;
}

/**
 * An error answered outside Yoga (a refusal before the body is read, a graphql-sse reservation):
 * the status and headers its `extensions.http` asks for, the body Yoga would give.
 */
export function errorResponse(
  error: GraphQLError,
  fallbackStatus = 500,
): { status: number; headers: Record<string, string>; body: string } {
  const http = error.extensions?.['http'] as { status?: number; headers?: Record<string, string> } | undefined;
  return { status: http?.status ?? fallbackStatus, headers: { ...http?.headers }, body: JSON.stringify({ errors: [publicError(error)] }) };
}

export function publicResult(result: ExecutionResult): ExecutionResult | { data?: unknown; errors?: GraphQLFormattedError[] } {
  return result.errors ? { ...result, errors: result.errors.map(publicError) } : result;
}

/**
 * A subscription whose stream throws (its token expired) ends with that error as its last event,
 * as Yoga does on HTTP, instead of failing the connection. Anything not a GraphQLError is masked.
 */
export async function streamErrorsAsResults<T>(result: T | Promise<T>): Promise<T | AsyncIterableIterator<ExecutionResult>> {
  const settled = await result;
  if (settled === null || typeof settled !== 'object' || !(Symbol.asyncIterator in settled)) return settled;
  return endWithError(settled as AsyncIterable<ExecutionResult>);
}

/** The source's values, then its error as a last result; return() and throw() reach the source at once. */
export function endWithError(source: AsyncIterable<ExecutionResult>): AsyncIterableIterator<ExecutionResult> {
  const iterator = source[Symbol.asyncIterator]();
  return heldStream<ExecutionResult>(
    async (push, stop) => {
      try {
        await relay(iterator, push, stop);
      } catch (error) {
        // Stopping after a push still hands the pushed result over, then completes.
        void push({ errors: [error instanceof GraphQLError ? error : new GraphQLError('Unexpected error.')] });
        stop();
      }
    },
    () => void iterator.return?.(),
  );
}
