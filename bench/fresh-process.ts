import { fork } from 'node:child_process';
import type { Case, InProcessCase, Row, Sizes } from './case.js';

/** What the parent sends the child (bench/fresh-process-child.ts). */
export interface FreshProcessJob {
  /** File URL of the module that exports the case. */
  module: string;
  /** The name it exports the case under. */
  exportName: string;
  sizes: Sizes;
}

/**
 * `benchCase`, exported by `module` as `exportName`, run in a new Node.js process of its own. After
 * many cases the bench's own process holds a large heap, sockets, timers and code the JIT shaped for
 * other work: a nanosecond figure taken there measures that state as much as the code. A fresh
 * process gives the same figure in a full run as alone; it also runs first (see `Case.runsFirst`).
 */
export function inFreshProcess(benchCase: InProcessCase, module: URL, exportName: string): Case {
  return {
    labels: benchCase.labels,
    runsFirst: true,
    run: (_cluster, sizes) =>
      new Promise<Row[]>((resolve, reject) => {
        const child = fork(new URL('./fresh-process-child.ts', import.meta.url), [], { serialization: 'advanced' });
        let rows: Row[] | null = null;
        let failure: string | null = null;
        child.on('message', (message: { rows?: Row[]; error?: string }) => {
          rows = message.rows ?? rows;
          failure = message.error ?? failure;
        });
        child.once('error', reject);
        child.once('exit', (code) =>
          rows ? resolve(rows) : reject(new Error(failure ?? `the case's process exited with ${code} and no rows`)),
        );
        const job: FreshProcessJob = { module: module.href, exportName, sizes };
        child.send(job);
      }),
  };
}
