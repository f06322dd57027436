import { freePort } from '../../../src/util/free-port.js';
import { binary, type Binaries } from './binaries.js';
import { OWNER_SETTING, settleLeftover } from './leftover.js';
import { ProgramFailed, startPostgres, type PostgresServer } from './postgres-process.js';
import type { SystemUser } from './postgres-user.js';
import { EmbeddedStartError, USE_OWN_DATABASE, reason } from './start-error.js';

// The postmaster on a cluster's folder: on a free loopback port, and again on the same port after a pause.

const FLAGS = [
  // Who started it: a later start tells a postmaster left by a killed one (embedded/leftover.ts).
  '-c',
  `${OWNER_SETTING}=${process.pid}`,
  '-c',
  'listen_addresses=127.0.0.1',
  '-c',
  'unix_socket_directories=',
  // Readiness is read from the log, so its language is fixed.
  '-c',
  'lc_messages=C',
];

/** Starts PostgreSQL on `pgdata`, listening on `port` on loopback only. */
export function startOnPort(
  binaries: Binaries,
  pgdata: string,
  port: number,
  user: SystemUser | null,
  log: (message: string) => void,
): Promise<PostgresServer> {
  return startPostgres(binary(binaries, 'postgres'), ['-D', pgdata, '-p', String(port), ...FLAGS], { user, cwd: pgdata, log });
}

/** The port is free when picked but may be taken before PostgreSQL binds it: then another try. */
export async function startOnFreePort(
  binaries: Binaries,
  pgdata: string,
  user: SystemUser | null,
  log: (message: string) => void,
  signal?: AbortSignal,
  notice: (message: string) => void = log,
): Promise<{ server: PostgresServer; port: number }> {
  for (let attempt = 1; ; attempt++) {
    signal?.throwIfAborted();
    const port = await freePort();
    try {
      const server = await startOnPort(binaries, pgdata, port, user, log);
      return { server, port };
    } catch (error) {
      if (error instanceof ProgramFailed && /Address already in use/.test(error.message) && attempt < 3) continue;
      // Another start got there first (e.g. one still stopping): waited for, or refused, there.
      if (error instanceof ProgramFailed && /postmaster\.pid/.test(error.message) && attempt < 3) {
        await settleLeftover(pgdata, notice, signal);
        continue;
      }
      throw new EmbeddedStartError(
        `PostgreSQL did not start on the data folder ${pgdata}`,
        reason(error),
        /postmaster\.pid/.test(reason(error))
          ? `Another PostgreSQL is probably running on that folder (an earlier start that was killed): stop it, or set EMBEDDED_PG_DIR to another folder. ${USE_OWN_DATABASE}`
          : `Fix the cause above, or remove ${pgdata} to start with a new, empty cluster. ${USE_OWN_DATABASE}`,
      );
    }
  }
}
