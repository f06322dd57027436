import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

/** Linux's USER_HZ: /proc reports CPU times in these ticks. */
const TICKS_PER_SECOND = 100;

/** A client backend's title: "postgres: <user> <database> <host>(<port>) <state>". */
const CLIENT_BACKEND = /^postgres: \S+ \S+ [\d.:a-f[\]]+\(\d+\)/;

export interface DatabaseCpu {
  /** Live client backends: the sessions serving queries. */
  clients: number;
  /** The whole cluster: also the checkpointer, WAL writer, autovacuum and exited sessions. */
  total: number;
}

/**
 * CPU seconds the PostgreSQL cluster in `pgdata` has used so far (Linux /proc). Deltas across a
 * load run are the database's share of the cores; `clients` leaves out background work, which
 * may be catching up on what an earlier run wrote.
 */
export function databaseCpuSeconds(pgdata: string): DatabaseCpu {
  const postmaster = Number(readFileSync(path.join(pgdata, 'postmaster.pid'), 'utf8').split('\n')[0]);
  let clients = 0;
  let total = 0;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const fields = procStat(entry);
    if (!fields) continue;
    const [ppid, utime, stime, cutime, cstime] = [fields[1], fields[11], fields[12], fields[13], fields[14]].map(Number) as [
      number,
      number,
      number,
      number,
      number,
    ];
    // The postmaster counts its reaped children (cutime, cstime); a live child only itself.
    if (Number(entry) === postmaster) total += utime + stime + cutime + cstime;
    else if (ppid === postmaster) {
      total += utime + stime;
      if (CLIENT_BACKEND.test(title(entry))) clients += utime + stime;
    }
  }
  return { clients: clients / TICKS_PER_SECOND, total: total / TICKS_PER_SECOND };
}

/** The fields of /proc/<pid>/stat after the command name, from "state" (index 0) on; null if it exited. */
function procStat(pid: string): string[] | null {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return text.slice(text.lastIndexOf(')') + 2).split(' ');
  } catch {
    return null;
  }
}

function title(pid: string): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
  } catch {
    return '';
  }
}
