import { Repeater, type Push, type RepeaterBuffer, type Stop } from '@repeaterjs/repeater';

/**
 * A Repeater that lets go of what its stream holds (a subscription slot, a timer, a source
 * iterator) exactly once, as soon as the stream ends for any reason: the executor's stop() or
 * failure, or the consumer's return() or throw(). Those reach `release` at once, even while a
 * next() waits (graphql-ws and graphql-sse end operations that way) and even before the first
 * next(), which a plain Repeater never tells its executor about. So a slot may be taken before the
 * stream is made (a cap refuses before anything is sent) and is never left behind.
 */
class HeldRepeater<T> extends Repeater<T> {
  readonly #release: () => void;

  constructor(executor: (push: Push<T>, stop: Stop) => unknown, release: () => void, buffer?: RepeaterBuffer) {
    let released = false;
    const releaseOnce = () => {
      if (released) return;
      released = true;
      release();
    };
    super((push, stop) => {
      void stop.then(releaseOnce);
      return executor(push, stop);
    }, buffer);
    this.#release = releaseOnce;
  }

  override return(value?: unknown): Promise<IteratorResult<T>> {
    this.#release();
    return super.return(value);
  }

  override throw(error: unknown): Promise<IteratorResult<T>> {
    this.#release();
    return super.throw(error);
  }
}

export function heldStream<T>(
  executor: (push: Push<T>, stop: Stop) => unknown,
  release: () => void,
  buffer?: RepeaterBuffer,
): AsyncIterableIterator<T> {
  return new HeldRepeater(executor, release, buffer);
}

/**
 * Pushes every value of `source` (one at a time, as the consumer asks) until it ends or the stream
 * stops, then stops the stream. A source that throws rejects, and so fails the stream with its error.
 */
export async function relay<T>(source: AsyncIterator<T>, push: Push<T>, stop: Stop): Promise<void> {
  let stopped = false;
  const ended = stop.then((): IteratorResult<T> => {
    stopped = true;
    return { done: true, value: undefined };
  });
  while (!stopped) {
    const result = await Promise.race([source.next(), ended]);
    if (result.done) break;
    await push(result.value);
  }
  stop();
}
