import type { AsyncLocalStorage } from 'node:async_hooks';
import { useCSRFPrevention } from '@graphql-yoga/plugin-csrf-prevention';
import { usePersistedOperations } from '@graphql-yoga/plugin-persisted-operations';
import { GraphQLError, NoSchemaIntrospectionCustomRule } from 'graphql';
import { createYoga, maskError, type Plugin, type YogaServerInstance } from 'graphql-yoga';
import type { Authenticator } from '../auth/authenticate.js';
import type { AppConfig } from '../config/config.js';
import type { GraphQLContext, Services } from '../graphql/context.js';
import { isTransientDatabaseError } from '../db/database-errors.js';
import { retryLater } from '../graphql/errors.js';
import { useHiddenSuggestions } from '../graphql/hidden-suggestions.js';
import { useInputErrorCodes } from '../graphql/input-errors.js';
import { useOperationLimits, type OperationLimits } from '../graphql/limits/operation-limits.js';
import { purgeRefusal } from '../purge/purge-errors.js';
import { schema } from '../graphql/schema.js';
import { TRUSTED_DOCUMENT_ERRORS, type TrustedDocuments } from '../graphql/trusted-documents/trusted-documents.js';
import { useOperationMetrics } from '../metrics/operation-metrics.js';
import { AbandonedError, OverloadedError } from '../signals/signal-batcher.js';
import { graphiql } from './graphiql.js';
import { useJsonBodies } from './media-type.js';
import { useMultipartSubscriptions } from './multipart-subscriptions.js';
import { useBulkDecoded } from './bulk-admission.js';
import { useSignalShedding } from './shed-signals.js';
import { useSingleConnectionSSE } from './sse-single-connection.js';
import { useStrictUtf8Body } from './utf8-body.js';

export interface RequestScope {
  requestId: string;
  /** Set by transports without an HTTP request per operation (WebSocket: `connectionParams`). */
  authorization?: string | null;
  /** Frees the request's place at the bulk door (see useBulkDecoded). */
  decoded?: () => void;
}

export type Yoga = YogaServerInstance<RequestScope, GraphQLContext>;

/** Yoga takes Envelop plugins as they are (typed `{}` in its options). */
export type OperationLimitsPlugin = (limits: OperationLimits) => Plugin | object;

export const CSRF_HEADER = 'x-graphql-yoga-csrf';
export const GRAPHQL_ENDPOINT = '/graphql';

export function createGraphQLServer(
  config: AppConfig,
  services: Services,
  authenticator: Authenticator,
  requestScope: AsyncLocalStorage<RequestScope>,
  trusted: TrustedDocuments,
  operationLimits: OperationLimitsPlugin = useOperationLimits,
): Yoga {
  const limits = config.graphql;
  const page = limits.graphiql ? graphiql({ csrfHeader: CSRF_HEADER, developmentToken: config.developmentToken }) : null;
  return createYoga<RequestScope, GraphQLContext>({
    schema,
    graphqlEndpoint: GRAPHQL_ENDPOINT,
    graphiql: page?.graphiql ?? false,
    ...(page ? { renderGraphiQL: page.renderGraphiQL } : {}),
    landingPage: false,
    // GraphQL multipart *requests* (file uploads) are not part of this API; multipart *responses*
    // (Apollo Client's subscriptions over HTTP) are, and do not depend on this.
    multipart: false,
    cors:
      config.http.corsOrigins.length > 0
        ? {
            origin: config.http.corsOrigins,
            credentials: false,
            allowedHeaders: ['authorization', 'content-type', 'accept', 'x-request-id', CSRF_HEADER, 'x-graphql-event-stream-token'],
            exposedHeaders: ['x-request-id'],
            methods: ['GET', 'POST', 'PUT', 'DELETE'],
          }
        : false,
    // Unexpected errors reach the client as "Unexpected error." plus the request id; the detail
    // (SQL, driver text, stack) goes to the log under that id.
    maskedErrors: {
      maskError: (error, message) => {
        const masked = maskError(error, message, false);
        if (masked === error) return withoutOriginalError(masked);
        const requestId = requestScope.getStore()?.requestId;
        const original = error instanceof GraphQLError ? (error.originalError ?? error) : error;
        if (original instanceof AbandonedError) {
          return new GraphQLError('The client disconnected before the signals were written.', { extensions: { code: 'CLIENT_CLOSED_REQUEST' } });
        }
        if (original instanceof OverloadedError) {
          return retryLater('OVERLOADED', original.message, config.retryAfterSeconds, requestId);
        }
        const refusal = purgeRefusal(original);
        if (refusal) return refusal;
        if (isTransientDatabaseError(original)) {
          services.logger.warn({ err: original, requestId }, 'database unavailable');
          return retryLater('SERVICE_UNAVAILABLE', 'The database is unavailable; retry shortly.', config.retryAfterSeconds, requestId);
        }
        services.logger.error({ err: error, requestId }, 'unexpected error');
        return new GraphQLError(masked.message, {
          ...(masked instanceof GraphQLError ? { nodes: masked.nodes, path: masked.path } : {}),
          extensions: { code: 'INTERNAL_SERVER_ERROR', requestId },
        });
      },
    },
    logging: services.logger,
    context: async ({ request, requestId, authorization }) => {
      const credential = authorization !== undefined ? authorization : request.headers.get('authorization');
      const { viewer, problem, expiresAt } = await authenticator.authenticate(credential);
      // A WebSocket operation has no HTTP request: nothing aborts it but the end of its socket.
      const signal = request?.signal ?? new AbortController().signal;
      return { services, signal, requestId, viewer, authProblem: problem, tokenExpiresAt: expiresAt };
    },
    plugins: [
      // Before the CSRF check: its PUT/DELETE and token-carrying requests are not browser forms.
      useSingleConnectionSSE({ endpoint: GRAPHQL_ENDPOINT, authenticator, trusted }),
      useJsonBodies(GRAPHQL_ENDPOINT),
      useStrictUtf8Body(),
      useCSRFPrevention({ requestHeaders: [CSRF_HEADER] }),
      usePersistedOperations({
        getPersistedOperation: (id) => trusted.document(id),
        allowArbitraryOperations: trusted.mode !== 'only',
        customErrors: {
          notFound: TRUSTED_DOCUMENT_ERRORS.notFound,
          persistedQueryOnly: TRUSTED_DOCUMENT_ERRORS.onlyTrusted,
          keyNotFound: TRUSTED_DOCUMENT_ERRORS.missing,
        },
      }),
      useInputErrorCodes(),
      useOperationMetrics(services.metrics),
      useSignalShedding(services.signals, services.metrics, config.retryAfterSeconds),
      useBulkDecoded(requestScope),
      operationLimits({
        maxTokens: limits.maxTokens,
        maxDepth: limits.maxDepth,
        maxAliases: limits.maxAliases,
        maxDirectives: limits.maxDirectives,
        maxCost: limits.maxCost,
        budget: config.requestBudget,
      }),
      useMultipartSubscriptions(),
      ...(limits.fieldSuggestions ? [] : [useHiddenSuggestions()]),
      ...(limits.introspection ? [] : [disableIntrospection()]),
    ],
  });
}

function disableIntrospection(): Plugin {
  return { onValidate: ({ addValidationRule }) => addValidationRule(NoSchemaIntrospectionCustomRule) };
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
