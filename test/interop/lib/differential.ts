/** Compares what a client observed against Apache Kafka with what it observed against Fjord. */
import { knownDifference } from '../known-differences.js';

export interface Difference {
  readonly path: string;
  readonly kafka: string;
  readonly fjord: string;
  /** Set when the difference is a listed, explained exception. */
  readonly accepted: string | null;
}

function show(v: unknown): string {
  return v === undefined ? '(absent)' : JSON.stringify(v);
}

function walk(a: unknown, b: unknown, path: string, out: { path: string; kafka: string; fjord: string }[]): void {
  if (Array.isArray(a) && Array.isArray(b)) {
    const n = Math.max(a.length, b.length);
    if (a.length !== b.length) out.push({ path: `${path}.length`.replace(/^\./, ''), kafka: String(a.length), fjord: String(b.length) });
    for (let i = 0; i < n && out.length < 200; i++) walk(a[i], b[i], `${path}.${i}`, out);
    return;
  }
  const isObj = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);
  if (isObj(a) && isObj(b)) {
    for (const k of new Set([...Object.keys(a), ...Object.keys(b)])) walk(a[k], b[k], `${path}.${k}`, out);
    return;
  }
  if (JSON.stringify(a) !== JSON.stringify(b)) out.push({ path: path.replace(/^\./, ''), kafka: show(a), fjord: show(b) });
}

export function diffObservations(id: string, kafka: unknown, fjord: unknown): Difference[] {
  const raw: { path: string; kafka: string; fjord: string }[] = [];
  walk(kafka, fjord, '', raw);
  return raw.map((d) => ({ ...d, accepted: knownDifference(id, d.path) }));
}

export function formatDiff(diffs: readonly Difference[]): string {
  return diffs
    .map((d) => `  ${d.accepted === null ? '!' : '~'} ${d.path}: kafka=${d.kafka} fjord=${d.fjord}${d.accepted === null ? '' : `  (accepted: ${d.accepted})`}`)
    .join('\n');
}
