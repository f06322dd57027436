import { Logger as WorkerLogger } from 'graphile-worker';
import type { Logger } from 'pino';

/** graphile-worker's log lines into the service's logger; its info is our debug (it is chatty). */
export function workerLogger(logger: Logger): WorkerLogger {
  const child = logger.child({ component: 'graphile-worker' });
  return new WorkerLogger(() => (level, message, meta) => {
    const method = level === 'error' ? 'error' : level === 'warning' ? 'warn' : level === 'info' ? 'debug' : 'trace';
    child[method](meta ?? {}, message);
  });
}
