import { randomUUID } from 'node:crypto';
import type http from 'node:http';
import type { Duplex } from 'node:stream';
import { GraphQLError, type DocumentNode, type ExecutionArgs, type ExecutionResult } from 'graphql';
import { useServer } from 'graphql-ws/use/ws';
import { WebSocketServer } from 'ws';
import { publicError, publicResult, streamErrorsAsResults } from '../graphql/public-result.js';
import type { TrustedDocuments } from '../graphql/trusted-documents/trusted-documents.js';
import type { Yoga } from './yoga.js';

export interface GraphQLWebSocketOptions {
  yoga: Yoga;
  trusted: TrustedDocuments;
  /** Largest message, like the HTTP body limit. */
  bodyLimitBytes: number;
  /** Browser origins allowed besides the server's own (CORS_ORIGINS). */
  corsOrigins: readonly string[];
}

export interface GraphQLWebSocket {
  /** Takes an HTTP upgrade request for the GraphQL endpoint. */
  handleUpgrade(request: http.IncomingMessage, socket: Duplex, head: Buffer): void;
  /** Closes every socket (1001, going away); their subscriptions end. */
  close(): Promise<void>;
}

interface RootValue {
  execute(args: ExecutionArgs): unknown;
  subscribe(args: ExecutionArgs): unknown;
}

/**
 * graphql-ws (the `graphql-transport-ws` protocol that Apollo Client and urql speak) on the same
 * port and path as HTTP. The bearer token travels in `connectionParams.authorization`
 * ("Bearer <jwt>"), checked by the same Authenticator for every operation; each operation goes
 * through Yoga's parse, validate, context, execute and subscribe, so limits, authorization, error
 * masking, trusted documents and the end of subscriptions at token expiry are those of HTTP.
 */
export function createGraphQLWebSocket(options: GraphQLWebSocketOptions): GraphQLWebSocket {
  const server = new WebSocketServer({ noServer: true, maxPayload: options.bodyLimitBytes });
  const disposable = useServer(
    {
      execute: (args) => (args.rootValue as RootValue).execute(args) as never,
      subscribe: (args) => streamErrorsAsResults((args.rootValue as RootValue).subscribe(args)) as never,
      onSubscribe: async (context, _id, payload) => {
        const resolved = options.trusted.resolve(payload);
        if (resolved instanceof GraphQLError) return [resolved];
        const authorization = context.connectionParams?.['authorization'];
        // No `request`: Yoga's HTTP-only checks (mutations over GET) must not apply to a socket.
        const enveloped = options.yoga.getEnveloped({
          params: { ...payload, query: resolved.query },
          requestId: randomUUID(),
          authorization: typeof authorization === 'string' ? authorization : null,
        } as never);
        let document: DocumentNode;
        try {
          document = enveloped.parse(resolved.query);
        } catch (error) {
          return [error instanceof GraphQLError ? error : new GraphQLError('The document could not be parsed.')];
        }
        const errors = enveloped.validate(enveloped.schema, document);
        if (errors.length > 0) return errors;
        const rootValue: RootValue = { execute: enveloped.execute, subscribe: enveloped.subscribe };
        return {
          schema: enveloped.schema,
          document,
          operationName: payload.operationName ?? null,
          variableValues: payload.variables ?? null,
          contextValue: await enveloped.contextFactory(),
          rootValue,
        };
      },
      onNext: (_context, _id, _payload, _args, result) => publicResult(result as ExecutionResult) as never,
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
