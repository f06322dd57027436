import type { AsyncLocalStorage } from 'node:async_hooks';
import { useCSRFPrevention } from '@graphql-yoga/plugin-csrf-prevention';
import { usePersistedOperations } from '@graphql-yoga/plugin-persisted-operations';
import { GraphQLError, NoSchemaIntrospectionCustomRule } from 'graphql';
import { createYoga, maskError, type Plugin, type YogaServerInstance } from 'graphql-yoga';
import type { Authenticator } from '../auth/authenticate.js';
import type { AppConfig } from '../config/config.js';
import type { GraphQLContext, Services } from '../graphql/context.js';
import { useCredentialExpiry } from '../graphql/credential-expiry.js';
import { useHiddenSuggestions } from '../graphql/hidden-suggestions.js';
import { useInputErrorCodes } from '../graphql/input-errors.js';
import { useOperationLimits, type OperationLimits } from '../graphql/limits/operation-limits.js';
import { schema } from '../graphql/schema.js';
import { TRUSTED_DOCUMENT_ERRORS, type TrustedDocuments } from '../graphql/trusted-documents/trusted-documents.js';
import { useOperationMetrics } from '../metrics/operation-metrics.js';
import { graphiql } from './graphiql.js';
import { useJsonBodies } from './media-type.js';
import { useMultipartSubscriptions } from './multipart-subscriptions.js';
import { useSingleConnectionSSE } from './sse-single-connection.js';

export interface RequestScope {
  requestId: string;
  /** Set by transports without an HTTP request per operation (WebSocket: `connectionParams`). */
  authorization?: string | null;
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
      return { services, requestId, viewer, authProblem: problem, credentialsExpireAt: expiresAt === undefined ? null : expiresAt * 1000 };
    },
    plugins: [
      // Before the CSRF check: its PUT/DELETE and token-carrying requests are not browser forms.
      useSingleConnectionSSE({ endpoint: GRAPHQL_ENDPOINT, authenticator, trusted }),
      useJsonBodies(GRAPHQL_ENDPOINT),
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
      operationLimits({
        maxTokens: limits.maxTokens,
        maxDepth: limits.maxDepth,
        maxAliases: limits.maxAliases,
        maxDirectives: limits.maxDirectives,
        maxCost: limits.maxCost,
        budget: config.requestBudget,
      }),
      useCredentialExpiry(),
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
