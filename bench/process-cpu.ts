import { readFileSync } from 'node:fs';

/** User + system CPU a process has used so far, in ms, from /proc/<pid>/stat (Linux). */
export function processCpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  // utime and stime are fields 14 and 15 of the file, in clock ticks (USER_HZ, 100 on Linux).
  return (Number(fields[11]) + Number(fields[12])) * 10;
}
