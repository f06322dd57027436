import type { Logger } from 'pino';

/**
 * npm forwards the terminal's SIGINT to the script it runs, which is in the terminal's process
 * group too: one Ctrl-C can arrive twice. A SIGINT this soon after the first is the same press.
 */
const SAME_PRESS_MS = 1000;

export interface StopHandlers {
  /** Let in-flight work finish, then stop everything. */
  drain(): Promise<void>;
  /** Stop what must not outlive the process (the embedded database), without waiting for requests. */
  stopNow(): Promise<void>;
}

export interface StopRequest {
  readonly requested: boolean;
}

/** How long an uncaught error waits for `stopNow` before the process exits anyway. */
const CRASH_STOP_MS = 30_000;

/**
 * SIGTERM, SIGHUP (the terminal went away), a closed stdout or stderr (`npm start | head`: the
 * reader went away) and Ctrl-C drain, then exit 0 (1 if draining failed). Another Ctrl-C while
 * draining stops at once and exits 130. An uncaught error stops at once and exits 1.
 */
export function onStopSignals(logger: Logger, handlers: StopHandlers): StopRequest {
  let requested = false;
  let pressedAgain = false;
  const drain = (signal: NodeJS.Signals | 'EPIPE') => {
    requested = true;
    logger.info({ signal }, 'shutting down: finishing requests in flight');
    setTimeout(() => {
      pressedAgain = true;
      if (signal === 'SIGINT') logger.info('press Ctrl-C again to stop at once');
    }, SAME_PRESS_MS).unref();
    handlers.drain().then(
      () => {
        logger.info('stopped');
        process.exit(0);
      },
      (error: unknown) => {
        logger.error({ err: error }, 'error while stopping');
        process.exit(1);
      },
    );
  };
  for (const signal of ['SIGTERM', 'SIGHUP'] as const) {
    process.on(signal, () => {
      if (!requested) drain(signal);
    });
  }
  // Once a write failed the stream is done: later writes are dropped, this fires no more than once.
  for (const stream of [process.stdout, process.stderr]) {
    stream.on('error', () => {
      if (!requested) drain('EPIPE');
    });
  }
  const crash = (error: unknown) => {
    requested = true;
    logger.fatal({ err: error }, 'uncaught error: stopping the embedded database, then exiting');
    setTimeout(() => process.exit(1), CRASH_STOP_MS).unref();
    void handlers.stopNow().finally(() => process.exit(1));
  };
  process.on('uncaughtException', crash);
  process.on('unhandledRejection', crash);
  process.on('SIGINT', () => {
    if (!requested) return drain('SIGINT');
    if (!pressedAgain) return;
    logger.warn('Ctrl-C again: stopping at once');
    void handlers.stopNow().finally(() => process.exit(130));
  });
  return {
    get requested() {
      return requested;
    },
  };
}
