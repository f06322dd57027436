import { readFile, readlink, realpath, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { EmbeddedStartError, USE_OWN_DATABASE } from './start-error.js';

/**
 * A custom setting on every postmaster's command line naming the process that started it: a
 * postmaster whose parent is no longer that process was left behind by a start that was killed.
 */
export const OWNER_SETTING = 'community_layer.owner';

/** A postmaster running on a data folder, and the process that started it (null: unknown). */
interface RunningPostmaster {
  pid: number;
  owner: number | null;
  /** false: its starter is gone (kill -9), so nothing will ever stop it. */
  ownerAlive: boolean;
}

/** How long a start waits for another start's PostgreSQL on the same folder to stop (it may be stopping). */
const OWNER_STOPPING_MS = 5_000;
/** How long, once that start has said it is stopping (STOPPING_FILE). */
const OWNER_SAID_STOPPING_MS = 60_000;
/** In the data folder while its starter stops: the starter's pid. */
const STOPPING_FILE = 'community-layer.stopping';

/** Says that this process, which started the postmaster on `pgdata`, is stopping: a start meanwhile waits longer. */
export async function announceStopping(pgdata: string): Promise<void> {
  await writeFile(path.join(pgdata, STOPPING_FILE), `${process.pid}\n`).catch(() => undefined);
}

export async function stoppedAnnouncement(pgdata: string): Promise<void> {
  await rm(path.join(pgdata, STOPPING_FILE), { force: true });
}

async function saidStopping(pgdata: string, owner: number | null): Promise<boolean> {
  const text = await readFile(path.join(pgdata, STOPPING_FILE), 'utf8').catch(() => '');
  return owner !== null && Number.parseInt(text, 10) === owner;
}
/** Fast shutdown (SIGINT) of a left-behind postmaster, then immediate shutdown (SIGQUIT). */
const FAST_STOP_MS = 60_000;
const IMMEDIATE_STOP_MS = 10_000;

/**
 * Before a start on `pgdata`: a postmaster left there by a killed start is stopped cleanly; one
 * whose start still runs (perhaps stopping: `npm start | head` followed by `npm start`) is waited
 * for a while, then refused. Linux only (/proc); elsewhere PostgreSQL's own lock file refuses.
 */
export async function settleLeftover(pgdata: string, log: (message: string) => void, signal?: AbortSignal): Promise<void> {
  const running = await runningPostmaster(pgdata);
  if (!running) return;
  if (running.ownerAlive) {
    const stopping = () => saidStopping(pgdata, running.owner);
    if (await exits(running.pid, pgdata, OWNER_STOPPING_MS, signal, stopping)) return;
    throw new EmbeddedStartError(
      `PostgreSQL did not start on the data folder ${pgdata}`,
      `its postmaster.pid names PostgreSQL ${running.pid}, still running there ${OWNER_STOPPING_MS / 1000} s later, started by process ${running.owner ?? '(unknown)'} which is still running and not stopping`,
      `Another PostgreSQL is probably running on that folder (another start of the service): stop it, or set EMBEDDED_PG_DIR to another folder. ${USE_OWN_DATABASE}`,
    );
  }
  log(`stopping PostgreSQL ${running.pid}, left running on ${pgdata} by a start that is gone`);
  process.kill(running.pid, 'SIGINT');
  if (await exits(running.pid, pgdata, FAST_STOP_MS)) return;
  process.kill(running.pid, 'SIGQUIT');
  if (await exits(running.pid, pgdata, IMMEDIATE_STOP_MS)) return;
  throw new EmbeddedStartError(
    `PostgreSQL ${running.pid}, left running on the data folder ${pgdata} by a start that is gone, did not stop`,
    `it was still running ${(FAST_STOP_MS + IMMEDIATE_STOP_MS) / 1000} s after SIGINT and SIGQUIT`,
    `Stop it by hand (kill -KILL ${running.pid}) and start again. ${USE_OWN_DATABASE}`,
  );
}

/** The postmaster that postmaster.pid names, when it is alive and runs in `pgdata` (PostgreSQL chdirs there). */
async function runningPostmaster(pgdata: string): Promise<RunningPostmaster | null> {
  const lock = await readFile(path.join(pgdata, 'postmaster.pid'), 'utf8').catch(() => '');
  const pid = Number.parseInt(lock.split('\n')[0] ?? '', 10);
  if (!(pid > 0)) return null;
  try {
    // A zombie or an exited process has no readable cwd.
    if ((await readlink(`/proc/${pid}/cwd`)) !== (await realpath(pgdata))) return null;
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which may hold spaces): state, ppid, …
    const parent = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    const args = (await readFile(`/proc/${pid}/cmdline`, 'utf8')).split('\0');
    const tag = args.map((arg) => new RegExp(`^${OWNER_SETTING.replace('.', '\\.')}=(\\d+)$`).exec(arg)).find(Boolean);
    const owner = tag ? Number(tag[1]) : null;
    // Without a tag (started by an older version): orphaned once init has adopted it.
    return { pid, owner, ownerAlive: owner === null ? parent !== 1 : parent === owner };
  } catch {
    return null;
  }
}

/** Whether postmaster `pid` exits within `withinMs` (or OWNER_SAID_STOPPING_MS, once `stopping` says so). */
async function exits(
  pid: number,
  pgdata: string,
  withinMs: number,
  signal?: AbortSignal,
  stopping?: () => Promise<boolean>,
): Promise<boolean> {
  const started = Date.now();
  while ((await runningPostmaster(pgdata))?.pid === pid) {
    signal?.throwIfAborted();
    const elapsed = Date.now() - started;
    if (elapsed > withinMs && !(elapsed <= OWNER_SAID_STOPPING_MS && (await stopping?.()))) return false;
    await delay(100);
  }
  return true;
}
