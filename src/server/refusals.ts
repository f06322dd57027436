import http from 'node:http';
import type { Duplex } from 'node:stream';
import { GraphQLError } from 'graphql';
import { errorResponse } from '../graphql/public-result.js';

/**
 * HTTP refusals made outside Yoga (before it reads the request, or before Node's parser hands one
 * over) answer as Yoga's own do, GraphQL over HTTP: `{"errors":[{"message", "extensions":{"code"…}}]}`
 * with the status, never plain text or an empty body, so a client reads every refusal one way.
 */
export function refusal(status: number, code: string, message: string, extensions: Record<string, unknown> = {}): GraphQLError {
  return new GraphQLError(message, { extensions: { code, ...extensions, http: { status } } });
}

/** Answers `error` (its `extensions.http` status and headers) in the JSON media type the client accepts. */
export function sendRefusal(res: http.ServerResponse, accept: string | undefined, error: GraphQLError): void {
  const { status, headers, body } = errorResponse(error);
  res.writeHead(status, { ...headers, ...bodyHeaders(accept, body) });
  res.end(body);
}

/** The same answer written on a bare socket (a refused upgrade; a request Node's parser refused), then closed. */
export function writeRefusal(socket: Duplex, accept: string | undefined, error: GraphQLError): void {
  const { status, headers, body } = errorResponse(error);
  const fields = { ...headers, ...bodyHeaders(accept, body), connection: 'close' };
  const statusLine = `HTTP/1.1 ${status} ${http.STATUS_CODES[status] ?? ''}`;
  const lines = [statusLine, ...Object.entries(fields).map(([name, value]) => `${name}: ${value}`)];
  // Closed once written, as Node does: a client still sending (endless headers) holds nothing here.
  socket.end(`${lines.join('\r\n')}\r\n\r\n${body}`, () => socket.destroy());
}

/**
 * Requests Node's parser refuses before any handler runs (headers over `maxHeaderSize`, a request
 * arriving too slowly, malformed HTTP): Node would answer 431, 408 or 400 with an empty body. As
 * Node does, nothing is written once a response on the socket has begun; the headers could not be
 * read, so the body is JSON whatever the client accepts.
 */
export function answerClientErrors(server: http.Server): void {
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Duplex & { _httpMessage?: http.ServerResponse }) => {
    const answered = socket._httpMessage?.headersSent;
    if (error.code === 'ECONNRESET' || !socket.writable || answered) return void socket.destroy();
    writeRefusal(socket, undefined, clientRefusal(error.code));
  });
}

function clientRefusal(code: string | undefined): GraphQLError {
  switch (code) {
    case 'HPE_HEADER_OVERFLOW':
      return refusal(431, 'REQUEST_HEADER_FIELDS_TOO_LARGE', `Headers over the ${http.maxHeaderSize}-byte limit.`);
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return refusal(413, 'PAYLOAD_TOO_LARGE', "The request's chunk extensions are too large.");
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return refusal(408, 'REQUEST_TIMEOUT', 'The request did not arrive in time.');
    default:
      return refusal(400, 'BAD_REQUEST', 'The request is not valid HTTP/1.1.');
  }
}

const GRAPHQL_RESPONSE = /application\/graphql-response\+json/i;

function bodyHeaders(accept: string | undefined, body: string): Record<string, string> {
  const type = GRAPHQL_RESPONSE.test(accept ?? '') ? 'application/graphql-response+json' : 'application/json';
  const length = String(Buffer.byteLength(body));
  return { 'content-type': `${type}; charset=utf-8`, 'content-length': length, 'cache-control': 'no-store' };
}
