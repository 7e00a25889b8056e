/** What the benchmarks read of other processes from /proc (Linux). */
import { readFileSync } from 'node:fs';

/** CPU seconds (user + system) the process has used so far (at the kernel's 100 ticks a second). */
export function cpuSecondsOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Fields after the command name (which may hold spaces): utime and stime are the 12th and 13th.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}
