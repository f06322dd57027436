import type { AsyncLocalStorage } from 'node:async_hooks';
import { createYoga, type Plugin, type YogaServerInstance } from 'graphql-yoga';
import type { Authentication, Authenticator } from '../auth/authenticate.js';
import type { AppConfig } from '../config/config.js';
import type { GraphQLContext, Services } from '../api/context.js';
import { createErrorMask } from '../api/domain-errors.js';
import { schema } from '../api/schema.js';
import { EXTRA_PARAM_NAMES } from './trusted-document-params.js';
import type { RequestRecord } from './request-observer.js';
import type { GraphiQLPage } from './graphiql.js';
import { useRetryableStreamEnds } from './stream-shutdown.js';

export interface RequestScope {
  requestId: string;
  /** Set by transports without an HTTP request per operation (WebSocket: `connectionParams`). */
  authorization?: string | null;
  /** Frees the request's place at the bulk door (see useBulkDecoded). */
  decoded?: () => void;
  /** What the access log tells of the request (HTTP requests only). */
  record?: RequestRecord;
}

export type Yoga = YogaServerInstance<RequestScope, GraphQLContext>;

/** One of Yoga's plugins, named (request-pipeline.ts builds the list). Yoga takes Envelop plugins as they are (typed `{}` in its options). */
export interface NamedPlugin {
  name: string;
  plugin: Plugin | object;
}

export const CSRF_HEADER = 'x-graphql-yoga-csrf';
export const GRAPHQL_ENDPOINT = '/graphql';

export interface GraphQLServerOptions {
  config: AppConfig;
  services: Services;
  authenticator: Authenticator;
  requestScope: AsyncLocalStorage<RequestScope>;
  /** GraphiQL on GET with `Accept: text/html`, or null (off). */
  page: GraphiQLPage | null;
  /** In the order they run (requestPipeline). */
  plugins: readonly NamedPlugin[];
}

export function createGraphQLServer({ config, services, authenticator, requestScope, page, plugins }: GraphQLServerOptions): Yoga {
  return createYoga<RequestScope, GraphQLContext>({
    schema,
    graphqlEndpoint: GRAPHQL_ENDPOINT,
    graphiql: page?.graphiql ?? false,
    ...(page ? { renderGraphiQL: page.renderGraphiQL } : {}),
    landingPage: false,
    // Relay's and GraphQL Code Generator's ways of naming a persisted document (useTrustedDocuments).
    extraParamNames: EXTRA_PARAM_NAMES,
    // GraphQL multipart *requests* (file uploads) are not part of this API; multipart *responses*
    // (Apollo Client's subscriptions over HTTP) are, and do not depend on this.
    multipart: false,
    // http.ts refuses a POST without a Content-Length within BODY_LIMIT_BYTES before Yoga runs, and
    // Node reads no more than that; Yoga's own limit would pipe every body through a counting
    // stream (a TransformStream, a second Request and an AbortController per request).
    maxRequestBodySize: false,
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
      maskError: createErrorMask({
        retryAfterSeconds: config.retryAfterSeconds,
        logger: services.logger,
        requestId: () => requestScope.getStore()?.requestId,
      }),
    },
    logging: services.logger,
    // Without a promise for a token verified lately: most requests then take no extra turn here.
    context: ({ request, requestId, authorization }) => {
      const credential = authorization !== undefined ? authorization : request.headers.get('authorization');
      // A WebSocket operation has no HTTP request: nothing aborts it but the end of its socket.
      const signal = request?.signal ?? new AbortController().signal;
      const build = ({ viewer, problem, expiresAt }: Authentication): GraphQLContext => ({
        services,
        signal,
        requestId,
        viewer,
        authProblem: problem,
        tokenExpiresAt: expiresAt,
      });
      const known = authenticator.known(credential);
      return known ? build(known) : authenticator.authenticate(credential).then(build);
    },
    // Not a request layer to leave out: without it a rollout ends subscriptions for good.
    plugins: [...plugins.map(({ plugin }) => plugin), useRetryableStreamEnds()],
  });
}
