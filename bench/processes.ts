import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from '../src/util/free-port.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

export interface ServerProcesses {
  /** GraphQL endpoint of each process. */
  urls: string[];
  /** Process id of each (CPU accounting). */
  pids: number[];
  /** Messages the processes send over IPC (bench/server-process.ts reports applied changes). */
  onMessage(handler: (message: unknown, index: number) => void): void;
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
  /** Called with each line a process writes to stderr (start-up failures). */
  log?: (line: string) => void;
}

/**
 * N real server processes (`src/main.ts` under tsx, one event loop each) on one database, each on
 * its own loopback port; resolves once every /readyz answers 200.
 */
export async function startServerProcesses(options: ProcessOptions): Promise<ServerProcesses> {
  const children: ChildProcess[] = [];
  const urls: string[] = [];
  const stop = async () => {
    await Promise.all(
      children.map(
        (child) =>
          new Promise<void>((resolve) => {
            if (child.exitCode !== null || child.signalCode !== null) return resolve();
            child.once('exit', () => resolve());
            child.kill('SIGTERM');
          }),
      ),
    );
  };
  try {
    for (let i = 0; i < options.count; i++) {
      const port = await freePort();
      const child = spawn(process.execPath, [...(options.execArgv ?? []), '--import', 'tsx', path.join(ROOT, options.entry)], {
        cwd: ROOT,
        stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
        env: { ...process.env, NODE_ENV: 'test', LOG_LEVEL: 'warn', HOST: '127.0.0.1', PORT: String(port), ...options.environment },
      });
      child.stderr!.setEncoding('utf8').on('data', (chunk: string) => chunk.split('\n').filter(Boolean).forEach((line) => options.log?.(line)));
      children.push(child);
      urls.push(`http://127.0.0.1:${port}/graphql`);
    }
    await Promise.all(urls.map((url, i) => ready(url, children[i]!)));
  } catch (error) {
    await stop();
    throw error;
  }
  return {
    urls,
    pids: children.map((child) => child.pid!),
    onMessage: (handler) => children.forEach((child, index) => child.on('message', (message) => handler(message, index))),
    stop,
  };
}

async function ready(url: string, child: ChildProcess): Promise<void> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`server process for ${url} exited with ${child.exitCode}`);
    const status = await fetch(new URL('/readyz', url)).then((response) => response.status, () => 0);
    if (status === 200) return;
    if (Date.now() > deadline) throw new Error(`${url} not ready within 60 s`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
