import type { ExecutionResult } from 'graphql';
import { TOKEN_HEADER_KEY, TOKEN_QUERY_KEY } from 'graphql-sse';
import type { StreamTokens } from './stream-tokens.js';
import { createHandler } from 'graphql-sse/lib/use/fetch';
import type { Plugin } from 'graphql-yoga';
import type { Authenticator } from '../auth/authenticate.js';
import { endsForShutdown, unauthenticated } from '../graphql/errors.js';
import { errorResponse, publicResult } from '../graphql/public-result.js';
import type { TrustedDocuments } from '../graphql/trusted-documents/trusted-documents.js';
import { prepareOperation } from './prepared-operation.js';
import { endableResponse } from './stream-shutdown.js';

/**
 * graphql-sse's single-connection mode on the GraphQL endpoint: a PUT reserves a stream, a GET
 * (with the stream token) opens it, POSTs (with the token) run operations on it, DELETE stops one.
 * Only requests of that mode come here; everything else (including graphql-sse's
 * distinct-connections mode, which is plain GraphQL over SSE) stays with Yoga.
 *
 * Operations go through prepareOperation (Yoga's parse, validate, context, execute and subscribe), so
 * they get the same limits, authorization and error masking as over HTTP, and the same
 * trusted-documents rule. Reservations need a valid bearer token: anonymous clients cannot park
 * streams on the server. Streams live in this instance's memory: clients of this mode need session
 * affinity behind a load balancer.
 *
 * A stream this instance ends because it stops (SHUTTING_DOWN) cuts the client's event stream, with
 * no `complete` for any operation: graphql-sse then reconnects (`retryAttempts`) and resubscribes
 * each operation, where a `complete` would have ended it for good.
 */
export function useSingleConnectionSSE(options: {
  endpoint: string;
  authenticator: Authenticator;
  trusted: TrustedDocuments;
  streamTokens: StreamTokens;
}): Plugin {
  const serverContexts = new WeakMap<Request, Record<string, unknown>>();
  // The open event streams by stream token, each with what ends it.
  const streams = new Map<string, () => void>();
  let handler: ((request: Request) => Promise<Response>) | null = null;
  return {
    onYogaInit: ({ yoga }) => {
      handler = createHandler(
        {
          authenticate: async (request) => {
            if (request.method !== 'PUT') {
              return streamToken(request.headers, request.url) ?? undefined;
            }
            const { viewer, problem } = await options.authenticator.authenticate(request.headers.get('authorization') ?? null);
            if (viewer) return options.streamTokens.issue();
            const refusal = errorResponse(unauthenticated(problem), 401);
            return [
              refusal.body,
              { status: refusal.status, statusText: 'Unauthorized', headers: { 'content-type': 'application/json; charset=utf-8' } },
            ];
          },
          onSubscribe: async (request, params) => {
            const prepared = await prepareOperation(yoga, options.trusted, params, {
              ...serverContexts.get(request.raw),
              request: request.raw,
            });
            const result = 'errors' in prepared ? { errors: [...prepared.errors] } : await prepared.run();
            // graphql-sse takes only a result with `data` for one (else a 400): a refused subscribe (SHUTTING_DOWN, a cap) has none.
            return (Symbol.asyncIterator in result || 'data' in result ? result : { data: null, ...result }) as ExecutionResult;
          },
          onNext: (_context, request, result) => {
            if (endsForShutdown(result as ExecutionResult)) streams.get(streamToken(request.headers, request.url) ?? '')?.();
            return publicResult(result as ExecutionResult) as ExecutionResult;
          },
        },
        yoga.fetchAPI,
      );
    },
    onRequest: ({ request, url, serverContext, endResponse, fetchAPI }) => {
      if (url.pathname !== options.endpoint || !handler || !isSingleConnectionRequest(request, url)) return;
      serverContexts.set(request, serverContext as Record<string, unknown>);
      const token = request.method === 'GET' ? streamToken(request.headers, request.url) : null;
      return handler(request).then((response) => {
        if (!token || !response.body) return endResponse(response);
        const endable = endableResponse(response, fetchAPI, () => streams.delete(token));
        streams.set(token, endable.end);
        endResponse(endable.response);
      });
    },
  };
}

function streamToken(headers: { get(name: string): string | null | undefined }, url: string): string | null {
  return headers.get(TOKEN_HEADER_KEY) ?? new URL(url).searchParams.get(TOKEN_QUERY_KEY);
}

/** A reservation is a bare PUT (graphql-sse sends no body); the other requests of the mode carry the stream token. */
function isSingleConnectionRequest(request: Request, url: URL): boolean {
  if (request.method === 'PUT') return !request.headers.has('content-type');
  return request.headers.has(TOKEN_HEADER_KEY) || url.searchParams.has(TOKEN_QUERY_KEY);
}
