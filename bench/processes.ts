import { startServerProcess, type ServerProcess } from '../tooling/server-process.js';

export interface ServerProcesses {
  /** GraphQL endpoint of each process. */
  urls: string[];
  /** Process id of each (CPU accounting). */
  pids: number[];
  /** Messages the processes send over IPC (bench/server-process.ts reports applied changes). */
  onMessage(handler: (message: unknown, index: number) => void): void;
  /** CPU a process has used so far, in ms, to the microsecond (its own process.cpuUsage(), asked over IPC; /proc counts 10 ms ticks). */
  cpuMs(index: number): Promise<number>;
  stop(): Promise<void>;
}

export interface ProcessOptions {
  count: number;
  /** The script each process runs: `src/main.ts` (the real entry) or `bench/server-process.ts`. */
  entry: string;
  /** DATABASE_URL, DATABASE_LISTEN_URL, AUTH_JWT_SECRET and any other variable every process gets. */
  environment: Record<string, string>;
  /** Node.js options for every process (e.g. `--cpu-prof`). */
  execArgv?: string[];
  /** Called with the processes' output as it comes (warnings, start-up failures). */
  echo?: (text: string) => void;
}

/** Several processes starting at once on a loaded machine each take far longer than one alone. */
const READY_WITHIN_MS = 180_000;

/**
 * N real server processes (one event loop each, tooling/server-process.ts) on one database,
 * each on its own loopback port; resolves once every /readyz answers 200.
 */
export async function startServerProcesses(options: ProcessOptions): Promise<ServerProcesses> {
  const { count, ...server } = options;
  const started = await Promise.allSettled(
    Array.from({ length: count }, () => startServerProcess({ ...server, ipc: true, readyWithinMs: READY_WITHIN_MS })),
  );
  const servers = started.flatMap((result) => (result.status === 'fulfilled' ? [result.value] : []));
  const stop = async () => void (await Promise.all(servers.map((instance: ServerProcess) => instance.stop('SIGTERM'))));
  const failed = started.find((result): result is PromiseRejectedResult => result.status === 'rejected');
  if (failed) {
    await stop();
    throw failed.reason;
  }
  return {
    urls: servers.map((instance) => instance.url),
    pids: servers.map((instance) => instance.child.pid!),
    onMessage: (handler) => servers.forEach((instance, index) => instance.child.on('message', (message) => handler(message, index))),
    cpuMs: (index) =>
      new Promise((resolve) => {
        const child = servers[index]!.child;
        const answer = (message: unknown) => {
          if (typeof message !== 'object' || message === null || !('cpuUs' in message)) return;
          child.off('message', answer);
          resolve(Number(message.cpuUs) / 1000);
        };
        child.on('message', answer);
        child.send('cpu');
      }),
    stop,
  };
}
