import { unauthenticated } from '../graphql/errors.js';

/** setTimeout's longest delay; later expiries re-arm. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * Ends a subscription when the token it was opened with expires: the source is released, the
 * client gets one UNAUTHENTICATED error, then the stream completes (the client subscribes again
 * with a fresh token). `expiresAt` null: the token never expires.
 *
 * A plain iterator over the source (no second Repeater, no relay loop): every idle subscription
 * holds one, so it keeps only a timer and the pending next's rejection.
 */
export function untilTokenExpires<T>(source: AsyncIterableIterator<T>, expiresAt: number | null): AsyncIterableIterator<T> {
  if (expiresAt === null) return source;
  let timer: NodeJS.Timeout | undefined;
  let finished = false;
  /** Rejects the next() in flight, if any. */
  let fail: ((error: unknown) => void) | null = null;
  /** The expiry, for the next next() when none was in flight. */
  let expired: Error | null = null;
  const finish = () => {
    if (finished) return;
    finished = true;
    clearTimeout(timer);
    void source.return?.();
  };
  const arm = () => {
    const remaining = expiresAt - Date.now();
    if (remaining > 0) {
      timer = setTimeout(arm, Math.min(remaining, MAX_TIMER_MS));
      timer.unref();
      return;
    }
    if (finished) return;
    const error = unauthenticated('the token has expired; subscribe again with a fresh token');
    finish();
    if (fail) fail(error);
    else expired = error;
  };
  arm();
  const done = (): IteratorResult<T> => ({ done: true, value: undefined });
  return {
    [Symbol.asyncIterator]() {
      return this;
    },
    next() {
      if (expired) {
        const error = expired;
        expired = null;
        return Promise.reject(error);
      }
      if (finished) return Promise.resolve(done());
      return new Promise<IteratorResult<T>>((resolve, reject) => {
        fail = reject;
        source.next().then(
          (result) => {
            fail = null;
            if (result.done) finish();
            resolve(result);
          },
          (error: unknown) => {
            fail = null;
            finish();
            reject(error);
          },
        );
      });
    },
    return() {
      finish();
      return Promise.resolve(done());
    },
    throw(error: unknown) {
      finish();
      return Promise.reject(error);
    },
  };
}
