import { GraphQLError } from 'graphql';
import { maskError } from 'graphql-yoga';
import type { Logger } from 'pino';
import { isTransientDatabaseError } from '../db/database-errors.js';
import { overloaded, retryLater } from '../graphql/errors.js';
import { DownstreamRefusal } from '../purge/downstream-refusal.js';
import { NOT_LEFT_SQLSTATE, PURGE_RUNNING_SQLSTATE } from '../purge/purge-jobs.js';
import { AbandonedError, OverloadedError } from '../signals/errors.js';
import { ShuttingDownError } from '../util/shutting-down.js';
import { TooManySubscriptionsError } from '../util/subscription-caps.js';

/**
 * The one mapping from what capabilities and the database throw to what clients see: a GraphQL
 * error with a stable `extensions.code` and, through `extensions.http`, the HTTP status and
 * Retry-After (from config). Anything unknown is a masked INTERNAL_SERVER_ERROR whose detail (SQL,
 * driver text, stack) goes only to the log, under the request id.
 */
export function domainError(
  error: unknown,
  options: { retryAfterSeconds: number; requestId?: string | undefined; logger: Logger },
): GraphQLError | null {
  const { retryAfterSeconds, requestId } = options;
  if (error instanceof AbandonedError) {
    return new GraphQLError('The client disconnected before the signals were written.', { extensions: { code: 'CLIENT_CLOSED_REQUEST' } });
  }
  if (error instanceof OverloadedError) return overloaded(retryAfterSeconds, requestId);
  if (error instanceof TooManySubscriptionsError) {
    return retryLater('TOO_MANY_SUBSCRIPTIONS', error.message, {
      retryAfterSeconds,
      status: error.limit === 'perInstance' ? 503 : 429,
      details: { limit: error.limit, max: error.max },
    });
  }
  // A 503 with Retry-After when it refuses a new stream; a stream it ends, each transport ends retryably.
  if (error instanceof ShuttingDownError) return retryLater('SHUTTING_DOWN', error.message, { retryAfterSeconds, requestId });
  if (error instanceof DownstreamRefusal) return new GraphQLError(error.message, { extensions: { code: error.code } });
  const code = (error as { code?: unknown } | null)?.code;
  if (code === NOT_LEFT_SQLSTATE) {
    return new GraphQLError('Purging is only possible while LEFT: leave the community layer first.', { extensions: { code: 'NOT_LEFT' } });
  }
  if (code === PURGE_RUNNING_SQLSTATE) {
    return new GraphQLError('A purge of your contributions is running: rejoin when it has finished (see communityPurges).', {
      extensions: { code: 'PURGE_IN_PROGRESS' },
    });
  }
  if (isTransientDatabaseError(error)) {
    options.logger.warn({ err: error, requestId }, 'database unavailable');
    return retryLater('SERVICE_UNAVAILABLE', 'The database is unavailable; retry shortly.', { retryAfterSeconds, requestId });
  }
  return null;
}

/** Yoga's `maskedErrors.maskError`: GraphQL errors pass, domain errors are mapped, the rest masked. */
export function createErrorMask(options: { retryAfterSeconds: number; logger: Logger; requestId: () => string | undefined }) {
  return (error: unknown, message: string): Error => {
    const masked = maskError(error, message, false);
    if (masked === error) return withoutOriginalError(masked);
    const requestId = options.requestId();
    const original = error instanceof GraphQLError ? (error.originalError ?? error) : error;
    const mapped = domainError(original, { retryAfterSeconds: options.retryAfterSeconds, requestId, logger: options.logger });
    if (mapped) return mapped;
    options.logger.error({ err: error, requestId }, 'unexpected error');
    return new GraphQLError(masked.message, {
      ...(masked instanceof GraphQLError ? { nodes: masked.nodes, path: masked.path } : {}),
      extensions: { code: 'INTERNAL_SERVER_ERROR', requestId },
    });
  };
}

/**
 * Yoga attaches the JSON parser's own message (quoting the body) to "POST body sent invalid JSON.":
 * not for clients. A body that is not JSON is a 400 whatever the client accepts (GraphQL over HTTP).
 */
function withoutOriginalError(error: Error): Error {
  if (!(error instanceof GraphQLError) || error.extensions?.['originalError'] === undefined) return error;
  const { originalError: _originalError, http: _http, ...extensions } = error.extensions;
  return new GraphQLError(error.message, { nodes: error.nodes, path: error.path, extensions: { ...extensions, http: { status: 400 } } });
}
