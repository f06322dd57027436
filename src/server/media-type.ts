import type { Plugin } from 'graphql-yoga';

/**
 * GraphQL POST bodies are JSON. Any other media type is a 415 naming the one to use (it used to
 * reach the CSRF check and be reported as a missing CSRF header).
 */
export function useJsonBodies(endpoint: string): Plugin {
  return {
    onRequest: ({ request, url, endResponse, fetchAPI }) => {
      if (request.method !== 'POST' || url.pathname !== endpoint) return;
      const mediaType = (request.headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
      if (mediaType === 'application/json') return;
      const body = {
        errors: [
          {
            message: `Unsupported media type ${JSON.stringify(mediaType.slice(0, 100) || '(none)')}: send the request as application/json.`,
            extensions: { code: 'UNSUPPORTED_MEDIA_TYPE' },
          },
        ],
      };
      endResponse(
        new fetchAPI.Response(JSON.stringify(body), {
          status: 415,
          headers: { 'content-type': 'application/json; charset=utf-8', accept: 'application/json' },
        }),
      );
    },
  };
}
