/**
 * Prints the Markdown table of a JSON file written by `bench:compare` (--out), e.g. of a run that
 * was interrupted after some rounds (the JSON is written after every round):
 *
 *   node bench/run.mjs bench/compare/table.ts bench-compare-….json
 */
import { readFileSync } from 'node:fs';
import { Results, type Row } from './report.js';

const file = process.argv[2];
if (file === undefined) throw new Error('usage: table.ts FILE.json');
const { meta, rows } = JSON.parse(readFileSync(file, 'utf8')) as { meta: Record<string, unknown>; rows: Row[] };
const results = new Results();
for (const r of rows) {
  const spec = { name: r.name, unit: r.unit, peer: r.peer, higherIsBetter: r.higherIsBetter, durability: r.durability };
  r.fjord.forEach((v, i) => results.add(spec, 'fjord', v, r.fjordCpu[i], r.cpuUnit));
  r.peerValues.forEach((v, i) => results.add(spec, 'peer', v, r.peerCpu[i], r.cpuUnit));
}
const failures = (meta.failures as string[] | undefined) ?? [];
console.log(`${String(meta.date)}, ${Number(meta.minutes).toFixed(1)} min, rounds asked ${String(meta.rounds)}${failures.length > 0 ? `, failures: ${failures.join('; ')}` : ''}\n`);
console.log(results.table());
