import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

export type Memory = { heapUsed: number; rss: number };

/** A full collection (the bench runs without --expose-gc, so it is switched on here). */
export function exposeGc(): () => void {
  setFlagsFromString('--expose-gc');
  return runInNewContext('gc') as () => void;
}

/** Heap and RSS after full collections: what the process holds, not what it has yet to free. */
export function settle(gc: () => void): Memory {
  for (let i = 0; i < 3; i++) gc();
  const { heapUsed, rss } = process.memoryUsage();
  return { heapUsed, rss };
}
