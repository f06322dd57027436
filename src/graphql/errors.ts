import { GraphQLError, type ASTNode } from 'graphql';

/**
 * The builders of every error clients see, by kind. `extensions.code` is the stable part; Yoga
 * turns `extensions.http` into the HTTP status and headers and leaves it out of the body (the
 * other transports drop it too, see publicError).
 */

export function badUserInput(
  message: string,
  argument?: string,
  nodes?: readonly ASTNode[],
  details?: Record<string, unknown>,
): GraphQLError {
  return new GraphQLError(message, {
    ...(nodes ? { nodes } : {}),
    extensions: { code: 'BAD_USER_INPUT', ...(argument ? { argument } : {}), ...details },
  });
}

export function unauthenticated(problem: string | null): GraphQLError {
  return new GraphQLError(`Not authenticated: ${problem ?? 'no bearer token'}.`, { extensions: { code: 'UNAUTHENTICATED' } });
}

export function forbidden(message = 'Not allowed for this caller.'): GraphQLError {
  return new GraphQLError(message, { extensions: { code: 'FORBIDDEN' } });
}

export type RetryCode = 'SERVICE_UNAVAILABLE' | 'OVERLOADED' | 'TOO_MANY_SUBSCRIPTIONS' | 'RATE_LIMITED' | 'SHUTTING_DOWN';

export interface RetryLaterOptions {
  retryAfterSeconds: number;
  /** 503 unless told (429: this caller asks too much, not the server being short). */
  status?: 429 | 503;
  requestId?: string | undefined;
  /** More extensions that say which limit was hit. */
  details?: Record<string, unknown>;
}

/**
 * A retryable refusal: HTTP 503 (or 429) with Retry-After, also given as
 * `extensions.retryAfterSeconds` for transports without headers (WebSocket, SSE events). `code`
 * tells why: SERVICE_UNAVAILABLE (the database), OVERLOADED (this instance's queue is full),
 * TOO_MANY_SUBSCRIPTIONS (a subscription cap), RATE_LIMITED (429: the caller spent its budget, fair share),
 * SHUTTING_DOWN (this instance is stopping: subscribe again).
 */
export function retryLater(code: RetryCode, message: string, options: RetryLaterOptions): GraphQLError {
  const { retryAfterSeconds, status = 503, requestId, details } = options;
  return new GraphQLError(message, {
    extensions: {
      code,
      ...details,
      retryAfterSeconds,
      ...(requestId ? { requestId } : {}),
      http: { status, headers: { 'retry-after': String(retryAfterSeconds) } },
    },
  });
}

/** One socket asks for more operations at once than it may (WEBSOCKET_OPERATIONS_PER_SOCKET_MAX). */
export function tooManyOperations(max: number, retryAfterSeconds: number, requestId?: string): GraphQLError {
  return retryLater('OVERLOADED', `At most ${max} operations may be in flight on one socket; wait for one to finish.`, {
    retryAfterSeconds,
    status: 429,
    requestId,
    details: { limit: 'perSocket', max },
  });
}

/** The one OVERLOADED answer: the signal queue (or the bulk door before it) is full. */
export function overloaded(retryAfterSeconds: number, requestId?: string): GraphQLError {
  return retryLater('OVERLOADED', 'Too many signals are waiting to be written; retry shortly.', { retryAfterSeconds, requestId });
}

/** A result that ends a stream because the instance is stopping (SHUTTING_DOWN): clients are to resubscribe. */
export function endsForShutdown(
  result: { errors?: readonly { extensions?: Record<string, unknown> | undefined }[] | undefined } | null | undefined,
): boolean {
  return result?.errors?.some((error) => error.extensions?.['code'] === 'SHUTTING_DOWN') ?? false;
}
