import { fork } from 'node:child_process';
import { setPriority } from 'node:os';

export interface FloodOptions {
  urls: string[];
  token: string;
  userId: string;
  /** Points a second the flood asks for (a single signal and a leave or rejoin cost 1, a batch of n signals n). */
  pointsPerSec: number;
  batchSize: number;
  /** Single signals only (no batches, no leaves or rejoins): a flood refused whole once its budget is spent. */
  singlesOnly?: boolean;
}

export interface FloodResult {
  seconds: number;
  sent: number;
  /** Points of the answers that got in (200 without errors). */
  admittedPoints: number;
  admittedChanges: number;
  refused: number;
  other: number;
}

/** The lowest scheduling priority: the flooder's client gets a core only when nothing else wants it. */
const LOWEST_PRIORITY = 19;

/**
 * One credential flooding the service (flood-loop.ts), from a child process at the lowest CPU
 * priority. A real flooder's client runs on its own machine; on this one, sending and reading a
 * thousand requests a second at equal priority took a tenth of a core from the server and its
 * database, a cost the service cannot shed and no real attack puts on it.
 */
export async function startFlood(options: FloodOptions): Promise<{ stop(): Promise<FloodResult> }> {
  const child = fork(new URL('./flood-loop.ts', import.meta.url), [], { serialization: 'advanced' });
  setPriority(child.pid!, LOWEST_PRIORITY);
  const exited = new Promise<never>((_, reject) => child.once('exit', (code) => reject(new Error(`flood client exited with ${code}`))));
  const next = () => Promise.race([new Promise<unknown>((resolve) => child.once('message', resolve)), exited]);
  child.send(options);
  await next();
  return {
    async stop() {
      child.send('stop');
      return (await next()) as FloodResult;
    },
  };
}
