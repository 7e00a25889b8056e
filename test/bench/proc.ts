/** What the benchmarks read of other processes from /proc (Linux). */
import { readFileSync } from 'node:fs';

/** CPU seconds (user + system) the process has used so far (at the kernel's 100 ticks a second). */
export function cpuSecondsOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Fields after the command name (which may hold spaces): utime and stime are the 12th and 13th.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/**
 * CPU seconds (user + system) of this process's children that have ended and been waited for
 * (the kernel adds each one's, its threads' included, when it is reaped): the difference
 * around one command run to its end is that command's CPU, when no other child ends meanwhile.
 */
export function endedChildrenCpuSeconds(): number {
  const stat = readFileSync('/proc/self/stat', 'utf8');
  // cutime and cstime are the 16th and 17th fields.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[13]) + Number(fields[14])) / 100;
}
