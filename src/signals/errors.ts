/** The queue is full: the request is refused at once (the API answers 503 OVERLOADED) instead of waiting. */
export class OverloadedError extends Error {
  override name = 'OverloadedError';

  constructor() {
    super('The signal queue is full.');
  }
}

/** The client went away before its signals were written: they are dropped, never written. */
export class AbandonedError extends Error {
  override name = 'AbandonedError';
}
