import type { AsyncLocalStorage } from 'node:async_hooks';
import { GraphQLError } from 'graphql';
import { createYoga, maskError, type YogaServerInstance } from 'graphql-yoga';
import type { Config } from '../config/config.js';
import type { GraphQLContext, Services } from '../graphql/context.js';
import { useInputErrorCodes } from '../graphql/input-errors.js';
import { schema } from '../graphql/schema.js';

export interface RequestScope {
  requestId: string;
}

export type Yoga = YogaServerInstance<RequestScope, GraphQLContext>;

export function createGraphQLServer(config: Config, services: Services, requestScope: AsyncLocalStorage<RequestScope>): Yoga {
  return createYoga<RequestScope, GraphQLContext>({
    schema,
    graphqlEndpoint: '/graphql',
    graphiql: config.graphiql ? { title: 'community-layer' } : false,
    landingPage: false,
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
    context: ({ requestId }) => ({ services, requestId }),
    plugins: [useInputErrorCodes()],
  });
}
