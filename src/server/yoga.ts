import type { AsyncLocalStorage } from 'node:async_hooks';
import { EnvelopArmorPlugin } from '@escape.tech/graphql-armor';
import { useCSRFPrevention } from '@graphql-yoga/plugin-csrf-prevention';
import { GraphQLError, NoSchemaIntrospectionCustomRule } from 'graphql';
import { createYoga, maskError, type Plugin, type YogaServerInstance } from 'graphql-yoga';
import type { Authenticator } from '../auth/authenticate.js';
import type { Config } from '../config/config.js';
import type { GraphQLContext, Services } from '../graphql/context.js';
import { useInputErrorCodes } from '../graphql/input-errors.js';
import { schema } from '../graphql/schema.js';
import { useOperationMetrics } from '../metrics/operation-metrics.js';

export interface RequestScope {
  requestId: string;
}

export type Yoga = YogaServerInstance<RequestScope, GraphQLContext>;

export const CSRF_HEADER = 'x-graphql-yoga-csrf';

export function createGraphQLServer(
  config: Config,
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
      return { services, requestId, viewer, authProblem: problem, tokenExpiresAt: expiresAt };
    },
    plugins: [
      useInputErrorCodes(),
      useOperationMetrics(services.metrics),
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
