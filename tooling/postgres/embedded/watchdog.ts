import { spawn } from 'node:child_process';
import type { SystemUser } from './postgres-user.js';

/** On its command line, so that a leftover test can find it (and only it). */
export const WATCHDOG_NAME = 'community-layer-postgres-watchdog';

/**
 * A PostgreSQL postmaster does not notice that the process which started it died (its backends do
 * notice the postmaster's death, nothing notices its parent's), and a process killed with -9 runs
 * no handler. A shell beside it reads from a pipe only this process writes to: when this process
 * dies, however it dies, the read ends and the shell asks the postmaster for a fast shutdown. It
 * runs as PostgreSQL's user, so that it can signal nothing else. Returns what ends the watchdog
 * (once the postmaster has exited, so that it never signals a reused pid).
 */
export function watchPostmaster(pid: number, user: SystemUser | null): () => void {
  const watchdog = spawn('/bin/sh', ['-c', 'read line; kill -INT "$1" 2>/dev/null', WATCHDOG_NAME, String(pid)], {
    detached: true,
    stdio: ['pipe', 'ignore', 'ignore'],
    // As PostgreSQL's user, which may not be able to enter this process' folder.
    cwd: '/',
    ...(user ? { uid: user.uid, gid: user.gid } : {}),
  });
  // No shell (a minimal system): no watchdog, and the next start recognises what a kill -9 left.
  watchdog.on('error', () => undefined);
  watchdog.stdin?.on('error', () => undefined);
  // Neither keeps this process alive.
  watchdog.unref();
  (watchdog.stdin as unknown as { unref?: () => void } | null)?.unref?.();
  return () => void watchdog.kill('SIGKILL');
}
