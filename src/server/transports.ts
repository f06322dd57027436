import type { AsyncLocalStorage } from 'node:async_hooks';
import type { Services } from '../api/context.js';
import type { Authenticator } from '../auth/authenticate.js';
import type { AppConfig } from '../config/config.js';
import { createSettingsPage } from '../settings/settings-page.js';
import { BulkAdmission } from './bulk-admission.js';
import { EventLoopLoad } from './event-loop-load.js';
import { exportRoute } from './export-route.js';
import { graphiql } from './graphiql.js';
import { createHttpServer, type Probe } from './http.js';
import { drain, listen } from './listen-and-drain.js';
import { createMetricsServer } from './metrics-server.js';
import type { RequestPipeline } from './request-pipeline.js';
import { createGraphQLWebSocket } from './websocket.js';
import { createGraphQLServer, CSRF_HEADER, GRAPHQL_ENDPOINT, type RequestScope } from './yoga.js';

/** Each export holds a pooled session for its length: a few at once leave the pool to the requests. */
const MAX_CONCURRENT_EXPORTS = 2;

export interface TransportsOptions {
  config: AppConfig;
  services: Services;
  authenticator: Authenticator;
  requestScope: AsyncLocalStorage<RequestScope>;
  /** What every request passes through (requestPipeline). */
  pipeline: RequestPipeline;
  readiness: Probe[];
  readinessDetails: () => Record<string, unknown>;
  /** The receipts' public keys (a JWKS) for /.well-known/community-receipts.json. */
  receiptKeys: () => Promise<unknown>;
}

export interface Transports {
  /** Listens (metrics first, then the API); answers with the GraphQL endpoint's and the metrics' URLs. Listens on neither if it fails. */
  listen(): Promise<{ url: string; metricsUrl: string }>;
  /** Readiness false from now on (load balancers stop sending); connections are still served. */
  stopAccepting(): void;
  /** WebSockets closed (their streams end), in-flight requests drained, listeners closed. */
  drain(): Promise<void>;
  /** The event-loop sampler the bulk door consults. */
  startSampling(): void;
  stopSampling(): void;
}

/**
 * Every way in: Yoga over HTTP (with GraphiQL and the settings page), graphql-ws on the same port,
 * and metrics on their own listener, all behind one bulk door.
 */
export function createTransports(options: TransportsOptions): Transports {
  const { config, services, authenticator, requestScope, pipeline } = options;
  const { trusted, streamTokens } = pipeline;
  const { metrics } = services;
  const page = config.graphql.graphiql ? graphiql({ csrfHeader: CSRF_HEADER, developmentToken: config.developmentToken }) : null;
  const yoga = createGraphQLServer({ config, services, authenticator, requestScope, page, plugins: pipeline.plugins });
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
    authenticator,
    streamTokens,
    receiptKeys: options.receiptKeys,
    overloaded,
    observe: pipeline.observe,
    onResponse: metrics.httpResponse,
    pages: async (path, req, res) => (await page?.assets.serve(path, req, res)) || settingsPage(path, res),
    requestScope,
    isShuttingDown: () => shuttingDown,
    readiness: options.readiness,
    readinessDetails: options.readinessDetails,
    refuseEarly: pipeline.refuseEarly,
    exportData: exportRoute({
      exports: services.exports,
      authenticator,
      fairShare: services.fairShare,
      principals: pipeline.principals,
      retryAfterSeconds: config.retryAfterSeconds,
      maxConcurrent: MAX_CONCURRENT_EXPORTS,
      logger: services.logger,
    }),
  });
  const metricsServer = createMetricsServer(metrics.registry);
  return {
    async listen() {
      const metricsUrl = `${await listen(metricsServer, config.metrics.port, config.metrics.host)}/metrics`;
      try {
        return { url: `${await listen(server, config.http.port, config.http.host)}${GRAPHQL_ENDPOINT}`, metricsUrl };
      } catch (error) {
        await drain(metricsServer, config.shutdown.timeoutMs);
        throw error;
      }
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
    startSampling: () => eventLoop.start(() => bulkAdmission.next()),
    stopSampling: () => eventLoop.stop(),
  };
}
