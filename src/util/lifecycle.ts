/** One thing an app starts and stops. A start that throws must leave nothing of its own open. */
export interface Part {
  readonly name: string;
  start?(): Promise<void> | void;
  stop?(): Promise<void> | void;
}

export class StoppedWhileStartingError extends Error {
  override name = 'StoppedWhileStartingError';
  constructor() {
    super('stopped while starting');
  }
}

export interface Lifecycle {
  /** Starts the parts in order; when one fails, stops those already started (in reverse), then rethrows. */
  start(): Promise<void>;
  /** Stops the started parts in reverse order, each even if an earlier one failed; rejects with the first failure. */
  stop(): Promise<void>;
}

/**
 * Starts and stops `parts` as one. A stop while starting stops what has started, the part being
 * started included (its stop is what ends a start that waits, such as a listener still
 * connecting), and no later part starts. `onStopFailed` hears of every part that failed to stop.
 */
export function lifecycle(parts: readonly Part[], onStopFailed: (name: string, error: unknown) => void): Lifecycle {
  const started: Part[] = [];
  let stopping: Promise<void> | null = null;
  const stopStarted = async () => {
    let first: { error: unknown } | null = null;
    for (const part of started.splice(0).reverse()) {
      try {
        await part.stop?.();
      } catch (error) {
        first ??= { error };
        onStopFailed(part.name, error);
      }
    }
    if (first) throw first.error;
  };
  return {
    async start() {
      for (const part of parts) {
        if (stopping) throw new StoppedWhileStartingError();
        started.push(part);
        try {
          await part.start?.();
        } catch (error) {
          // A stop meanwhile has taken this part with the others.
          if (stopping) throw error;
          started.pop();
          await stopStarted().catch(() => undefined);
          throw error;
        }
      }
      if (stopping) throw new StoppedWhileStartingError();
    },
    stop: () => (stopping ??= stopStarted()),
  };
}
