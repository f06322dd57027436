import type { AsyncLocalStorage } from 'node:async_hooks';
import type { Tracer } from '@opentelemetry/api';
import type { Services } from '../api/context.js';
import type { Authenticator } from '../auth/authenticate.js';
import type { AppConfig } from '../config/config.js';
import type { DocumentRegistry } from '../graphql/trusted-documents/registry.js';
import { TrustedDocuments } from '../graphql/trusted-documents/trusted-documents.js';
import { createSettingsPage } from '../settings/settings-page.js';
import { projectRoot } from '../util/project-root.js';
import { BulkAdmission } from './bulk-admission.js';
import { EventLoopLoad } from './event-loop-load.js';
import { graphiql } from './graphiql.js';
import { createHttpServer, type Probe } from './http.js';
import { fairShareDoor } from './fair-share-door.js';
import { drain, listen } from './lifecycle.js';
import { createMetricsServer } from './metrics-server.js';
import { requestObserver, unobserved } from './request-observer.js';
import { StreamTokens } from './stream-tokens.js';
import { createGraphQLWebSocket } from './websocket.js';
import { createGraphQLServer, CSRF_HEADER, GRAPHQL_ENDPOINT, type OperationLimitsPlugin, type RequestLayer, type RequestScope } from './yoga.js';

export interface TransportsOptions {
  config: AppConfig;
  services: Services;
  authenticator: Authenticator;
  requestScope: AsyncLocalStorage<RequestScope>;
  /** null: tracing is off (requests then start no spans at all). */
  tracer: Tracer | null;
  readiness: Probe[];
  readinessDetails: () => Record<string, unknown>;
  operationLimits: OperationLimitsPlugin | undefined;
  /** Request layers left out (the bench only, to price them together). */
  without?: readonly RequestLayer[];
  /** Persisted documents registered at run time (operators; APQ in `allow` mode), shared by instances. */
  documents: DocumentRegistry;
  /** The receipts' public keys (a JWKS) for /.well-known/community-receipts.json. */
  receiptKeys: () => Promise<unknown>;
}

export interface Transports {
  /** Listens (metrics first, then the API); answers with the GraphQL endpoint's and the metrics' URLs. */
  listen(): Promise<{ url: string; metricsUrl: string }>;
  /** Readiness false from now on (load balancers stop sending); connections are still served. */
  stopAccepting(): void;
  /** WebSockets closed (their streams end), in-flight requests drained, listeners closed. */
  drain(): Promise<void>;
  /** After a refused start or once drained: the event-loop sampler stops. */
  stopSampling(): void;
}

/**
 * Every way in: Yoga over HTTP (with GraphiQL and the settings page), graphql-ws on the same port,
 * and metrics on their own listener, all behind one bulk door.
 */
export function createTransports(options: TransportsOptions): Transports {
  const { config, services, tracer } = options;
  const { metrics, logger } = services;
  const root = projectRoot();
  const trusted = TrustedDocuments.load(root, config.graphql.trustedDocumentFiles, {
    mode: config.graphql.trustedDocuments,
    registry: options.documents,
    retryAfterSeconds: config.retryAfterSeconds,
  });
  const streamTokens = new StreamTokens();
  const page = config.graphql.graphiql ? graphiql({ csrfHeader: CSRF_HEADER, developmentToken: config.developmentToken }) : null;
  const yoga = createGraphQLServer(config, services, options.authenticator, options.requestScope, trusted, streamTokens, tracer, page, options.operationLimits, options.without);
  const settingsPage = createSettingsPage({ parentOrigins: config.http.corsOrigins });
  let shuttingDown = false;
  const eventLoop = new EventLoopLoad();
  const bulkAdmission = new BulkAdmission({
    ...config.bulk,
    saturated: () => services.signals.full,
    busy: () => eventLoop.utilization > config.bulk.maxEventLoopUtilization,
  });
  metrics.observeBulkRequests(bulkAdmission);
  const overloaded = { retryAfterSeconds: config.retryAfterSeconds, onRefused: () => metrics.shedRequests.inc() };
  const webSocket = createGraphQLWebSocket({
    yoga,
    trusted,
    bodyLimitBytes: config.http.bodyLimitBytes,
    corsOrigins: config.http.corsOrigins,
    bulkAdmission,
    operationsPerSocket: config.http.webSocketOperationsPerSocket,
    overloaded,
  });
  const server = createHttpServer({
    yoga,
    webSocket,
    bodyLimitBytes: config.http.bodyLimitBytes,
    bulkAdmission,
    authenticator: options.authenticator,
    streamTokens,
    receiptKeys: options.receiptKeys,
    overloaded,
    observe: options.without?.includes('requestObserver') ? unobserved : requestObserver({ tracer, logger, accessLogSample: config.accessLog.sample }),
    pages: async (path, req, res) => (await page?.assets.serve(path, req, res)) || settingsPage(path, res),
    requestScope: options.requestScope,
    isShuttingDown: () => shuttingDown,
    readiness: options.readiness,
    readinessDetails: options.readinessDetails,
    ...(config.fairShare.enabled && !options.without?.includes('fairShare') ? { refuseEarly: fairShareDoor(config, services.fairShare, options.authenticator, metrics) } : {}),
  });
  const metricsServer = createMetricsServer(metrics.registry);
  return {
    async listen() {
      eventLoop.start(() => bulkAdmission.next());
      const metricsUrl = `${await listen(metricsServer, config.metrics.port, config.metrics.host)}/metrics`;
      const url = `${await listen(server, config.http.port, config.http.host)}${GRAPHQL_ENDPOINT}`;
      return { url, metricsUrl };
    },
    stopAccepting() {
      shuttingDown = true;
    },
    async drain() {
      await webSocket.close();
      await drain(server, config.shutdown.timeoutMs);
      // Scraped until the API has drained: the last requests still count.
      await drain(metricsServer, config.shutdown.timeoutMs);
    },
    stopSampling: () => eventLoop.stop(),
  };
}
