import type { Plugin } from 'graphql-yoga';
import { DOCUMENT_ID_PARAMS } from '../graphql/trusted-documents/requested-id.js';
import type { Resolution, TrustedDocuments } from '../graphql/trusted-documents/trusted-documents.js';

/**
 * Trusted documents on HTTP: the same rule as WebSocket and single-connection SSE
 * (TrustedDocuments.resolve). Relay's `id`/`doc_id` and codegen's `documentId` are also read from
 * a GET's query string, which Yoga's parser leaves out.
 */
export function useTrustedDocuments(trusted: TrustedDocuments): Plugin {
  return {
    onRequestParse: ({ request, url }) =>
      request.method === 'GET'
        ? {
            onRequestParseDone: ({ requestParserResult, setRequestParserResult }) => {
              if (Array.isArray(requestParserResult)) return;
              const ids = DOCUMENT_ID_PARAMS.flatMap((name) => {
                const value = url.searchParams.get(name);
                return value ? [[name, value] as const] : [];
              });
              if (ids.length > 0) setRequestParserResult({ ...requestParserResult, ...Object.fromEntries(ids) });
            },
          }
        : undefined,
    // Without a promise when the document needs no look-up: a request then takes no extra turn.
    onParams: ({ params, setParams }) => {
      const use = (resolved: Resolution) => {
        if (resolved instanceof Error) throw resolved;
        setParams({
          query: resolved.query,
          operationName: params.operationName,
          variables: params.variables,
          extensions: params.extensions,
        });
      };
      const resolved = trusted.resolve(params as typeof params & Record<string, unknown>);
      return resolved instanceof Promise ? resolved.then(use) : use(resolved);
    },
  };
}

/** What Yoga must let through its parameter check (`extraParamNames`). */
export const EXTRA_PARAM_NAMES: string[] = [...DOCUMENT_ID_PARAMS];
