import { fileURLToPath } from 'node:url';
import { freePort } from '../src/util/free-port.js';
import { Command, type CommandOptions } from './command.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

export interface ServerOptions {
  /** Variables over this process' own and the defaults NODE_ENV=test, LOG_LEVEL=warn. */
  environment: Record<string, string>;
  /** The script run under tsx (default `src/main.ts`, the real entry). */
  entry?: string;
  /** Node.js options (e.g. `--cpu-prof`). */
  execArgv?: string[];
  /** Instead of `node … entry`: a command run in `cwd` with exactly `env` (plus HOST and PORT), e.g. `npm start`. */
  command?: { file: string; args: string[]; cwd: string; env: Record<string, string> };
  detached?: boolean;
  ipc?: boolean;
  echo?: (text: string) => void;
  /** How long start-up may take (default 60 s). */
  readyWithinMs?: number;
}

/** A server process on a loopback port of its own; `url` is its GraphQL endpoint. */
export class ServerProcess extends Command {
  readonly url: string;

  constructor(port: number, options: ServerOptions) {
    const address = { HOST: '127.0.0.1', PORT: String(port) };
    const command = options.command ?? {
      file: process.execPath,
      args: [...(options.execArgv ?? []), '--import', 'tsx', options.entry ?? 'src/main.ts'],
      cwd: ROOT,
      env: { ...(process.env as Record<string, string>), NODE_ENV: 'test', LOG_LEVEL: 'warn', ...options.environment },
    };
    const spawnOptions: CommandOptions = {
      cwd: command.cwd,
      env: { METRICS_PORT: '0', ...command.env, ...address },
      detached: options.detached ?? false,
    };
    super(command.file, command.args, {
      ...spawnOptions,
      ...(options.ipc ? { ipc: true } : {}),
      ...(options.echo ? { echo: options.echo } : {}),
    });
    this.url = `http://127.0.0.1:${port}/graphql`;
  }

  /** Resolves once /readyz answers 200; rejects, with the output so far, if it exits or takes longer. */
  async ready(timeoutMs = 60_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if (this.ended) throw new Error(`the server process exited (${await this.exit}) before it was ready:\n${this.text}`);
      const status = await fetch(new URL('/readyz', this.url)).then(
        (response) => response.status,
        () => 0,
      );
      if (status === 200) return;
      if (Date.now() > deadline) throw new Error(`the server process was not ready within ${timeoutMs} ms:\n${this.text}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
}

/** Spawns a server process on a free port without waiting for it (the caller waits with `ready`). */
export async function spawnServerProcess(options: ServerOptions): Promise<ServerProcess> {
  return new ServerProcess(await freePort(), options);
}

/**
 * Spawns a server process and resolves once it is ready. On failure it is killed and the error
 * carries its output. The port, free when picked, may be taken before the server binds it: then
 * another one.
 */
export async function startServerProcess(options: ServerOptions): Promise<ServerProcess> {
  for (let attempt = 1; ; attempt++) {
    const server = await spawnServerProcess(options);
    try {
      await server.ready(options.readyWithinMs);
      return server;
    } catch (error) {
      await server.stop('SIGKILL');
      if (attempt < 3 && /EADDRINUSE/.test(server.text)) continue;
      throw error;
    }
  }
}
