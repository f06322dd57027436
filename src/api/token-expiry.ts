import { unauthenticated } from '../graphql/errors.js';
import { heldStream, relay } from '../util/held-stream.js';

/** setTimeout's longest delay; later expiries re-arm. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * Ends a subscription when the token it was opened with expires: the source is released, the
 * client gets one UNAUTHENTICATED error, then the stream completes (the client subscribes again
 * with a fresh token). `expiresAt` null: the token never expires.
 */
export function untilTokenExpires<T>(source: AsyncIterableIterator<T>, expiresAt: number | null): AsyncIterableIterator<T> {
  if (expiresAt === null) return source;
  let timer: NodeJS.Timeout | undefined;
  return heldStream<T>(
    (push, stop) => {
      const arm = () => {
        const remaining = expiresAt - Date.now();
        if (remaining <= 0) return void stop(unauthenticated('the token has expired; subscribe again with a fresh token'));
        timer = setTimeout(arm, Math.min(remaining, MAX_TIMER_MS));
        timer.unref();
      };
      arm();
      return relay(source, push, stop);
    },
    () => {
      clearTimeout(timer);
      void source.return?.();
    },
  );
}
