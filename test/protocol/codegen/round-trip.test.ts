import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { buildModel, kebab, loadSpecs } from '../../../codegen/schema.mjs';
import { DecodeError } from '../../../src/protocol/decode-error.js';
import { Reader } from '../../../src/protocol/reader.js';
import { Writer } from '../../../src/protocol/writer.js';
import { structArb } from './arbitraries.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '../../..');
const models = loadSpecs(join(root, 'messages')).map(buildModel);

type Codec = {
  decode: (r: Reader, v: number) => unknown;
  encode: (w: Writer, m: unknown, v: number) => void;
};

async function codecFor(name: string): Promise<Codec> {
  const mod = (await import(`../../../src/protocol/generated/messages/${kebab(name)}.ts`)) as Record<string, unknown>;
  return { decode: mod[`decode${name}`] as Codec['decode'], encode: mod[`encode${name}`] as Codec['encode'] };
}

function encode(codec: Codec, value: unknown, version: number): Buffer {
  const w = new Writer(256);
  codec.encode(w, value, version);
  return Buffer.from(w.toBuffer());
}

// Every message at every valid version: decode(encode(x)) equals x and re-encodes to the same bytes.
const RUNS = Number(process.env.FJORD_ROUNDTRIP_RUNS ?? 25);

describe('generated codecs round-trip', () => {
  for (const m of models) {
    it(`${m.name} v${m.min}-${m.max}`, async () => {
      const codec = await codecFor(m.name);
      for (let v = m.min; v <= m.max; v++) {
        fc.assert(
          fc.property(structArb(m.top, m, v), (value) => {
            const bytes = encode(codec, value, v);
            const r = new Reader(bytes);
            const back = codec.decode(r, v);
            expect(r.remaining).toBe(0);
            expect(back).toEqual(value);
            expect(encode(codec, back, v).equals(bytes)).toBe(true);
          }),
          { numRuns: RUNS },
        );
        // corrupted input: decoding either succeeds or throws DecodeError, nothing else
        fc.assert(
          fc.property(structArb(m.top, m, v), fc.nat(), fc.integer({ min: 0, max: 255 }), (value, at, byte) => {
            const bytes = encode(codec, value, v);
            if (bytes.length === 0) return;
            const bad = Buffer.from(bytes);
            bad[at % bad.length] = byte;
            for (const input of [bad, bytes.subarray(0, at % bytes.length)]) {
              try {
                codec.decode(new Reader(input), v);
              } catch (err) {
                expect(err).toBeInstanceOf(DecodeError);
              }
            }
          }),
          { numRuns: RUNS },
        );
      }
    });
  }
});
