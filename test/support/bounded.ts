import type { App } from '../../src/app.js';

/**
 * How long a teardown may take before it fails: well under vitest's hook timeout, so that a stop
 * that hangs fails with what it waited for instead of vitest's bare "Hook timed out".
 */
export const TEARDOWN_MS = 60_000;

/** Thrown by `within` when its work is not done in time; the message says what it waited for. */
export class TeardownTimeout extends Error {
  override name = 'TeardownTimeout';
}

/**
 * `work`, or a TeardownTimeout after `ms` naming `what` and, from `waitingOn` read at that moment,
 * what it was still waiting for. The work itself is not cancelled (nothing can cancel a promise).
 */
export async function within<T>(what: string, work: Promise<T>, waitingOn: () => string = () => 'unknown', ms = TEARDOWN_MS): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new TeardownTimeout(`${what} did not finish within ${ms / 1000} s; still waiting on: ${waitingOn()}`)),
      ms,
    );
  });
  try {
    return await Promise.race([work, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** The app with a bounded stop: a stop that hangs fails saying which part and what its pools hold. */
export function boundedStop(app: App): App {
  const stop = app.stop.bind(app);
  let stopping: Promise<void> | null = null;
  app.stop = () => (stopping ??= within(`the stop of app ${app.instanceId}`, stop(), () => app.progress()));
  return app;
}
