import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

/** Linux's USER_HZ: /proc reports CPU times in these ticks. */
const TICKS_PER_SECOND = 100;

/**
 * CPU seconds the PostgreSQL cluster in `pgdata` has used so far (Linux /proc): the postmaster, its
 * live children (backends, walwriter, autovacuum…) and the children it already reaped. Deltas of it
 * across a load run are the database's share of the two cores, whatever the clients measured.
 */
export function databaseCpuSeconds(pgdata: string): number {
  const postmaster = Number(readFileSync(path.join(pgdata, 'postmaster.pid'), 'utf8').split('\n')[0]);
  let ticks = 0;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const fields = procStat(entry);
    if (!fields) continue;
    const [ppid, utime, stime, cutime, cstime] = [fields[1], fields[11], fields[12], fields[13], fields[14]].map(Number) as [number, number, number, number, number];
    // The postmaster counts its reaped children (cutime, cstime); a live child only itself.
    if (Number(entry) === postmaster) ticks += utime + stime + cutime + cstime;
    else if (ppid === postmaster) ticks += utime + stime;
  }
  return ticks / TICKS_PER_SECOND;
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
