/**
 * A subscription's events, each delivered once paid for: `pay()` spends one event's points and
 * answers 0, or answers how many ms until the caller's budget holds them (nothing spent). Past the
 * budget the stream waits, and so reads no further ahead (the feed reads the database as its events
 * are taken): it slows to what the budget refills, never ends for it, since graphql-sse and Apollo's
 * multipart link take an end as final and a client that reconnects would only pay for opening again.
 * The first event is the opening's, paid for when the subscription was charged.
 */
export function paidStream<T>(source: AsyncIterableIterator<T>, pay: () => number): AsyncIterableIterator<T> {
  let first = true;
  let ended = false;
  let stopWaiting: (() => void) | null = null;
  const wait = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      stopWaiting = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  const end = () => {
    ended = true;
    stopWaiting?.();
  };
  return {
    [Symbol.asyncIterator]() {
      return this;
    },
    async next() {
      const result = await source.next();
      if (result.done) return result;
      if (first) first = false;
      else for (let ms = pay(); ms > 0 && !ended; ms = pay()) await wait(ms);
      return ended ? { done: true, value: undefined } : result;
    },
    // A client that leaves while its stream waits leaves at once.
    return(value?: unknown) {
      end();
      return source.return ? source.return(value) : Promise.resolve({ done: true, value: undefined });
    },
    throw(error?: unknown) {
      end();
      return source.throw ? source.throw(error) : Promise.reject(error);
    },
  };
}
