import { spawn, type ChildProcess } from 'node:child_process';

export interface CommandOptions {
  cwd: string;
  env: Record<string, string>;
  /** A process group of its own, as a terminal runs a command (default); false: it ends with ours. */
  detached?: boolean;
  /** An IPC channel (the child is a Node.js script that may `process.send`). */
  ipc?: boolean;
  /** Also called with all the output, as it comes. */
  echo?: (text: string) => void;
}

/** How long `stop` waits for the command to exit (well under a test runner's hook timeout). */
const STOP_WITHIN_MS = 60_000;

/** Output kept for waitFor and failure messages: the last megabyte. */
const KEPT_OUTPUT = 1 << 20;

/** A command with its output (stdout and stderr, interleaved) kept for matching and for reports. */
export class Command {
  readonly child: ChildProcess;
  /** The exit code, or the signal that ended it. */
  readonly exit: Promise<number | NodeJS.Signals>;
  private output = '';
  private closed = false;
  private readonly waiters = new Set<() => void>();
  private readonly detached: boolean;

  constructor(command: string, args: string[], options: CommandOptions) {
    this.detached = options.detached ?? true;
    this.child = spawn(command, args, {
      cwd: options.cwd,
      env: options.env,
      detached: this.detached,
      stdio: ['ignore', 'pipe', 'pipe', ...(options.ipc ? (['ipc'] as const) : [])],
    });
    const take = (chunk: Buffer) => {
      const text = chunk.toString('utf8');
      options.echo?.(text);
      this.output = (this.output + text).slice(-KEPT_OUTPUT);
      for (const waiter of this.waiters) waiter();
    };
    this.child.stdout!.on('data', take);
    this.child.stderr!.on('data', take);
    this.exit = new Promise((resolve) => this.child.once('close', (code, signal) => resolve(code ?? signal!)));
    void this.exit.then(() => {
      this.closed = true;
      for (const waiter of this.waiters) waiter();
    });
  }

  get text(): string {
    return this.output;
  }

  get ended(): boolean {
    return this.closed;
  }

  /** Ctrl-C in a terminal: SIGINT to the whole foreground process group. */
  interrupt(): void {
    process.kill(-this.child.pid!, 'SIGINT');
  }

  /**
   * Sends `signal` (to its whole group when it has one) unless it already ended; resolves with how it
   * ended. Not ended within `withinMs`: killed (SIGKILL), and rejects saying so with its last output,
   * rather than hang a teardown until the test runner's own timeout.
   */
  async stop(signal: NodeJS.Signals = 'SIGTERM', withinMs = STOP_WITHIN_MS): Promise<number | NodeJS.Signals> {
    if (this.child.exitCode === null && this.child.signalCode === null) this.signal(signal);
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), withinMs)));
    const ended = await Promise.race([this.exit, late]).finally(() => clearTimeout(timer));
    if (ended !== 'late') return ended;
    this.signal('SIGKILL');
    throw new Error(
      `${this.child.spawnfile} (pid ${this.child.pid}) had not exited ${withinMs / 1000} s after ${signal} and was killed; its last output:\n` +
        this.output.slice(-4000),
    );
  }

  private signal(signal: NodeJS.Signals): void {
    try {
      if (this.detached) process.kill(-this.child.pid!, signal);
      else this.child.kill(signal);
    } catch {
      // Gone in the meantime.
    }
  }

  /** Resolves with the first match in the output; rejects if the command ends without one. */
  waitFor(pattern: RegExp): Promise<RegExpMatchArray> {
    return new Promise((resolve, reject) => {
      const check = () => {
        const match = pattern.exec(this.output);
        if (match) {
          this.waiters.delete(check);
          resolve(match);
        } else if (this.closed) {
          this.waiters.delete(check);
          reject(new Error(`exited without printing ${pattern}:\n${this.output}`));
        }
      };
      this.waiters.add(check);
      check();
    });
  }
}
