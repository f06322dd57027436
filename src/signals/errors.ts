/** The queue is full: the request is refused at once (HTTP 503 OVERLOADED) instead of waiting. */
export const OVERLOADED_MESSAGE = 'Too many signals are waiting to be written; retry shortly.';

export class OverloadedError extends Error {
  override name = 'OverloadedError';

  constructor() {
    super(OVERLOADED_MESSAGE);
  }
}

/** The client went away before its signals were written: they are dropped, never written. */
export class AbandonedError extends Error {
  override name = 'AbandonedError';
}
