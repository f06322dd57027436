import type { ExecutionResult, GraphQLError, GraphQLFormattedError } from 'graphql';

/**
 * Errors as clients see them on transports outside Yoga's HTTP responses (graphql-ws,
 * graphql-sse single connection): Yoga's internal `http` hints removed, as Yoga does on HTTP.
 */
export function publicError(error: GraphQLError): GraphQLFormattedError {
  const { http: _http, ...extensions } = error.extensions ?? {};
  const { extensions: _all, ...formatted } = error.toJSON();
  return Object.keys(extensions).length > 0 ? { ...formatted, extensions } : formatted;
}

export function publicResult(result: ExecutionResult): ExecutionResult | { data?: unknown; errors?: GraphQLFormattedError[] } {
  return result.errors ? { ...result, errors: result.errors.map(publicError) } : result;
}
