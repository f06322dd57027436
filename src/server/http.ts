import type { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { Duplex } from 'node:stream';
import { context } from '@opentelemetry/api';
import type { GraphQLError } from 'graphql';
import { overloaded, retryLater } from '../graphql/errors.js';
import { withTimeout } from '../util/with-timeout.js';
import type { Authenticator } from '../auth/authenticate.js';
import { TOKEN_HEADER_KEY } from 'graphql-sse';
import type { BulkAdmission } from './bulk-admission.js';
import { EXPORT_PATH } from './export-route.js';
import type { EarlyRefusal } from './fair-share-door.js';
import { answerClientErrors, refusal, sendRefusal, writeRefusal } from './refusals.js';
import type { StreamTokens } from './stream-tokens.js';
import type { RequestObserver } from './request-observer.js';
import type { GraphQLWebSocket } from './websocket.js';
import { GRAPHQL_ENDPOINT, type RequestScope, type Yoga } from './yoga.js';

export interface Probe {
  name: string;
  check(): Promise<boolean>;
}

export interface HttpServerOptions {
  yoga: Yoga;
  /** WebSocket upgrades of the GraphQL endpoint (graphql-ws). */
  webSocket: GraphQLWebSocket;
  requestScope: AsyncLocalStorage<RequestScope>;
  readiness: Probe[];
  /** Shown beside the checks in /readyz without deciding it (e.g. whether commits survive failover). */
  readinessDetails?: () => Record<string, unknown>;
  bodyLimitBytes: number;
  /** Bounds the bulk requests past the door; the ones it refuses get `overloaded`. */
  bulkAdmission: BulkAdmission;
  /** Bulk bodies are only read for callers whose token verifies (checked from the headers alone). */
  authenticator: Pick<Authenticator, 'authenticate'>;
  /** …or whose graphql-sse stream token this instance issued (it was reserved with a valid bearer token). */
  streamTokens: StreamTokens;
  overloaded: { retryAfterSeconds: number; onRefused(): void };
  /** The public keys receipts are signed with (a JWKS), served at RECEIPT_KEYS_PATH. */
  receiptKeys(): Promise<unknown>;
  /** The request's span and access-log line (not for the probes). */
  observe: RequestObserver;
  /** Every response but the probes', by its status once it is sent (metrics). */
  onResponse: (status: number) => void;
  /** Extra pages (the settings page, GraphiQL's assets); answers true when it served the path. */
  pages: (pathname: string, req: http.IncomingMessage, res: http.ServerResponse) => Promise<boolean>;
  isShuttingDown(): boolean;
  /** GET /export: a user's data as NDJSON (export-route.ts). */
  exportData: (req: http.IncomingMessage, res: http.ServerResponse, requestId: string) => Promise<void>;
  /** Fair share's refusal of a caller whose budget is spent, before the body is read (fairShareDoor). */
  refuseEarly?: EarlyRefusal;
}

const REQUEST_RECEIVE_TIMEOUT_MS = 30_000;
export const RECEIPT_KEYS_PATH = '/.well-known/community-receipts.json';
const REQUEST_ID = /^[\w.:-]{1,128}$/;

/** /graphql (Yoga, and graphql-ws on upgrade), /healthz (process up), /readyz (able to serve correctly); metrics have their own listener. */
export function createHttpServer(options: HttpServerOptions): http.Server {
  // Any request gets 30 s to arrive, not Node's 300 (bulk bodies get BULK_BODY_TIMEOUT_MS).
  const server = http.createServer({ requestTimeout: REQUEST_RECEIVE_TIMEOUT_MS }, (req, res) => {
    const incoming = req.headers['x-request-id'];
    const requestId = typeof incoming === 'string' && REQUEST_ID.test(incoming) ? incoming : randomUUID();
    res.setHeader('x-request-id', requestId);
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    if (path === '/healthz') return sendJson(res, 200, { status: 'ok' });
    if (path === '/readyz') {
      return void readiness(options).then(({ ok, checks }) =>
        sendJson(res, ok ? 200 : 503, { status: ok ? 'ready' : 'not ready', checks, ...options.readinessDetails?.() }),
      );
    }
    if (req.method === 'GET' && path === RECEIPT_KEYS_PATH)
      return void options.receiptKeys().then((keys) => sendJson(res, 200, keys, 'public, max-age=300'));
    res.once('close', () => options.onResponse(res.statusCode));
    const observed = options.observe(req, res, requestId, path);
    if (req.method === 'GET' && (path.startsWith('/settings') || path.startsWith('/graphiql/'))) {
      const notFound = () => sendRefusal(res, req.headers.accept, refusal(404, 'NOT_FOUND', 'Not found.'));
      return void options.pages(path, req, res).then((served) => served || notFound());
    }
    if (req.method === 'GET' && path === EXPORT_PATH) return void options.exportData(req, res, requestId);
    const refused = bodyRefusal(req, options.bodyLimitBytes, requestId);
    if (refused) return sendRefusal(res, req.headers.accept, refused);
    // In the request's own trace context even when the door lets it in later, from another request's turn.
    // A bulk request comes back with its body read (`received`): Yoga reads that one.
    const enter = (decoded?: () => void, received = req) =>
      context.with(observed.context, () =>
        options.requestScope.run({ requestId, decoded, record: observed.record }, () => void options.yoga(received, res, { requestId })),
      );
    if (path === GRAPHQL_ENDPOINT && options.refuseEarly?.(req, res, requestId, observed.record, (received) => enter(undefined, received)))
      return;
    if (!options.bulkAdmission.isBulk(req)) return enter();
    void admitBulk(req, res, requestId, options, enter);
  });
  server.on('upgrade', (req: http.IncomingMessage, socket: Duplex, head: Buffer) => {
    const path = (req.url ?? '/').split('?')[0];
    const refused =
      path !== GRAPHQL_ENDPOINT ? refusal(404, 'NOT_FOUND', 'Not found.') : options.isShuttingDown() ? stopping(options) : null;
    if (!refused) return options.webSocket.handleUpgrade(req, socket, head);
    writeRefusal(socket, req.headers.accept, refused);
  });
  answerClientErrors(server);
  return server;
}

/**
 * A bulk body is read only for a caller whose token verifies, and only once the door lets it in:
 * an anonymous client cannot take a place, and a slow one loses it after BULK_BODY_TIMEOUT_MS.
 */
async function admitBulk(
  req: http.IncomingMessage,
  res: http.ServerResponse,
  requestId: string,
  options: HttpServerOptions,
  enter: (decoded?: () => void, received?: http.IncomingMessage) => void,
): Promise<void> {
  const streamToken = req.headers[TOKEN_HEADER_KEY];
  const reserved = typeof streamToken === 'string' && options.streamTokens.verify(streamToken);
  const credential = reserved ? streamToken : (req.headers.authorization ?? null);
  const { viewer, problem } = reserved ? { viewer: true, problem: null } : await options.authenticator.authenticate(credential);
  if (!viewer) {
    res.setHeader('connection', 'close');
    const message = `Not authenticated: ${problem}.`;
    return sendRefusal(res, req.headers.accept, refusal(401, 'UNAUTHENTICATED', message, { requestId }));
  }
  options.bulkAdmission.admit(
    req,
    res,
    { address: req.socket.remoteAddress ?? '', credential: credential! },
    {
      enter,
      refuse: () => {
        options.overloaded.onRefused();
        sendRefusal(res, req.headers.accept, overloaded(options.overloaded.retryAfterSeconds, requestId));
      },
      timeOut: () => {
        res.setHeader('connection', 'close');
        const message = 'The request body did not arrive in time.';
        sendRefusal(res, req.headers.accept, refusal(408, 'REQUEST_TIMEOUT', message, { requestId }));
        req.socket.destroySoon();
      },
    },
  );
}

/** Bodies are refused before they are read: too large, or of unknown length (chunked). */
function bodyRefusal(req: http.IncomingMessage, limit: number, requestId: string): GraphQLError | null {
  if (req.method !== 'POST') return null;
  const length = req.headers['content-length'];
  if (length === undefined) return refusal(411, 'LENGTH_REQUIRED', 'POST bodies need a Content-Length.', { requestId });
  if (!/^\d+$/.test(length) || Number(length) > limit) {
    const message = `The request body is over the ${limit}-byte limit.`;
    return refusal(413, 'PAYLOAD_TOO_LARGE', message, { requestId, limitBytes: limit });
  }
  return null;
}

/** A WebSocket upgrade while this instance stops: another instance takes it (the SHUTTING_DOWN of streams). */
function stopping(options: HttpServerOptions): GraphQLError {
  const { retryAfterSeconds } = options.overloaded;
  return retryLater('SHUTTING_DOWN', 'This instance is stopping; connect again.', { retryAfterSeconds });
}

const PROBE_TIMEOUT_MS = 2_000;

/** Each probe must answer within PROBE_TIMEOUT_MS: a hung database means "not ready", not a hung probe. */
async function readiness(options: HttpServerOptions): Promise<{ ok: boolean; checks: Record<string, boolean> }> {
  const results = await Promise.all(
    options.readiness.map(async (probe) => [probe.name, await withTimeout(probe.check(), PROBE_TIMEOUT_MS).catch(() => false)] as const),
  );
  const checks = Object.fromEntries([...results, ['accepting', !options.isShuttingDown()]]);
  return { ok: Object.values(checks).every(Boolean), checks };
}

function sendJson(res: http.ServerResponse, status: number, body: unknown, cacheControl = 'no-store'): void {
  res.writeHead(status, { 'content-type': 'application/json', 'cache-control': cacheControl });
  res.end(JSON.stringify(body));
}
