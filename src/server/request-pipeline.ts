import type { AsyncLocalStorage } from 'node:async_hooks';
import type { Tracer } from '@opentelemetry/api';
import { NoSchemaIntrospectionCustomRule } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { Services } from '../api/context.js';
import { useInputErrorCodes } from '../api/input-errors.js';
import { schema } from '../api/schema.js';
import type { Authenticator } from '../auth/authenticate.js';
import type { AppConfig } from '../config/config.js';
import { useCompiledExecution } from '../graphql/compiled-execution.js';
import { mutationFieldsAdmitted } from '../graphql/field-admission.js';
import { useHiddenSuggestions } from '../graphql/hidden-suggestions.js';
import { useOperationLimits } from '../graphql/limits/operation-limits.js';
import type { DocumentRegistry } from '../graphql/trusted-documents/registry.js';
import { TrustedDocuments } from '../graphql/trusted-documents/trusted-documents.js';
import { projectRoot } from '../util/project-root.js';
import { useBulkDecoded } from './bulk-decoded.js';
import { useCsrfPrevention } from './csrf.js';
import { fairShareDoor, type EarlyRefusal } from './fair-share-door.js';
import { useFairShare } from './fair-share.js';
import { useGlobalPrivacyControl } from './global-privacy-control.js';
import { fairSharePrincipals, type Principals } from './fair-share-principals.js';
import { useJsonBodies } from './media-type.js';
import { useMultipartSubscriptions } from './multipart-subscriptions.js';
import { useOperationMetrics } from './operation-metrics.js';
import { useOperationTracing } from './operation-tracing.js';
import { requestObserver, type RequestObserver } from './request-observer.js';
import { useSignalShedding } from './shed-signals.js';
import { useSingleConnectionSSE } from './sse-single-connection.js';
import { StreamTokens } from './stream-tokens.js';
import { useTrustedDocuments } from './trusted-document-params.js';
import { useStrictUtf8Body } from './utf8-body.js';
import { CSRF_HEADER, GRAPHQL_ENDPOINT, type NamedPlugin, type RequestScope } from './yoga.js';

export interface RequestPipelineOptions {
  config: AppConfig;
  services: Services;
  authenticator: Authenticator;
  requestScope: AsyncLocalStorage<RequestScope>;
  /** null: tracing is off (requests then start no spans at all). */
  tracer: Tracer | null;
  /** Persisted documents registered at run time (operators; APQ in `allow` mode), shared by instances. */
  documents: DocumentRegistry;
}

/** What a request passes through besides the transport itself; createTransports serves with it. */
export interface RequestPipeline {
  /** Yoga's plugins, in the order they run. */
  plugins: NamedPlugin[];
  /** The HTTP request's span and access-log line (http.ts). */
  observe: RequestObserver;
  /** The documents the plugins accept, which graphql-ws checks too. */
  trusted: TrustedDocuments;
  /** graphql-sse's single-connection tokens, which the HTTP server hands out. */
  streamTokens: StreamTokens;
  /** Who pays what (fair share); null while it is off. */
  principals: Principals | null;
  /** Before the body is read: a caller refused lately is refused again (fair share), or nothing. */
  refuseEarly?: EarlyRefusal;
}

/** The request layers of an instance as its configuration asks for them. */
export function requestPipeline({
  config,
  services,
  authenticator,
  requestScope,
  tracer,
  documents,
}: RequestPipelineOptions): RequestPipeline {
  const trusted = TrustedDocuments.load(projectRoot(), config.graphql.trustedDocumentFiles, {
    mode: config.graphql.trustedDocuments,
    registry: documents,
    retryAfterSeconds: config.retryAfterSeconds,
  });
  const streamTokens = new StreamTokens();
  const limits = config.graphql;
  // One principal cache for the door and the charge.
  const principals = config.fairShare.enabled ? fairSharePrincipals(config) : null;
  const plugins: [string, Plugin | object][] = [
    // Before the CSRF check: its PUT/DELETE and token-carrying requests are not browser forms.
    ['singleConnectionSSE', useSingleConnectionSSE({ endpoint: GRAPHQL_ENDPOINT, authenticator, trusted, streamTokens })],
    ['jsonBodies', useJsonBodies(GRAPHQL_ENDPOINT)],
    ['strictUtf8Body', useStrictUtf8Body()],
    ['csrf', useCsrfPrevention(CSRF_HEADER)],
    ['trustedDocuments', useTrustedDocuments(trusted)],
    ['inputErrorCodes', useInputErrorCodes()],
    // Before tracing: it replaces the executor that tracing wraps.
    ['compiledExecution', useCompiledExecution()],
    ['operationMetrics', useOperationMetrics(services.metrics, trusted.operationNames)],
    ['operationTracing', useOperationTracing(tracer, requestScope)],
    ['signalShedding', useSignalShedding(services.signals, services.metrics, config.retryAfterSeconds)],
    ['bulkDecoded', useBulkDecoded(requestScope)],
    [
      'operationLimits',
      useOperationLimits({
        maxTokens: limits.maxTokens,
        maxDepth: limits.maxDepth,
        maxAliases: limits.maxAliases,
        maxDirectives: limits.maxDirectives,
        maxCost: limits.maxCost,
        budget: config.requestBudget,
      }),
    ],
    // After the operation limits: it spends the cost they measured, and only for operations they let through.
    ...(principals ? [['fairShare', useFairShare(principals, services, requestScope, authenticator)] as [string, Plugin]] : []),
    ['multipartSubscriptions', useMultipartSubscriptions()],
  ];
  if (config.privacySignals.globalPrivacyControlLeaves) plugins.push(['globalPrivacyControl', useGlobalPrivacyControl()]);
  if (!limits.fieldSuggestions) plugins.push(['hiddenSuggestions', useHiddenSuggestions()]);
  if (!limits.introspection) plugins.push(['noIntrospection', disableIntrospection()]);
  return {
    plugins: plugins.map(([name, plugin]) => ({ name, plugin })),
    observe: requestObserver({ tracer, logger: services.logger, accessLogSample: config.accessLog.sample }),
    trusted,
    streamTokens,
    principals,
    ...(principals
      ? {
          refuseEarly: fairShareDoor(
            config,
            principals,
            mutationFieldsAdmitted(schema, 'leave'),
            services.fairShare,
            authenticator,
            services.metrics,
          ),
        }
      : {}),
  };
}

function disableIntrospection(): Plugin {
  return { onValidate: ({ addValidationRule }) => addValidationRule(NoSchemaIntrospectionCustomRule) };
}
