/**
 * The top self-time functions of a `.cpuprofile` (what `node --cpu-prof` and the `--cpu-prof`
 * option of ../mirror-latency.ts write), over the mirror's busy window only: from the first to
 * the last sample with the fetcher's batch walk, the mirror append or a client read on the stack,
 * so the node's start-up and shutdown do not crowd the list. Idle time is left out; percentages
 * are of the busy samples in the window.
 *
 *   node bench/run.mjs bench/compare/profile-top.ts <file.cpuprofile> [top 30] [fromUs toUs]
 *
 * Given a window in µs of the monotonic clock (./scale.ts prints its stop's as stopWindowUs), the
 * samples in that window are read instead.
 */
import { readFileSync } from 'node:fs';

interface ProfileNode {
  readonly id: number;
  readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number };
  readonly children?: readonly number[];
}
interface Profile {
  readonly nodes: readonly ProfileNode[];
  readonly startTime: number;
  readonly samples: readonly number[];
  readonly timeDeltas: readonly number[];
}

/** Functions whose presence on the stack marks a sample as the mirror's work. */
const MIRROR_WORK = new Set(['walkFetchedBatches', 'mirrorAppend', 'onRead', 'onData']);

const [file, topArg, fromArg, toArg] = process.argv.slice(2);
if (file === undefined) throw new Error('usage: profile-top.ts <file.cpuprofile> [top]');
const top = Number(topArg ?? 30);
const p = JSON.parse(readFileSync(file, 'utf8')) as Profile;
const byId = new Map(p.nodes.map((n) => [n.id, n]));
const parent = new Map<number, number>();
for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);

/** Whether a node's stack holds one of MIRROR_WORK. */
const marked = new Set<number>();
for (const n of p.nodes) {
  for (let cur: number | undefined = n.id; cur !== undefined; cur = parent.get(cur)) {
    if (MIRROR_WORK.has(byId.get(cur)?.callFrame.functionName ?? '')) {
      marked.add(n.id);
      break;
    }
  }
}
const at: number[] = [];
let t = p.startTime;
for (const d of p.timeDeltas) at.push((t += d));
let lo = -1;
let hi = -1;
p.samples.forEach((id, i) => {
  if (!marked.has(id)) return;
  if (lo < 0) lo = i;
  hi = i;
});
if (fromArg !== undefined && toArg !== undefined) {
  lo = at.findIndex((us) => us >= Number(fromArg));
  hi = at.length - 1;
  while (hi >= 0 && (at[hi] ?? 0) > Number(toArg)) hi--;
}
if (lo < 0) throw new Error(`${file}: no sample of the mirror's work`);

const self = new Map<string, number>();
let busy = 0;
for (let i = lo; i <= hi; i++) {
  const cf = byId.get(p.samples[i] ?? -1)?.callFrame;
  if (cf === undefined || cf.functionName === '(idle)') continue;
  const us = (at[i + 1] ?? at[i] ?? 0) - (at[i] ?? 0);
  const where = cf.url === '' ? '' : ` ${cf.url.replace(/^.*\/(dist|node_modules)\//, '$1/')}:${cf.lineNumber + 1}`;
  const key = `${cf.functionName === '' ? '(anonymous)' : cf.functionName}${where}`;
  self.set(key, (self.get(key) ?? 0) + us);
  busy += us;
}
console.log(`window ${(((at[hi] ?? 0) - (at[lo] ?? 0)) / 1e6).toFixed(2)} s, busy ${(busy / 1e6).toFixed(2)} s`);
console.log('| self ms | % of busy | function |\n|---|---|---|');
for (const [key, us] of [...self].sort((a, b) => b[1] - a[1]).slice(0, top)) {
  console.log(`| ${(us / 1e3).toFixed(0)} | ${((100 * us) / busy).toFixed(1)} | ${key} |`);
}
