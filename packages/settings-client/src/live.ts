import { createClient, NetworkError, type RequestParams } from 'graphql-sse';
import type { OperationName } from './documents.js';
import { SettingsClientError, type GraphQLErrorBody } from './errors.js';
import { operationBody } from './request.js';
import type { LiveHandlers } from './types.js';

export interface LiveOptions<T> {
  url: string;
  fetcher: typeof fetch;
  token: () => Promise<string>;
  reconnectMs: { initial: number; max: number };
  operationName: OperationName;
  /** The streamed value from one event's data. */
  pick: (data: Record<string, unknown>) => T;
  /** A stream the server never ends by design (status): an end is a dropped connection, so reconnect. */
  endless: boolean;
}

/**
 * One subscription over server-sent events (graphql-sse, distinct connections: a POST per stream,
 * so a reconnect needs no state kept by any instance), reconnected after every retryable failure
 * with full-jitter backoff and never sooner than Retry-After. Answers with `close`.
 */
export function follow<T>(options: LiveOptions<T>, handlers: LiveHandlers<T>): () => void {
  const sse = createClient({
    url: options.url,
    fetchFn: options.fetcher,
    // Retries are ours: graphql-sse would retry a 401 and cannot honour Retry-After.
    retryAttempts: 0,
    headers: async () => ({ authorization: `Bearer ${await options.token()}` }),
  });
  let stopped = false;
  let failures = 0;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let unsubscribe: (() => void) | undefined;

  const stop = () => {
    if (stopped) return;
    stopped = true;
    clearTimeout(timer);
    unsubscribe?.();
    sse.dispose();
    handlers.state?.('stopped');
  };

  /** A connection ended: by the server's choice (`ended`), or with an error. */
  const after = (error: SettingsClientError | null, ended: boolean) => {
    if (stopped) return;
    if (error) handlers.error?.(error);
    if (error ? !error.retryable : ended && !options.endless) {
      if (!error) handlers.complete?.();
      return stop();
    }
    handlers.state?.('reconnecting');
    const { initial, max } = options.reconnectMs;
    const backoff = Math.random() * Math.min(max, initial * 2 ** failures++);
    timer = setTimeout(connect, Math.max(backoff, (error?.retryAfterSeconds ?? 0) * 1000));
  };

  function connect(): void {
    handlers.state?.('connecting');
    let settled = false;
    const settle = (error: SettingsClientError | null, ended = false) => {
      if (settled) return;
      settled = true;
      unsubscribe?.();
      after(error, ended);
    };
    const request = operationBody(options.operationName) as unknown as RequestParams;
    unsubscribe = sse.subscribe<Record<string, unknown>>(
      request,
      {
        next: (result) => {
          const failure = (result.errors as readonly GraphQLErrorBody[] | undefined)?.[0];
          if (failure) return settle(SettingsClientError.of(failure, null));
          if (!result.data || settled) return;
          failures = 0;
          handlers.next(options.pick(result.data));
        },
        error: (error) => void describe(error).then(settle),
        complete: () => settle(null, true),
      },
      { connected: () => handlers.state?.('live') },
    );
  }

  connect();
  return stop;
}

async function describe(error: unknown): Promise<SettingsClientError> {
  if (error instanceof NetworkError && error.response) return SettingsClientError.fromResponse(error.response);
  return SettingsClientError.network(error);
}
