// Encodings that Kafka 4.4.0's own generated Java classes parsed completely and wrote back
// byte for byte (see java-cross-check/README.md): one per message version, the largest sample.
// Our codecs must read each one completely and write the same bytes again.
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { kebab } from '../../../codegen/schema.mjs';
import { Reader } from '../../../src/protocol/reader.js';
import { Writer } from '../../../src/protocol/writer.js';

interface Sample {
  name: string;
  version: number;
  hex: string;
}

const here = dirname(fileURLToPath(import.meta.url));
const samples = readFileSync(join(here, 'fixtures/java-verified.jsonl'), 'utf8')
  .split('\n')
  .filter((l) => l.length > 0)
  .map((l) => JSON.parse(l) as Sample);
const byName = new Map<string, Sample[]>();
for (const s of samples) byName.set(s.name, [...(byName.get(s.name) ?? []), s]);

describe('encodings verified by Kafka 4.4.0 Java classes', () => {
  it('cover most messages', () => {
    expect(byName.size).toBeGreaterThan(250);
  });

  for (const [name, list] of byName) {
    it(`${name} v${list.map((s) => s.version).join(',')}`, async () => {
      const mod = (await import(`../../../src/protocol/generated/messages/${kebab(name)}.ts`)) as Record<string, unknown>;
      const decode = mod[`decode${name}`] as (r: Reader, v: number) => unknown;
      const encode = mod[`encode${name}`] as (w: Writer, m: unknown, v: number) => void;
      for (const s of list) {
        const bytes = Buffer.from(s.hex, 'hex');
        const r = new Reader(bytes);
        const m = decode(r, s.version);
        expect(r.remaining, `v${s.version}`).toBe(0);
        const w = new Writer();
        encode(w, m, s.version);
        expect(Buffer.from(w.toBuffer()).toString('hex'), `v${s.version}`).toBe(s.hex);
      }
    });
  }
});
