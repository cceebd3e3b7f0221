/**
 * Touches most of the machine's free memory once, in a child process that then exits, before
 * the mirror rows.
 *
 * Why: on a virtual machine whose host backs guest memory lazily, the first write to a guest
 * page that was never used (or was handed back to the host) costs a host page fault. On the
 * machine of BENCHMARKS.md that made first-touch memory about 5× slower to fill than memory
 * already used once (0.46 against 2.3 GB/s), and a copy writes its destination's page cache into
 * whichever pages the kernel hands out: a copy that got fresh pages ran at half the speed of the
 * same copy on used ones, and the raw pipe's own speed varied 2–4× between runs. Touching the
 * free memory first makes every page the copies get one the host already backs, as on a physical
 * machine, so the rows compare the programs and not the order in which they met fresh memory.
 *
 * The chunks are all held until the last is filled (freeing each at once would let the kernel
 * hand the same pages to the next), and the child exits, giving them back to the kernel.
 */
import { readFileSync } from 'node:fs';
import { run } from '../../test/interop/lib/run.js';

/** Memory left untouched: the brokers and the page cache of the preloaded topics need it. */
const MARGIN_GIB = 4;
/** The largest Buffer Node allocates in one piece is 4 GiB; chunks stay well below it. */
const CHUNK_BYTES = 2 ** 31;

export interface WarmUp {
  readonly gib: number;
  readonly seconds: number;
  /** GB/s at which the child filled the memory: about 2 for used memory, far less for fresh. */
  readonly gbPerSec: number;
}

/** MemAvailable of /proc/meminfo in GiB, 0 when it cannot be read. */
export function availableGiB(): number {
  try {
    const m = /^MemAvailable:\s+(\d+) kB$/m.exec(readFileSync('/proc/meminfo', 'utf8'));
    return m === null ? 0 : Number(m[1]) / 2 ** 20;
  } catch {
    return 0;
  }
}

/** How much `--warm-memory-gib` asks for: a number, or `auto` = what is available less the margin. */
export function warmTarget(flag: string): number {
  const most = Math.max(0, Math.floor(availableGiB() - MARGIN_GIB));
  if (flag === 'auto') return most;
  const n = Number(flag);
  if (!Number.isFinite(n) || n < 0) throw new Error(`--warm-memory-gib takes a number of GiB or auto, not ${flag}`);
  return Math.min(n, most);
}

/** Fills `gib` GiB in a child process; returns how long it took. */
export async function warmMemory(gib: number): Promise<WarmUp> {
  if (gib <= 0) return { gib: 0, seconds: 0, gbPerSec: 0 };
  const code = [
    `const total = ${Math.round(gib * 2 ** 30)}, chunk = ${CHUNK_BYTES}, held = [];`,
    'for (let left = total; left > 0; left -= chunk) { const b = Buffer.allocUnsafeSlow(Math.min(chunk, left)); b.fill(1); held.push(b); }',
    'process.stdout.write(String(held.length));',
  ].join('\n');
  const started = Date.now();
  const r = await run(process.execPath, ['-e', code], { timeoutMs: 10 * 60_000 });
  if (r.code !== 0) throw new Error(`warming ${gib} GiB of memory failed (exit ${r.code}): ${r.stderr.slice(-500)}`);
  const seconds = (Date.now() - started) / 1000;
  return { gib, seconds, gbPerSec: (gib * 2 ** 30) / 1e9 / Math.max(seconds, 0.001) };
}
