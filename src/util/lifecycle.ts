/**
 * One thing an app starts and stops. A start that throws must leave nothing of its own open: the
 * list stops only the parts before it. A part that opens several things is made with `partOf`.
 */
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
  /** What it is doing now, e.g. `stopping "webhooks" (for 12.3 s)`; null when idle. For a stop that hangs. */
  activity(): string | null;
}

export interface LifecycleOptions {
  /** Hears of every part that failed to stop. */
  onStopFailed: (name: string, error: unknown) => void;
  /** Hears of a part whose stop has taken `slowStopMs` so far (and again each `slowStopMs`). */
  onSlowStop?: (name: string, elapsedMs: number) => void;
  slowStopMs?: number;
}

/**
 * Starts and stops `parts` as one. A stop while starting stops what has started, the part being
 * started included (its stop is what ends a start that waits, such as a listener still
 * connecting), and no later part starts.
 */
export function lifecycle(parts: readonly Part[], { onStopFailed, onSlowStop, slowStopMs = 10_000 }: LifecycleOptions): Lifecycle {
  const started: Part[] = [];
  let stopping: Promise<void> | null = null;
  let current: { verb: 'starting' | 'stopping'; name: string; since: number } | null = null;
  const stopStarted = async () => {
    let first: { error: unknown } | null = null;
    for (const part of started.splice(0).reverse()) {
      current = { verb: 'stopping', name: part.name, since: performance.now() };
      const slow = onSlowStop && setInterval(() => onSlowStop(part.name, performance.now() - current!.since), slowStopMs).unref();
      try {
        await part.stop?.();
      } catch (error) {
        first ??= { error };
        onStopFailed(part.name, error);
      } finally {
        clearInterval(slow);
      }
    }
    current = null;
    if (first) throw first.error;
  };
  return {
    async start() {
      for (const part of parts) {
        if (stopping) throw new StoppedWhileStartingError();
        started.push(part);
        current = { verb: 'starting', name: part.name, since: performance.now() };
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
      current = null;
    },
    stop: () => (stopping ??= stopStarted()),
    activity: () => current && `${current.verb} "${current.name}" (for ${((performance.now() - current.since) / 1000).toFixed(1)} s)`,
  };
}

/**
 * One part made of `parts` (a pool, then the workers on it), for the factory that makes them all:
 * started in order and stopped in reverse, as a lifecycle of its own, so a start that fails stops
 * what it had started and leaves nothing open. Its stop rejects with its parts' first failure.
 */
export function partOf(name: string, parts: readonly Part[]): Part {
  const own = lifecycle(parts, { onStopFailed: () => undefined });
  return { name, start: () => own.start(), stop: () => own.stop() };
}
