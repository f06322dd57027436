import { isUtf8 } from 'node:buffer';
import { createGraphQLError, type Plugin } from 'graphql-yoga';

/** The JSON media types Yoga's own POST parser takes (its isPOSTJsonRequest). */
const JSON_TYPES = ['application/json', 'application/graphql+json'];
/** Decodes as fetch's `text()` does (a leading BOM dropped); the bytes are checked before. */
const DECODER = new TextDecoder();

/**
 * Request bodies must be valid UTF-8. Yoga's parsers decode with replacement, so a stray byte
 * would silently become U+FFFD, and ids that differ only there would collapse into one. The bytes
 * are read once: a JSON body (every GraphQL POST that gets here) is checked and parsed from them
 * directly, with Yoga's refusals; any other one is handed to Yoga's parser as a new request.
 */
export function useStrictUtf8Body(): Plugin {
  return {
    onRequestParse({ request, requestParser, setRequestParser, fetchAPI }) {
      if (!requestParser || request.body == null) return;
      const parse = requestParser;
      const json = request.method === 'POST' && isJson(request.headers.get('content-type'));
      setRequestParser(async (received) => {
        const bytes = new Uint8Array(await received.arrayBuffer());
        if (!isUtf8(bytes)) {
          throw createGraphQLError('The request body is not valid UTF-8.', { extensions: { http: { status: 400 }, code: 'BAD_REQUEST' } });
        }
        if (json) return parseJsonBody(bytes);
        return parse(new fetchAPI.Request(received.url, { method: received.method, headers: received.headers, body: bytes }));
      });
    },
  };
}

function isJson(contentType: string | null): boolean {
  const type = contentType?.split(';')[0]?.trim().toLowerCase();
  return type !== undefined && JSON_TYPES.includes(type);
}

/** What Yoga's parsePOSTJsonRequest answers for the same body, refusals included. */
function parseJsonBody(bytes: Uint8Array): Record<string, unknown> {
  let body: unknown;
  try {
    body = JSON.parse(DECODER.decode(bytes));
  } catch (error) {
    throw createGraphQLError('POST body sent invalid JSON.', {
      extensions: {
        http: { spec: true, status: 400 },
        code: 'BAD_REQUEST',
        ...(error instanceof Error ? { originalError: { name: error.name, message: error.message } } : {}),
      },
    });
  }
  if (body == null || typeof body !== 'object') {
    throw createGraphQLError(`POST body is expected to be object but received ${body == null ? body : typeof body}`, {
      extensions: { http: { status: 400 }, code: 'BAD_REQUEST' },
    });
  }
  return body as Record<string, unknown>;
}
