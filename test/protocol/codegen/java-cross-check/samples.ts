// Random encodings of every message at every version, one JSON object per line, for
// CrossCheck.java: it parses each with Kafka's own generated class and writes it back.
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import fc from 'fast-check';
import { buildModel, kebab, loadSpecs } from '../../../../codegen/schema.mjs';
import { Writer } from '../../../../src/protocol/writer.js';
import { structArb } from '../arbitraries.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '../../../..');

/** `perVersion` values (the property tests' arbitraries, unknown tags included) per message version. */
export async function crossCheckSamples(perVersion: number): Promise<string[]> {
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
  return lines;
}
