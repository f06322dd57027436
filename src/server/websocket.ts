import { randomUUID } from 'node:crypto';
import type http from 'node:http';
import type { Duplex } from 'node:stream';
import type { ExecutionResult } from 'graphql';
import { useServer } from 'graphql-ws/use/ws';
import { WebSocketServer, type RawData, type WebSocket } from 'ws';
import { endsForShutdown, overloaded, tooManyOperations } from '../graphql/errors.js';
import { publicError, publicResult } from '../graphql/public-result.js';
import type { TrustedDocuments } from '../graphql/trusted-documents/trusted-documents.js';
import type { BulkAdmission } from './bulk-admission.js';
import { prepareOperation, type PreparedOperation } from './prepared-operation.js';
import type { Yoga } from './yoga.js';

/** Below graphql-ws's 12 s keep-alive: a socket not read longer would miss its pong and be cut. */
const UNREAD_AFTER_REFUSAL_MAX_MS = 5_000;

export interface GraphQLWebSocketOptions {
  yoga: Yoga;
  trusted: TrustedDocuments;
  /** Largest message, like the HTTP body limit. */
  bodyLimitBytes: number;
  /** Browser origins allowed besides the server's own (CORS_ORIGINS). */
  corsOrigins: readonly string[];
  /** The bulk door HTTP requests pass: large operations take the same places. */
  bulkAdmission: BulkAdmission;
  /** Operations in flight on one socket (WEBSOCKET_OPERATIONS_PER_SOCKET_MAX). */
  operationsPerSocket: number;
  overloaded: { retryAfterSeconds: number; onRefused(): void };
}

export interface GraphQLWebSocket {
  /** Takes an HTTP upgrade request for the GraphQL endpoint. */
  handleUpgrade(request: http.IncomingMessage, socket: Duplex, head: Buffer): void;
  /** Closes every socket (1001, going away); their subscriptions end. */
  close(): Promise<void>;
}

/**
 * graphql-ws (the `graphql-transport-ws` protocol that Apollo Client and urql speak) on the same
 * port and path as HTTP. The bearer token travels in `connectionParams.authorization`
 * ("Bearer <jwt>"), checked by the same Authenticator for every operation; each operation goes
 * through prepareOperation (Yoga's parse, validate, context, execute and subscribe), so limits,
 * authorization, error masking, trusted documents and the end of subscriptions at token expiry
 * are those of HTTP. So is the bulk door: a message longer than BULK_REQUEST_BYTES takes a bulk
 * place (or waits for one, or is refused OVERLOADED) before it is parsed as GraphQL, let alone
 * coerced; and a socket has at most `operationsPerSocket` operations in flight.
 */
export function createGraphQLWebSocket(options: GraphQLWebSocketOptions): GraphQLWebSocket {
  const server = new WebSocketServer({ noServer: true, maxPayload: options.bodyLimitBytes });
  const { retryAfterSeconds, onRefused } = options.overloaded;
  // The size of each socket's latest message. This listener is added before graphql-ws's, and
  // graphql-ws calls onSubscribe synchronously from its own, so onSubscribe reads its message's size.
  const messageBytes = new WeakMap<WebSocket, number>();
  // Bulk operations of each socket at the door or running (or refused less than Retry-After ago):
  // while there are any, the socket is not read, so a flood waits unread in its own TCP buffers
  // (as bulk HTTP bodies do) instead of being read, parsed and refused over and over.
  const bulkHeld = new WeakMap<WebSocket, number>();
  const holdReading = (socket: WebSocket): (() => void) => {
    bulkHeld.set(socket, (bulkHeld.get(socket) ?? 0) + 1);
    socket.pause();
    let done = false;
    return () => {
      if (done) return;
      done = true;
      const left = (bulkHeld.get(socket) ?? 1) - 1;
      bulkHeld.set(socket, left);
      if (left === 0) socket.resume();
    };
  };
  server.on('connection', (socket: WebSocket) => socket.on('message', (data: RawData) => messageBytes.set(socket, byteLength(data))));
  const disposable = useServer(
    {
      // graphql-ws picks execute or subscribe by the operation; the prepared operation knows which it is.
      execute: (args) => (args.rootValue as PreparedOperation).run() as never,
      subscribe: (args) => (args.rootValue as PreparedOperation).run() as never,
      onSubscribe: async (context, _id, payload) => {
        const bytes = messageBytes.get(context.extra.socket) ?? 0;
        const requestId = randomUUID();
        // graphql-ws lists this operation already: more than the limit means one too many.
        if (Object.keys(context.subscriptions).length > options.operationsPerSocket) {
          onRefused();
          return [tooManyOperations(options.operationsPerSocket, retryAfterSeconds, requestId)];
        }
        const authorization = context.connectionParams?.['authorization'];
        const door = async () => {
          const unread = options.bulkAdmission.isBulkOperation(bytes) ? holdReading(context.extra.socket) : () => undefined;
          // One address or one credential holds only so many places, as over HTTP.
          const client = {
            address: context.extra.request.socket.remoteAddress ?? '',
            credential: typeof authorization === 'string' ? authorization : '',
          };
          const place = await options.bulkAdmission.admitOperation(bytes, client);
          if (!place) {
            // Retry-After, enforced: a flood that ignores it is not read again until then.
            setTimeout(unread, Math.min(retryAfterSeconds * 1000, UNREAD_AFTER_REFUSAL_MAX_MS)).unref();
            onRefused();
            return overloaded(retryAfterSeconds, requestId);
          }
          return () => {
            place();
            unread();
          };
        };
        // No `request`: Yoga's HTTP-only checks (mutations over GET) must not apply to a socket.
        const prepared = await prepareOperation(
          options.yoga,
          options.trusted,
          payload,
          // `req`, the upgrade request: fair share keys an anonymous caller by its address, as over HTTP.
          { requestId, authorization: typeof authorization === 'string' ? authorization : null, req: context.extra.request },
          door,
        );
        return 'errors' in prepared ? prepared.errors : { ...prepared.args, rootValue: prepared };
      },
      onNext: (context, _id, _payload, _args, result) => {
        // The instance is stopping: the socket closes as going away (1001), which graphql-ws
        // clients retry, resubscribing everything, rather than with `complete`, which ends a subscription.
        if (endsForShutdown(result as ExecutionResult)) context.extra.socket.close(1001, 'Going away');
        return publicResult(result as ExecutionResult) as never;
      },
      onError: (_context, _id, _payload, errors) => errors.map(publicError),
    },
    server,
  );
  return {
    handleUpgrade(request, socket, head) {
      if (!originAllowed(request, options.corsOrigins)) {
        socket.end('HTTP/1.1 403 Forbidden\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
        return;
      }
      server.handleUpgrade(request, socket, head, (ws) => server.emit('connection', ws, request));
    },
    close: async () => {
      await disposable.dispose();
    },
  };
}

function byteLength(data: RawData): number {
  return Array.isArray(data) ? data.reduce((sum, part) => sum + part.byteLength, 0) : data.byteLength;
}

/**
 * Browsers send an Origin with every WebSocket handshake and apply no CORS to it: only the
 * server's own origin and the allowed ones may connect from a page. Clients outside browsers send
 * none.
 */
function originAllowed(request: http.IncomingMessage, allowed: readonly string[]): boolean {
  const origin = request.headers.origin;
  if (origin === undefined) return true;
  const host = request.headers.host;
  return allowed.includes(origin) || (host !== undefined && (origin === `http://${host}` || origin === `https://${host}`));
}
