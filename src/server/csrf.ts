import { createGraphQLError, type Plugin } from 'graphql-yoga';

/** Content types a browser sends cross-site without a CORS preflight (a "simple request"). */
const SIMPLE_CONTENT_TYPES = ['application/x-www-form-urlencoded', 'multipart/form-data', 'text/plain'];

/**
 * CSRF protection where a forged request could carry credentials the browser attaches by itself.
 * A cross-site page can make a browser send a simple request (GET, or a form POST) with the
 * victim's cookies, but never with an `Authorization` header: setting one forces a CORS preflight,
 * which our CORS policy answers. So a request passes when it was preflighted (a non-simple
 * content type), carries the CSRF header, or carries `Authorization` and no cookies; a simple
 * request with cookies or without any credential needs the header. Default GET queries of urql and
 * graphql-request with a bearer token therefore work as they are (docs/api.md, CSRF).
 */
export function useCsrfPrevention(header: string): Plugin {
  return {
    onRequestParse({ request }) {
      const contentType = request.headers.get('content-type')?.toLowerCase();
      if (contentType && !SIMPLE_CONTENT_TYPES.some((simple) => contentType.startsWith(simple))) return;
      if (request.headers.has(header)) return;
      if (request.headers.has('authorization') && !request.headers.has('cookie')) return;
      throw createGraphQLError(`Required CSRF header(s) not present: send ${header}, or authenticate with an Authorization header`, {
        extensions: { code: 'CSRF_HEADER_REQUIRED', http: { status: 403 } },
      });
    },
  };
}
