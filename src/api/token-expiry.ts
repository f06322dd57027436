import { unauthenticated } from '../graphql/errors.js';

/** setTimeout's longest delay; later expiries re-arm. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * Ends a subscription when the token it was opened with expires: the source is released, the
 * client gets one UNAUTHENTICATED error, then the stream completes (the client subscribes again
 * with a fresh token). `expiresAt` null: the token never expires.
 */
export function untilTokenExpires<T>(source: AsyncIterableIterator<T>, expiresAt: number | null): AsyncIterableIterator<T> {
  if (expiresAt === null) return source;
  let expired = false;
  let reported = false;
  let timer: NodeJS.Timeout | undefined;
  let signalExpiry: () => void = () => undefined;
  const expiry = new Promise<null>((resolve) => (signalExpiry = () => resolve(null)));
  const arm = () => {
    const remaining = expiresAt - Date.now();
    if (remaining > 0) {
      timer = setTimeout(arm, Math.min(remaining, MAX_TIMER_MS));
      timer.unref();
      return;
    }
    expired = true;
    signalExpiry();
    void source.return?.();
  };
  arm();
  return {
    next: async () => {
      if (!expired) {
        const result = await Promise.race([source.next(), expiry]);
        if (result !== null && !expired) {
          if (result.done) clearTimeout(timer);
          return result;
        }
      }
      if (reported) return { value: undefined, done: true };
      reported = true;
      throw unauthenticated('the token has expired; subscribe again with a fresh token');
    },
    return: async () => {
      clearTimeout(timer);
      await source.return?.();
      return { value: undefined, done: true };
    },
    [Symbol.asyncIterator]() {
      return this;
    },
  };
}
