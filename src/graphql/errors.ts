import { GraphQLError } from 'graphql';

export function badUserInput(message: string, argument?: string): GraphQLError {
  return new GraphQLError(message, {
    extensions: argument ? { code: 'BAD_USER_INPUT', argument } : { code: 'BAD_USER_INPUT' },
  });
}

export function unauthenticated(problem: string | null): GraphQLError {
  return new GraphQLError(`Not authenticated: ${problem ?? 'no bearer token'}.`, { extensions: { code: 'UNAUTHENTICATED' } });
}

export function forbidden(): GraphQLError {
  return new GraphQLError('Not allowed for this caller.', { extensions: { code: 'FORBIDDEN' } });
}

/**
 * A retryable refusal: HTTP 503 with Retry-After (Yoga turns `extensions.http` into the status and
 * headers and leaves it out of the body). `code` tells why: SERVICE_UNAVAILABLE (the database) or
 * OVERLOADED (this instance's queue is full).
 */
export function retryLater(code: 'SERVICE_UNAVAILABLE' | 'OVERLOADED', message: string, retryAfterSeconds: number, requestId?: string): GraphQLError {
  return new GraphQLError(message, {
    extensions: {
      code,
      retryAfterSeconds,
      ...(requestId ? { requestId } : {}),
      http: { status: 503, headers: { 'retry-after': String(retryAfterSeconds) } },
    },
  });
}
