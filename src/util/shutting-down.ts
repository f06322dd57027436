/**
 * A stream ended, or refused, because this instance is stopping: not the end of what it follows.
 * Clients are to subscribe again (on another instance, or on this one once it is back), and the
 * transports end the stream the way their clients retry (see src/server/stream-shutdown.ts).
 */
export class ShuttingDownError extends Error {
  override name = 'ShuttingDownError';
  constructor() {
    super('This instance is shutting down; subscribe again.');
  }
}
