import { isUtf8 } from 'node:buffer';
import { createGraphQLError, type Plugin } from 'graphql-yoga';

/**
 * Request bodies must be valid UTF-8. Yoga's parsers decode with replacement, so a stray byte
 * would silently become U+FFFD, and ids that differ only there would collapse into one.
 */
export function useStrictUtf8Body(): Plugin {
  return {
    onRequestParse({ request, requestParser, setRequestParser, fetchAPI }) {
      if (!requestParser || request.body == null) return;
      const parse = requestParser;
      setRequestParser(async (received) => {
        const bytes = new Uint8Array(await received.arrayBuffer());
        if (!isUtf8(bytes)) {
          throw createGraphQLError('The request body is not valid UTF-8.', { extensions: { http: { status: 400 }, code: 'BAD_REQUEST' } });
        }
        return parse(new fetchAPI.Request(received.url, { method: received.method, headers: received.headers, body: bytes }));
      });
    },
  };
}
