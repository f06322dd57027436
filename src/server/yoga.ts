import type { AsyncLocalStorage } from 'node:async_hooks';
import { EnvelopArmorPlugin } from '@escape.tech/graphql-armor';
import { useCSRFPrevention } from '@graphql-yoga/plugin-csrf-prevention';
import { GraphQLError, NoSchemaIntrospectionCustomRule } from 'graphql';
import { createYoga, maskError, type Plugin, type YogaServerInstance } from 'graphql-yoga';
import type { Authenticator } from '../auth/authenticate.js';
import type { AppConfig } from '../config/config.js';
import type { GraphQLContext, Services } from '../graphql/context.js';
import { isTransientDatabaseError } from '../db/database-errors.js';
import { retryLater } from '../graphql/errors.js';
import { useInputErrorCodes } from '../graphql/input-errors.js';
import { purgeRefusal } from '../purge/purge-errors.js';
import { schema } from '../graphql/schema.js';
import { useOperationMetrics } from '../metrics/operation-metrics.js';
import { AbandonedError, OverloadedError } from '../signals/signal-batcher.js';
import { useSignalShedding } from './shed-signals.js';
import { useStrictUtf8Body } from './utf8-body.js';

export interface RequestScope {
  requestId: string;
}

export type Yoga = YogaServerInstance<RequestScope, GraphQLContext>;

export const CSRF_HEADER = 'x-graphql-yoga-csrf';

export function createGraphQLServer(
  config: AppConfig,
  services: Services,
  authenticator: Authenticator,
  requestScope: AsyncLocalStorage<RequestScope>,
): Yoga {
  const limits = config.graphql;
  return createYoga<RequestScope, GraphQLContext>({
    schema,
    graphqlEndpoint: '/graphql',
    graphiql: limits.graphiql ? { title: 'community-layer', headers: JSON.stringify({ authorization: 'Bearer <token printed at start>' }) } : false,
    landingPage: false,
    cors:
      config.http.corsOrigins.length > 0
        ? {
            origin: config.http.corsOrigins,
            credentials: false,
            allowedHeaders: ['authorization', 'content-type', 'accept', 'x-request-id', CSRF_HEADER],
            exposedHeaders: ['x-request-id'],
            methods: ['GET', 'POST'],
          }
        : false,
    // Unexpected errors reach the client as "Unexpected error." plus the request id; the detail
    // (SQL, driver text, stack) goes to the log under that id.
    maskedErrors: {
      maskError: (error, message) => {
        const masked = maskError(error, message, false);
        if (masked === error) return masked;
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
    context: async ({ request, requestId }) => {
      const { viewer, problem, expiresAt } = await authenticator.authenticate(request.headers.get('authorization'));
      return { services, request, requestId, viewer, authProblem: problem, tokenExpiresAt: expiresAt };
    },
    plugins: [
      useStrictUtf8Body(),
      useInputErrorCodes(),
      useOperationMetrics(services.metrics),
      useSignalShedding(services.signals, services.metrics, config.retryAfterSeconds),
      useCSRFPrevention({ requestHeaders: [CSRF_HEADER] }),
      EnvelopArmorPlugin({
        maxDepth: { n: limits.maxDepth },
        maxAliases: { n: limits.maxAliases },
        maxTokens: { n: limits.maxTokens },
        maxDirectives: { n: 20 },
        costLimit: { maxCost: limits.maxCost },
        blockFieldSuggestion: { enabled: !limits.fieldSuggestions },
      }),
      ...(limits.introspection ? [] : [disableIntrospection()]),
    ],
  });
}

function disableIntrospection(): Plugin {
  return { onValidate: ({ addValidationRule }) => addValidationRule(NoSchemaIntrospectionCustomRule) };
}
