import { spawn, type ChildProcess } from 'node:child_process';
import type { SystemUser } from './postgres-user.js';
import { watchPostmaster } from './watchdog.js';

export interface ProcessOptions {
  /** As root: the user to run as. */
  user: SystemUser | null;
  cwd: string;
  log: (message: string) => void;
}

/** A PostgreSQL program's failure, with the end of what it printed. */
export class ProgramFailed extends Error {
  override name = 'ProgramFailed';
}

/**
 * Spawns a PostgreSQL program in a process group of its own, so that a Ctrl-C in the terminal
 * (SIGINT to the whole foreground group) reaches only the service, which then stops it in order.
 */
function spawnProgram(file: string, args: string[], options: ProcessOptions): { child: ChildProcess; output: () => string } {
  const child = spawn(file, args, {
    cwd: options.cwd,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    ...(options.user ? { uid: options.user.uid, gid: options.user.gid } : {}),
  });
  let tail = '';
  const keep = (chunk: Buffer) => {
    const text = chunk.toString('utf8');
    options.log(text);
    tail = (tail + text).slice(-2000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  return { child, output: () => tail.trim().split('\n').slice(-6).join(' ') };
}

function failure(file: string, error: Error | null, code: number | null, signal: string | null, output: string): ProgramFailed {
  const how = error ? error.message : signal ? `was stopped by ${signal}` : `exited with code ${code}`;
  return new ProgramFailed(`${file} ${how}${output ? `: ${output}` : ''}`);
}

/** Runs a program to completion (initdb). */
export function runProgram(file: string, args: string[], options: ProcessOptions): Promise<void> {
  return new Promise((resolve, reject) => {
    const { child, output } = spawnProgram(file, args, options);
    child.on('error', (error) => reject(failure(file, error, null, null, output())));
    child.on('close', (code, signal) => (code === 0 ? resolve() : reject(failure(file, null, code, signal, output()))));
  });
}

export interface PostgresServer {
  pid: number;
  /**
   * Fast shutdown (SIGINT): sessions are ended, a checkpoint written. Resolves once it exited; one
   * that has not within a minute gets an immediate shutdown (SIGQUIT), then SIGKILL: a stop is bounded.
   */
  stop(): Promise<void>;
}

const FAST_SHUTDOWN_MS = 60_000;
const IMMEDIATE_SHUTDOWN_MS = 10_000;

async function escalate(child: ChildProcess, exited: Promise<void>, log: (message: string) => void): Promise<void> {
  const steps = [
    ['SIGINT', FAST_SHUTDOWN_MS],
    ['SIGQUIT', IMMEDIATE_SHUTDOWN_MS],
    ['SIGKILL', 0],
  ] as const;
  for (const [signal, withinMs] of steps) {
    if (child.exitCode !== null || child.signalCode !== null) break;
    if (signal !== 'SIGINT') log(`postgres ${child.pid} did not stop within its time after the previous signal: sending ${signal}`);
    child.kill(signal);
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<'late'>((settle) => (timer = withinMs > 0 ? setTimeout(() => settle('late'), withinMs) : undefined));
    const outcome = await Promise.race(withinMs > 0 ? [exited, late] : [exited]).finally(() => clearTimeout(timer));
    if (outcome !== 'late') break;
  }
  await exited;
}

const READY = 'database system is ready to accept connections';

/** Starts the postmaster and resolves once it accepts connections. */
export function startPostgres(file: string, args: string[], options: ProcessOptions): Promise<PostgresServer> {
  return new Promise((resolve, reject) => {
    const { child, output } = spawnProgram(file, args, options);
    let ready = false;
    const exited = new Promise<void>((settle) => child.once('exit', () => settle()));
    if (child.pid) void exited.then(watchPostmaster(child.pid, options.user));
    // A last resort should the process exit without stop(): signals are sent synchronously. First
    // in line: a listener that throws (a logger flushing to a closed stdout) skips those after it.
    const onExit = () => child.kill('SIGINT');
    process.prependOnceListener('exit', onExit);
    void exited.then(() => process.removeListener('exit', onExit));
    child.on('error', (error) => {
      process.removeListener('exit', onExit);
      reject(failure(file, error, null, null, output()));
    });
    child.on('exit', (code, signal) => {
      if (!ready) reject(failure(file, null, code, signal, output()));
      else options.log(`postgres exited (code ${code}, signal ${signal})`);
    });
    let recent = '';
    const watch = (chunk: Buffer) => {
      // The line may be split across chunks, or followed by more lines in the same chunk: search
      // the whole chunk plus the tail of the previous one, then keep only that tail.
      const text = recent + chunk.toString('utf8');
      recent = text.slice(-READY.length);
      if (!text.includes(READY)) return;
      ready = true;
      child.stderr?.off('data', watch);
      let stopping: Promise<void> | null = null;
      resolve({
        pid: child.pid!,
        stop: () => (stopping ??= escalate(child, exited, options.log)),
      });
    };
    child.stderr?.on('data', watch);
  });
}
