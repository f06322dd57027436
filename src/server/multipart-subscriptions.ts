import type { ExecutionResult, GraphQLError } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { endWithError, publicError, publicResult } from '../graphql/public-result.js';

type ResultProcessor = Parameters<Parameters<NonNullable<Plugin['onResultProcess']>>[0]['setResultProcessor']>[0];

const BOUNDARY = 'graphql';
const HEARTBEAT_MS = 5_000;

/**
 * Subscriptions over multipart HTTP in the protocol Apollo Client's HttpLink speaks
 * (`Accept: multipart/mixed;subscriptionSpec=1.0`): one JSON part per event as `{"payload": …}`,
 * an empty `{}` part every 5 s so proxies keep the response open, `--graphql--` at the end. Yoga
 * answers multipart only for @defer/@stream, in another framing, so this adds the subscription
 * case; the request has already been through parsing, limits, authorization and masking.
 *
 * A subscription refused for a while (a 503 with Retry-After: SHUTTING_DOWN, SERVICE_UNAVAILABLE,
 * …) is answered as the protocol's transport error (`{"payload": null, "errors": […]}`) with that
 * status: Apollo's RetryLink retries it, where the same error as GraphQL JSON ends the subscription.
 */
export function useMultipartSubscriptions(): Plugin {
  return {
    onResultProcess: ({ request, result, setResultProcessor }) => {
      if (!wantsMultipartSubscription(request)) return;
      if (Symbol.asyncIterator in Object(result)) setResultProcessor(processMultipartSubscription, 'multipart/mixed');
      else if (unavailable(result as ExecutionResult)) setResultProcessor(processTransportError, 'multipart/mixed');
    },
  };
}

const CONTENT_TYPE = `multipart/mixed;boundary="${BOUNDARY}";subscriptionSpec=1.0`;

function unavailable(result: ExecutionResult): GraphQLError | undefined {
  return result.errors?.find((error) => (error.extensions?.['http'] as { status?: number } | undefined)?.status === 503);
}

const processTransportError: ResultProcessor = (result, fetchAPI) => {
  const error = unavailable(result as ExecutionResult)!;
  const { headers } = error.extensions['http'] as { headers?: Record<string, string> };
  const body = `\r\n--${BOUNDARY}\r\ncontent-type: application/json; charset=utf-8\r\n\r\n${JSON.stringify({ payload: null, errors: [publicError(error)] })}\r\n--${BOUNDARY}--\r\n`;
  return new fetchAPI.Response(body, { status: 503, headers: { ...headers, 'content-type': CONTENT_TYPE, 'cache-control': 'no-store' } });
};

function wantsMultipartSubscription(request: Request): boolean {
  return (request.headers.get('accept') ?? '')
    .split(',')
    .some((type) => type.trim().toLowerCase().startsWith('multipart/mixed') && /subscriptionspec\s*=\s*"?1\.0/i.test(type));
}

const processMultipartSubscription: ResultProcessor = (result, fetchAPI) => {
  const iterator = endWithError(result as AsyncIterable<ExecutionResult>);
  const encoder = new fetchAPI.TextEncoder();
  // Each part ends with the next delimiter, so a client can hand it over as soon as it arrives.
  const part = (json: unknown) =>
    encoder.encode(`\r\ncontent-type: application/json; charset=utf-8\r\n\r\n${JSON.stringify(json)}\r\n--${BOUNDARY}`);
  let heartbeat: NodeJS.Timeout | undefined;
  const body = new fetchAPI.ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(encoder.encode(`\r\n--${BOUNDARY}`));
      heartbeat = setInterval(() => controller.enqueue(part({})), HEARTBEAT_MS);
    },
    async pull(controller) {
      let next: IteratorResult<ExecutionResult>;
      try {
        next = await iterator.next();
      } catch (error) {
        clearInterval(heartbeat);
        throw error;
      }
      if (next.done) {
        clearInterval(heartbeat);
        controller.enqueue(encoder.encode('--\r\n'));
        controller.close();
        return;
      }
      controller.enqueue(part({ payload: publicResult(next.value) }));
    },
    async cancel() {
      clearInterval(heartbeat);
      await iterator.return?.();
    },
  });
  return new fetchAPI.Response(body, {
    status: 200,
    headers: {
      'content-type': CONTENT_TYPE,
      'cache-control': 'no-cache',
      connection: 'keep-alive',
    },
  });
};
