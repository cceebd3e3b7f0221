// Writes random encodings of every message at every version (one JSON object per line) for
// CrossCheck.java, which parses them with Kafka's own generated classes and writes them back.
//   node bench/run.mjs test/protocol/codegen/java-cross-check/dump-samples.ts <out.jsonl> [perVersion]
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import fc from 'fast-check';
import { buildModel, kebab, loadSpecs } from '../../../../codegen/schema.mjs';
import { Writer } from '../../../../src/protocol/writer.js';
import { structArb } from '../arbitraries.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '../../../..');
const out = process.argv[2] ?? '/tmp/fjord-samples.jsonl';
const perVersion = Number(process.argv[3] ?? 20);
const lines: string[] = [];
for (const m of loadSpecs(join(root, 'messages')).map(buildModel)) {
  const mod = (await import(pathToFileURL(join(root, 'src/protocol/generated/messages', `${kebab(m.name)}.ts`)).href)) as Record<string, unknown>;
  const encode = mod[`encode${m.name}`] as (w: Writer, v: unknown, version: number) => void;
  for (let v = m.min; v <= m.max; v++) {
    for (const value of fc.sample(structArb(m.top, m, v), { numRuns: perVersion, seed: 42 + v })) {
      const w = new Writer();
      encode(w, value, v);
      lines.push(JSON.stringify({ name: m.name, kind: m.kind, version: v, hex: Buffer.from(w.toBuffer()).toString('hex') }));
    }
  }
}
writeFileSync(out, lines.join('\n') + '\n');
console.log(`${lines.length} samples → ${out}`);
