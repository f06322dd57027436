import type { ServerResponse } from 'node:http';
import type { ExecutionResult } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { endsForShutdown } from '../graphql/errors.js';

interface StreamFetchAPI {
  ReadableStream: typeof ReadableStream;
  Response: typeof Response;
}

/**
 * A response whose body `end()` ends early, the way a dropped connection looks to its client:
 * what was read is sent, the rest (the protocol's last frame: SSE's `complete`, multipart's closing
 * boundary) never is, and the source is cancelled, so the stream behind it is released.
 * `onClosed` runs once the body has ended, however.
 */
export function endableResponse(
  response: Response,
  fetchAPI: StreamFetchAPI,
  onClosed: () => void = () => undefined,
): { response: Response; end(): void } {
  const source = response.body;
  if (!source) return { response, end: () => undefined };
  const reader = source.getReader();
  let [closed, ended] = [false, false];
  const close = () => {
    if (closed) return;
    closed = true;
    onClosed();
  };
  const body = new fetchAPI.ReadableStream<Uint8Array>({
    async pull(controller) {
      const { done, value } = await reader.read();
      // Whatever the source hands over after end() is dropped: its cancellation may let more through.
      if (!done && !ended) return controller.enqueue(value);
      controller.close();
      close();
    },
    async cancel(reason) {
      close();
      await reader.cancel(reason);
    },
  });
  const endable = new fetchAPI.Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
  return {
    response: endable,
    end: () => {
      ended = true;
      void reader.cancel();
    },
  };
}

/**
 * Streams a stopping instance ends (SHUTTING_DOWN) end over HTTP as a dropped connection, never
 * with the protocol's `complete`: graphql-sse takes `complete` as the end of the subscription and
 * Apollo Client the closing boundary, while both retry a connection that drops (graphql-sse with
 * `retryAttempts`, Apollo with RetryLink). The event itself is not sent, so an application sees
 * no error, only its stream resuming; a resubscription this instance refuses meanwhile gets 503
 * SHUTTING_DOWN with Retry-After. Serves Yoga's server-sent events and multipart alike.
 *
 * Over node:http the connection is dropped for real (the response destroyed, which releases the
 * stream as a client's disconnect does): wrapping every stream's body to be able to end it cost
 * each idle stream a quarter more heap (`npm run bench -- --only "8. memory"`). Elsewhere (a
 * fetch-only server) the body is wrapped.
 */
export function useRetryableStreamEnds(): Plugin {
  const streams = new WeakMap<Request, { end?: () => void; shutDown: boolean }>();
  return {
    onResultProcess: ({ request, result, setResult }) => {
      if (!(Symbol.asyncIterator in Object(result))) return;
      const stream: { end?: () => void; shutDown: boolean } = { shutDown: false };
      streams.set(request, stream);
      setResult(
        untilShutdown(result as AsyncIterable<ExecutionResult>, () => {
          stream.shutDown = true;
          stream.end?.();
        }),
      );
    },
    onResponse: ({ request, response, setResponse, fetchAPI, serverContext }) => {
      const stream = streams.get(request);
      if (!stream) return;
      const res = (serverContext as { res?: ServerResponse } | undefined)?.res;
      if (res) stream.end = () => void res.destroy();
      else {
        const endable = endableResponse(response, fetchAPI);
        stream.end = endable.end;
        setResponse(endable.response);
      }
      // The stream may have ended before its response was made.
      if (stream.shutDown) stream.end();
    },
  };
}

/** The source's results until one ends it for shutdown: that one is held back, and the stream then waits for its end. */
function untilShutdown(source: AsyncIterable<ExecutionResult>, onShutdown: () => void): AsyncIterableIterator<ExecutionResult> {
  const iterator = source[Symbol.asyncIterator]();
  let shutDown = false;
  const never = new Promise<IteratorResult<ExecutionResult>>(() => undefined);
  return {
    [Symbol.asyncIterator]() {
      return this;
    },
    async next() {
      if (shutDown) return never;
      const next = await iterator.next();
      if (next.done || !endsForShutdown(next.value)) return next;
      shutDown = true;
      onShutdown();
      return never;
    },
    return: async () => (await iterator.return?.()) ?? { done: true, value: undefined },
    throw: async (error: unknown) => (await iterator.throw?.(error)) ?? { done: true, value: undefined },
  };
}
