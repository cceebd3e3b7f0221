import { xxh32 } from '@node-rs/xxhash';
import { compressFrameSync } from 'lz4-napi';
import { compressSync as snappyRaw } from 'snappy';
import { describe, expect, it } from 'vitest';
import { Codec, compress, decompress, lz4DecodeJs } from '../../src/protocol/compression.js';
import { crc32c } from '../../src/protocol/crc32c.js';
import { crc32cJs } from '../helpers/crc32c-js.js';
import { DecodeError } from '../../src/protocol/decode-error.js';

const text = Buffer.from('The quick brown fox jumps over the lazy dog. '.repeat(3000));
const random = Buffer.from(Array.from({ length: 70_000 }, (_, i) => (i * 2654435761) >>> 24));

describe('codecs', () => {
  for (const [name, codec] of Object.entries(Codec)) {
    it(`${name} round-trips text, binary and empty input`, () => {
      for (const data of [text, random, Buffer.alloc(0)]) {
        const z = compress(codec, data);
        expect(decompress(codec, z).equals(data)).toBe(true);
      }
    });
  }

  it('writes snappy in the xerial framing the Java client uses, 32 KiB per block', () => {
    const z = compress(Codec.SNAPPY, text);
    expect(z.subarray(0, 8).toString('latin1')).toBe('\x82SNAPPY\0');
    expect([z.readInt32BE(8), z.readInt32BE(12)]).toEqual([1, 1]);
    let at = 16;
    let blocks = 0;
    while (at < z.length) {
      at += 4 + z.readInt32BE(at);
      blocks++;
    }
    expect(at).toBe(z.length);
    expect(blocks).toBe(Math.ceil(text.length / 32768));
  });

  it('reads raw snappy (librdkafka, platformatic) as well', () => {
    expect(decompress(Codec.SNAPPY, snappyRaw(text)).equals(text)).toBe(true);
    expect(decompress(Codec.SNAPPY, compress(Codec.SNAPPY, text, { snappyFraming: 'raw' })).equals(text)).toBe(true);
  });

  it('reads LZ4 frames with content size and checksums', () => {
    const z = compressFrameSync(text, { contentChecksum: true, blockChecksums: true });
    expect(decompress(Codec.LZ4, z).equals(text)).toBe(true);
  });

  it('reads the pre-0.10 Kafka LZ4 header checksum only when asked (magic 0)', () => {
    const z = Buffer.from(compress(Codec.LZ4, text));
    const descEnd = 6 + (z[4]! & 0x08 ? 8 : 0);
    z[descEnd] = (xxh32(z.subarray(0, descEnd), 0) >>> 8) & 0xff;
    expect(() => decompress(Codec.LZ4, z)).toThrow(DecodeError);
    expect(decompress(Codec.LZ4, z, { legacyKafkaLz4: true }).equals(text)).toBe(true);
  });

  it('bounds the decompressed size in every codec', () => {
    let x = 12345;
    const big = Buffer.from(Array.from({ length: 1 << 20 }, () => ((x = (x * 1103515245 + 12345) >>> 0), 97 + (x >>> 28))));
    for (const codec of [Codec.GZIP, Codec.SNAPPY, Codec.LZ4, Codec.ZSTD]) {
      const z = compress(codec, big);
      expect(decompress(codec, z, { maxSize: 1 << 20 }).length).toBe(1 << 20);
      expect(() => decompress(codec, z, { maxSize: (1 << 20) - 1 })).toThrow(DecodeError);
    }
  });

  it('decodes LZ4 frames whose headers do not bound the output with an exact limit (JS decoder)', () => {
    const zeros = compress(Codec.LZ4, Buffer.alloc(8 << 20));
    expect(decompress(Codec.LZ4, zeros).length).toBe(8 << 20);
    expect(() => decompress(Codec.LZ4, zeros, { maxSize: (8 << 20) - 1 })).toThrow(/exceeds/);
    for (const data of [text, random, Buffer.concat([text, random, text])]) {
      for (const opts of [{}, { contentChecksum: true, blockChecksums: true }]) {
        const z = compressFrameSync(data, opts);
        // A limit just at the size forces the JS path (the header bound is looser than that).
        expect(decompress(Codec.LZ4, z, { maxSize: data.length }).equals(data)).toBe(true);
        expect(lz4DecodeJs(z, data.length).equals(data)).toBe(true);
        if (data.length > 0) expect(() => lz4DecodeJs(z, data.length - 1)).toThrow(DecodeError);
      }
    }
  });

  it('rejects a raw snappy block claiming 4 GB before allocating', () => {
    const claim = Buffer.from([0xff, 0xff, 0xff, 0xff, 0x0f, 0x00]);
    expect(() => decompress(Codec.SNAPPY, claim)).toThrow(/exceeds/);
  });

  it('rejects a zstd frame claiming a huge content size without allocating it', () => {
    const z = Buffer.from(compress(Codec.ZSTD, Buffer.alloc(100, 1)));
    // A single-segment frame header with an 8-byte content size field claiming 2^40 bytes.
    const forged = Buffer.concat([z.subarray(0, 4), Buffer.from([0xe0]), Buffer.from([0, 0, 0, 0, 0, 1, 0, 0]), Buffer.from([1, 0, 0])]);
    const before = process.memoryUsage().arrayBuffers;
    expect(() => decompress(Codec.ZSTD, forged)).toThrow(DecodeError);
    expect(process.memoryUsage().arrayBuffers - before).toBeLessThan(64 << 20);
  });

  it('turns garbage into DecodeError for every codec', () => {
    for (const codec of [Codec.GZIP, Codec.SNAPPY, Codec.LZ4, Codec.ZSTD]) {
      for (const junk of [Buffer.from([1, 2, 3]), Buffer.alloc(0), compress(codec, text).subarray(0, 20)]) {
        if (codec === Codec.SNAPPY && junk.length === 0) continue; // raw snappy of nothing is not valid either way
        expect(() => decompress(codec, junk), `${codec} ${junk.toString('hex')}`).toThrow(DecodeError);
      }
    }
    expect(() => decompress(5, text)).toThrow(DecodeError);
  });
});

describe('crc32c', () => {
  it('matches the published check value and the JS implementation', () => {
    expect(crc32c(Buffer.from('123456789'))).toBe(0xe3069283);
    expect(crc32cJs(Buffer.from('123456789'))).toBe(0xe3069283);
    for (const len of [0, 1, 7, 8, 9, 63, 1000, 4097]) {
      const b = random.subarray(3, 3 + len);
      expect(crc32cJs(b)).toBe(crc32c(b));
    }
  });

  it('continues from an initial value', () => {
    const a = random.subarray(0, 1000);
    const b = random.subarray(1000, 2500);
    expect(crc32c(b, crc32c(a))).toBe(crc32c(random.subarray(0, 2500)));
    expect(crc32cJs(b, crc32cJs(a))).toBe(crc32c(random.subarray(0, 2500)));
  });
});
