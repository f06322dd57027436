import { randomUUID } from 'node:crypto';
import { getOperationAST, GraphQLError, type DocumentNode, type ExecutionResult } from 'graphql';
import { TOKEN_HEADER_KEY, TOKEN_QUERY_KEY } from 'graphql-sse';
import { createHandler } from 'graphql-sse/lib/use/fetch';
import type { Plugin } from 'graphql-yoga';
import type { Authenticator } from '../auth/authenticate.js';
import { publicResult, streamErrorsAsResults } from '../graphql/public-result.js';
import type { TrustedDocuments } from '../graphql/trusted-documents/trusted-documents.js';

/**
 * graphql-sse's single-connection mode on the GraphQL endpoint: a PUT reserves a stream, a GET
 * (with the stream token) opens it, POSTs (with the token) run operations on it, DELETE stops one.
 * Only requests of that mode come here; everything else (including graphql-sse's
 * distinct-connections mode, which is plain GraphQL over SSE) stays with Yoga.
 *
 * Operations go through Yoga's parse, validate, context (authentication), execute and subscribe, so
 * they get the same limits, authorization and error masking as over HTTP, and the same
 * trusted-documents rule. Reservations need a valid bearer token: anonymous clients cannot park
 * streams on the server. Streams live in this instance's memory: clients of this mode need session
 * affinity behind a load balancer.
 */
export function useSingleConnectionSSE(options: { endpoint: string; authenticator: Authenticator; trusted: TrustedDocuments }): Plugin {
  const serverContexts = new WeakMap<Request, Record<string, unknown>>();
  let handler: ((request: Request) => Promise<Response>) | null = null;
  return {
    onYogaInit: ({ yoga }) => {
      handler = createHandler(
        {
          authenticate: async (request) => {
            if (request.method !== 'PUT') {
              return request.headers.get(TOKEN_HEADER_KEY) ?? new URL(request.url).searchParams.get(TOKEN_QUERY_KEY) ?? undefined;
            }
            const { viewer, problem } = await options.authenticator.authenticate(request.headers.get('authorization') ?? null);
            if (viewer) return randomUUID();
            const body = { errors: [{ message: `Not authenticated: ${problem}.`, extensions: { code: 'UNAUTHENTICATED' } }] };
            return [JSON.stringify(body), { status: 401, statusText: 'Unauthorized', headers: { 'content-type': 'application/json; charset=utf-8' } }];
          },
          onSubscribe: async (request, params) => {
            const resolved = options.trusted.resolve(params);
            if (resolved instanceof GraphQLError) return { errors: [resolved] };
            const enveloped = yoga.getEnveloped({ ...serverContexts.get(request.raw), request: request.raw, params: { ...params, query: resolved.query } });
            let document: DocumentNode;
            try {
              document = enveloped.parse(resolved.query);
            } catch (error) {
              return { errors: [error instanceof GraphQLError ? error : new GraphQLError('The document could not be parsed.')] };
            }
            const errors = enveloped.validate(enveloped.schema, document);
            if (errors.length > 0) return { errors };
            const args = {
              schema: enveloped.schema,
              document,
              contextValue: await enveloped.contextFactory(),
              variableValues: params.variables,
              operationName: params.operationName,
            };
            const subscription = getOperationAST(document, params.operationName)?.operation === 'subscription';
            return (subscription ? streamErrorsAsResults(enveloped.subscribe(args)) : enveloped.execute(args)) as Promise<ExecutionResult>;
          },
          onNext: (_context, _request, result) => publicResult(result as ExecutionResult) as ExecutionResult,
        },
        yoga.fetchAPI,
      );
    },
    onRequest: ({ request, url, serverContext, endResponse }) => {
      if (url.pathname !== options.endpoint || !handler || !isSingleConnectionRequest(request, url)) return;
      serverContexts.set(request, serverContext as Record<string, unknown>);
      return handler(request).then(endResponse);
    },
  };
}

/** A reservation is a bare PUT (graphql-sse sends no body); the other requests of the mode carry the stream token. */
function isSingleConnectionRequest(request: Request, url: URL): boolean {
  if (request.method === 'PUT') return !request.headers.has('content-type');
  return request.headers.has(TOKEN_HEADER_KEY) || url.searchParams.has(TOKEN_QUERY_KEY);
}
