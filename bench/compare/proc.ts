/**
 * What a broker process costs, read from Linux's /proc: CPU-seconds (utime + stime of
 * /proc/<pid>/stat, in clock ticks of 1/100 s on Linux) and resident memory (VmRSS of
 * /proc/<pid>/status). Both brokers are read the same way, so the figures compare.
 */
import { readFileSync } from 'node:fs';

/** USER_HZ: Linux reports utime/stime in 1/100 s on every architecture Node runs on. */
const CLOCK_TICKS_PER_SECOND = 100;

/** CPU-seconds the process has used so far (user + system, all threads). */
export function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // The command name (field 2) is in parentheses and may hold spaces: count fields after it.
  const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // rest[0] is field 3 (state); utime is field 14, stime field 15.
  const utime = Number(rest[11]);
  const stime = Number(rest[12]);
  return (utime + stime) / CLOCK_TICKS_PER_SECOND;
}

/** Resident set size in MiB. */
export function rssMiB(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const m = /^VmRSS:\s+(\d+) kB$/m.exec(status);
  return m === null ? 0 : Number(m[1]) / 1024;
}

/** Samples RSS every `everyMs` until stopped; returns the peak in MiB. */
export function rssPeakSampler(pid: number, everyMs = 200): { stop(): number } {
  let peak = rssMiB(pid);
  const timer = setInterval(() => {
    try {
      peak = Math.max(peak, rssMiB(pid));
    } catch {
      /* the process is gone; keep the last peak */
    }
  }, everyMs);
  return {
    stop(): number {
      clearInterval(timer);
      return peak;
    },
  };
}
