import type { AsyncLocalStorage } from 'node:async_hooks';
import type { Tracer } from '@opentelemetry/api';
import { NoSchemaIntrospectionCustomRule } from 'graphql';
import { createYoga, type Plugin, type YogaServerInstance } from 'graphql-yoga';
import type { Authentication, Authenticator } from '../auth/authenticate.js';
import type { AppConfig } from '../config/config.js';
import type { GraphQLContext, Services } from '../api/context.js';
import { createErrorMask } from '../api/domain-errors.js';
import { useCompiledExecution } from '../graphql/compiled-execution.js';
import { useHiddenSuggestions } from '../graphql/hidden-suggestions.js';
import { useInputErrorCodes } from '../api/input-errors.js';
import { useOperationLimits, type OperationLimits } from '../graphql/limits/operation-limits.js';
import { schema } from '../api/schema.js';
import type { TrustedDocuments } from '../graphql/trusted-documents/trusted-documents.js';
import { useCsrfPrevention } from './csrf.js';
import { EXTRA_PARAM_NAMES, useTrustedDocuments } from './trusted-document-params.js';
import { useOperationMetrics } from './operation-metrics.js';
import { useOperationTracing } from './operation-tracing.js';
import type { RequestRecord } from './request-observer.js';
import type { GraphiQLPage } from './graphiql.js';
import { useJsonBodies } from './media-type.js';
import { useMultipartSubscriptions } from './multipart-subscriptions.js';
import { useBulkDecoded } from './bulk-decoded.js';
import { useSignalShedding } from './shed-signals.js';
import { useSingleConnectionSSE } from './sse-single-connection.js';
import type { StreamTokens } from './stream-tokens.js';
import { useStrictUtf8Body } from './utf8-body.js';
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

/** Yoga takes Envelop plugins as they are (typed `{}` in its options). */
export type OperationLimitsPlugin = (limits: OperationLimits) => Plugin | object;

/**
 * Layers of a request, which the bench leaves out together to price them beside its per-layer
 * profile (AppOptions.without: a bench switch, never configuration).
 */
export type RequestLayer =
  | 'singleConnectionSSE' | 'jsonBodies' | 'strictUtf8Body' | 'csrf' | 'trustedDocuments' | 'inputErrorCodes' | 'compiledExecution' | 'operationMetrics'
  | 'operationTracing' | 'signalShedding' | 'bulkDecoded' | 'operationLimits' | 'multipartSubscriptions' | 'requestObserver';

export const CSRF_HEADER = 'x-graphql-yoga-csrf';
export const GRAPHQL_ENDPOINT = '/graphql';

export function createGraphQLServer(
  config: AppConfig,
  services: Services,
  authenticator: Authenticator,
  requestScope: AsyncLocalStorage<RequestScope>,
  trusted: TrustedDocuments,
  streamTokens: StreamTokens,
  /** null: tracing is off. */
  tracer: Tracer | null,
  /** GraphiQL on GET with `Accept: text/html`, or null (off). */
  page: GraphiQLPage | null,
  operationLimits: OperationLimitsPlugin = useOperationLimits,
  without: readonly RequestLayer[] = [],
): Yoga {
  const limits = config.graphql;
  const layers: [RequestLayer, Plugin | object][] = [
    // Before the CSRF check: its PUT/DELETE and token-carrying requests are not browser forms.
    ['singleConnectionSSE', useSingleConnectionSSE({ endpoint: GRAPHQL_ENDPOINT, authenticator, trusted, streamTokens })],
    ['jsonBodies', useJsonBodies(GRAPHQL_ENDPOINT)],
    ['strictUtf8Body', useStrictUtf8Body()],
    ['csrf', useCsrfPrevention(CSRF_HEADER)],
    ['trustedDocuments', useTrustedDocuments(trusted)],
    ['inputErrorCodes', useInputErrorCodes()],
    // Before tracing: it replaces the executor that tracing wraps.
    ['compiledExecution', useCompiledExecution()],
    ['operationMetrics', useOperationMetrics(services.metrics)],
    ['operationTracing', useOperationTracing(tracer, requestScope)],
    ['signalShedding', useSignalShedding(services.signals, services.metrics, config.retryAfterSeconds)],
    ['bulkDecoded', useBulkDecoded(requestScope)],
    [
      'operationLimits',
      operationLimits({
        maxTokens: limits.maxTokens,
        maxDepth: limits.maxDepth,
        maxAliases: limits.maxAliases,
        maxDirectives: limits.maxDirectives,
        maxCost: limits.maxCost,
        budget: config.requestBudget,
      }),
    ],
    ['multipartSubscriptions', useMultipartSubscriptions()],
  ];
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
      const build = ({ viewer, problem, expiresAt }: Authentication): GraphQLContext =>
        ({ services, signal, requestId, viewer, authProblem: problem, tokenExpiresAt: expiresAt });
      const known = authenticator.known(credential);
      return known ? build(known) : authenticator.authenticate(credential).then(build);
    },
    plugins: [
      ...layers.filter(([name]) => !without.includes(name)).map(([, plugin]) => plugin),
      // Not a layer to price: without it a rollout ends subscriptions for good.
      useRetryableStreamEnds(),
      ...(limits.fieldSuggestions ? [] : [useHiddenSuggestions()]),
      ...(limits.introspection ? [] : [disableIntrospection()]),
    ],
  });
}

function disableIntrospection(): Plugin {
  return { onValidate: ({ addValidationRule }) => addValidationRule(NoSchemaIntrospectionCustomRule) };
}
