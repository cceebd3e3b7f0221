import { describe, expect, it } from 'vitest';
import { Codec } from '../../src/protocol/compression.js';
import { DecodeError } from '../../src/protocol/decode-error.js';
import { buildLegacyMessageSet, decodeLegacyMessageSet } from '../../src/protocol/legacy-message-set.js';
import { iterateBatches } from '../../src/protocol/record-batch.js';

const msgs = Array.from({ length: 5 }, (_, i) => ({
  key: i === 2 ? null : Buffer.from(`k${i}`),
  value: i === 3 ? null : Buffer.from(`value number ${i} `.repeat(4)),
  timestamp: 1_600_000_000_000 + i,
}));

describe('legacy message sets', () => {
  for (const magic of [0, 1] as const) {
    for (const [name, codec] of Object.entries(Codec)) {
      it(`decodes magic ${magic} ${name}`, () => {
        const buf = buildLegacyMessageSet({ magic, baseOffset: 100, compression: codec, messages: msgs });
        const { records, partialTail } = decodeLegacyMessageSet(buf);
        expect(partialTail).toBe(false);
        expect(records.map((r) => r.offset)).toEqual([100, 101, 102, 103, 104]);
        expect(records.map((r) => r.key)).toEqual(msgs.map((m) => m.key));
        expect(records.map((r) => r.value)).toEqual(msgs.map((m) => m.value));
        expect(records.every((r) => r.crcValid && r.magic === magic)).toBe(true);
        expect(records.map((r) => r.timestamp)).toEqual(magic === 1 ? msgs.map((m) => m.timestamp) : [-1, -1, -1, -1, -1]);
      });
    }
  }

  it('flags a bad CRC, stops at a partial tail, and walks as batches by size', () => {
    const buf = buildLegacyMessageSet({ magic: 1, messages: msgs });
    const bad = Buffer.from(buf);
    bad[bad.length - 1]! ^= 1;
    expect(decodeLegacyMessageSet(bad).records.at(-1)!.crcValid).toBe(false);
    const cut = decodeLegacyMessageSet(buf, 0, buf.length - 3);
    expect(cut.partialTail).toBe(true);
    expect(cut.records.length).toBe(4);
    expect([...iterateBatches(buf)].map((v) => v.magic)).toEqual([1, 1, 1, 1, 1]);
  });

  it('throws DecodeError on malformed entries', () => {
    const buf = buildLegacyMessageSet({ magic: 1, compression: Codec.GZIP, messages: msgs });
    const b = Buffer.from(buf);
    b.writeInt32BE(5, 8);
    expect(() => decodeLegacyMessageSet(b)).toThrow(DecodeError);
    const c = Buffer.from(buf);
    c[c.length - 5]! ^= 0xff; // inside the gzip stream
    expect(() => decodeLegacyMessageSet(c)).toThrow(DecodeError);
  });
});
