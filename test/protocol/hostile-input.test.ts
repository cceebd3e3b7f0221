import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { Codec } from '../../src/protocol/compression.js';
import { DecodeError } from '../../src/protocol/decode-error.js';
import { FrameDecoder } from '../../src/protocol/frame-decoder.js';
import { API_TABLE } from '../../src/protocol/generated/api-table.js';
import { decodeRequestHeader, encodeRequestHeader } from '../../src/protocol/generated/messages/request-header.js';
import { buildLegacyMessageSet } from '../helpers/legacy-message-set.js';
import { Reader } from '../../src/protocol/reader.js';
import { checkBatchHeader, iterateBatches, validateProduceRecords } from '../../src/protocol/record-batch.js';
import { buildRecordBatch, decodeRecords } from '../../src/protocol/records.js';
import { Writer } from '../../src/protocol/writer.js';

/**
 * Hostile input: random and mutated bytes through every decoding entry point a peer can reach.
 * The contract: only DecodeError comes out (or an error code is returned), nothing hangs, and no
 * length field is trusted before it is checked against the bytes present. A seeded PRNG makes
 * any failure reproducible (the seed is in the test name).
 */
const SEED = Number(process.env['FJORD_FUZZ_SEED'] ?? 0x5eed1279);

function rng(seed: number): () => number {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13;
    s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5;
    s >>>= 0;
    return s / 0x100000000;
  };
}

type Decode = (r: Reader, v: number) => unknown;
interface RequestCodec {
  readonly apiKey: number;
  readonly name: string;
  readonly min: number;
  readonly max: number;
  readonly decode: Decode;
  readonly encode: (w: Writer, m: object, v: number) => void;
}

const MESSAGES = fileURLToPath(new URL('../../src/protocol/generated/messages/', import.meta.url));
const CAPTURED = fileURLToPath(new URL('../fixtures/captured/', import.meta.url));

async function loadRequestCodecs(): Promise<RequestCodec[]> {
  const out: RequestCodec[] = [];
  for (const file of readdirSync(MESSAGES).filter((f) => f.endsWith('-request.ts') && f !== 'request-header.ts')) {
    const mod = (await import(`${MESSAGES}${file}`)) as Record<string, unknown>;
    const apiKeyName = Object.keys(mod).find((k) => k.endsWith('RequestApiKey'));
    if (apiKeyName === undefined) continue;
    const base = apiKeyName.slice(0, -'ApiKey'.length);
    const versions = mod[`${base}Versions`] as { min: number; max: number };
    out.push({
      apiKey: mod[apiKeyName] as number,
      name: base,
      min: versions.min,
      max: versions.max,
      decode: mod[`decode${base}`] as Decode,
      encode: mod[`encode${base}`] as RequestCodec['encode'],
    });
  }
  return out;
}

/** Runs `f`; passes when it returns or throws DecodeError. Anything else is recorded. */
function expectOnlyDecodeError(f: () => void, what: () => string, failures: string[]): 'ok' | 'rejected' | 'failed' {
  try {
    f();
    return 'ok';
  } catch (e) {
    if (e instanceof DecodeError) return 'rejected';
    failures.push(`${what()}: ${(e as Error).name}: ${(e as Error).message}`);
    return 'failed';
  }
}

function mutate(src: Buffer, rand: () => number): Buffer {
  const b = Buffer.from(src);
  const pick = (n: number): number => Math.floor(rand() * n);
  switch (pick(7)) {
    case 0: {
      const flips = 1 + pick(4);
      for (let i = 0; i < flips && b.length > 0; i++) b[pick(b.length)]! ^= 1 << pick(8);
      return b;
    }
    case 1:
      return b.subarray(0, pick(b.length + 1));
    case 2: {
      // length/count field corruption: an aligned int32 or int16 set to an extreme.
      if (b.length < 4) return b;
      const at = pick(b.length - 3);
      const v = [0x7fffffff, -1, -2, 0x80000000 | 0, 0x10000, pick(0x7fffffff)][pick(6)]!;
      if (rand() < 0.5) b.writeInt32BE(v, at);
      else b.writeInt16BE(((v >> 16) << 16) >> 16 || -1, at);
      return b;
    }
    case 3: {
      // huge varint count (compact arrays, tagged fields, record lengths)
      if (b.length < 5) return b;
      const at = pick(b.length - 4);
      b.set([0xff, 0xff, 0xff, 0xff, 0x0f], at);
      return b;
    }
    case 4: {
      const at = pick(b.length + 1);
      const junk = Buffer.from(Array.from({ length: 1 + pick(16) }, () => pick(256)));
      return Buffer.concat([b.subarray(0, at), junk, b.subarray(at)]);
    }
    case 5: {
      const at = pick(b.length + 1);
      return Buffer.concat([b.subarray(0, at), b.subarray(Math.min(b.length, at + 1 + pick(8)))]);
    }
    default: {
      for (let i = 0; i < b.length; i++) if (rand() < 0.05) b[i] = pick(256);
      return b;
    }
  }
}

function randomBytes(rand: () => number, max: number): Buffer {
  const n = Math.floor(rand() * max);
  const b = Buffer.allocUnsafe(n);
  for (let i = 0; i < n; i++) b[i] = Math.floor(rand() * 256);
  return b;
}

/** Decodes a whole request frame the way the broker does: header (version from the table), then body. */
let unsupported = 0;
function decodeFrame(frame: Buffer, codecs: Map<number, RequestCodec>): void {
  if (frame.length < 4) throw new DecodeError('frame shorter than api key and version');
  const apiKey = frame.readInt16BE(0);
  const version = frame.readInt16BE(2);
  const api = API_TABLE[apiKey];
  const codec = codecs.get(apiKey);
  if (api === undefined || codec === undefined || version < codec.min || version > codec.max) {
    unsupported++; // the broker answers UNSUPPORTED_VERSION or closes
    return;
  }
  const r = new Reader(frame);
  decodeRequestHeader(r, api.requestHeaderVersion(version));
  codec.decode(r, version);
}

describe(`hostile input (seed ${SEED.toString(16)})`, async () => {
  const codecs = await loadRequestCodecs();
  const byKey = new Map(codecs.map((c) => [c.apiKey, c]));

  /** A valid frame per (api, version): defaults from the generated encoders, plus the captured frames. */
  const seeds: Buffer[] = [];
  for (const c of codecs) {
    const api = API_TABLE[c.apiKey];
    if (api === undefined) continue;
    for (let v = c.min; v <= c.max; v++) {
      const w = new Writer();
      encodeRequestHeader(w, { requestApiKey: c.apiKey, requestApiVersion: v, correlationId: 7, clientId: 'fuzz' }, api.requestHeaderVersion(v));
      c.encode(w, {}, v);
      seeds.push(w.toBuffer());
    }
  }
  for (const client of readdirSync(CAPTURED, { withFileTypes: true }).filter((d) => d.isDirectory())) {
    for (const f of readdirSync(`${CAPTURED}${client.name}`).filter((n) => n.endsWith('.bin'))) {
      seeds.push(readFileSync(`${CAPTURED}${client.name}/${f}`));
    }
  }

  it('has a decoder for every request API in the table', () => {
    expect(codecs.length).toBeGreaterThan(60);
    expect(seeds.length).toBeGreaterThan(300);
    for (const s of seeds) decodeFrame(s, byKey); // the unmutated seeds decode
  });

  it('60,000 mutated request frames: header + body decode throw only DecodeError', () => {
    const rand = rng(SEED);
    const failures: string[] = [];
    const outcomes = { ok: 0, rejected: 0, failed: 0 };
    unsupported = 0;
    for (let i = 0; i < 60_000; i++) {
      const m = mutate(seeds[i % seeds.length]!, rand);
      outcomes[expectOnlyDecodeError(() => decodeFrame(m, byKey), () => `mutation ${i} of seed ${i % seeds.length}: ${m.subarray(0, 48).toString('hex')}`, failures)]++;
    }
    expect(failures.slice(0, 10)).toEqual([]);
    // The mutations reach the decoders and are mostly caught there, not skipped as unknown APIs.
    expect(outcomes.rejected).toBeGreaterThan(20_000);
    expect(unsupported).toBeLessThan(15_000);
  });

  it('random bodies through every request decoder at every version (≥ 20,000)', () => {
    const rand = rng(SEED + 1);
    const failures: string[] = [];
    let n = 0;
    for (const c of codecs) {
      for (let v = c.min; v <= c.max; v++) {
        for (let i = 0; i < 40; i++, n++) {
          const body = randomBytes(rand, 64);
          expectOnlyDecodeError(() => c.decode(new Reader(body), v), () => `${c.name} v${v} ${body.toString('hex')}`, failures);
        }
      }
    }
    while (n < 20_000) {
      const c = codecs[n % codecs.length]!;
      const body = randomBytes(rand, 200);
      expectOnlyDecodeError(() => c.decode(new Reader(body), c.max), () => `${c.name} v${c.max} ${body.toString('hex')}`, failures);
      n++;
    }
    expect(failures.slice(0, 10)).toEqual([]);
  });

  it('10,000 random streams through the frame decoder', () => {
    const rand = rng(SEED + 2);
    const failures: string[] = [];
    let frames = 0;
    for (let i = 0; i < 10_000; i++) {
      const parts: Buffer[] = [];
      for (let k = 0; k < 3; k++) {
        const seed = seeds[Math.floor(rand() * seeds.length)]!;
        const size = Buffer.allocUnsafe(4);
        size.writeInt32BE(seed.length, 0);
        parts.push(size, seed);
      }
      const stream = mutate(Buffer.concat(parts), rand);
      const d = new FrameDecoder(1 << 20);
      expectOnlyDecodeError(
        () => {
          for (let at = 0; at < stream.length; ) {
            const step = 1 + Math.floor(rand() * 64);
            for (const f of d.push(stream.subarray(at, at + step))) {
              frames++;
              expectOnlyDecodeError(() => decodeFrame(f, byKey), () => `frame of stream ${i}`, failures);
            }
            at += step;
          }
        },
        () => `stream ${i}`,
        failures,
      );
    }
    expect(failures.slice(0, 10)).toEqual([]);
    expect(frames).toBeGreaterThan(10_000);
  });

  it('20,000 mutated record batches: iteration, header checks and record decoding, legacy message sets among them', () => {
    const rand = rng(SEED + 3);
    const batches: Buffer[] = [];
    for (const codec of Object.values(Codec)) {
      batches.push(
        buildRecordBatch({
          compression: codec,
          producerId: 5,
          producerEpoch: 1,
          baseSequence: 0,
          records: Array.from({ length: 6 }, (_, i) => ({ key: Buffer.from(`k${i}`), value: Buffer.alloc(30 + i, i), headers: [{ key: 'h', value: Buffer.from('v') }] })),
        }),
      );
      for (const magic of [0, 1] as const) {
        batches.push(buildLegacyMessageSet({ magic, compression: codec, messages: [{ value: Buffer.from('legacy') }, { key: Buffer.from('k'), value: null }] }));
      }
    }
    const failures: string[] = [];
    let rejected = 0;
    for (let i = 0; i < 20_000; i++) {
      const src = batches[i % batches.length]!;
      const m = rand() < 0.1 ? Buffer.concat([mutate(src, rand), mutate(src, rand)]) : mutate(src, rand);
      const what = (): string => `batch mutation ${i}: ${m.toString('hex').slice(0, 200)}`;
      // Produce validation must never throw: it returns an error code.
      try {
        validateProduceRecords(m, { apiVersion: 9 });
      } catch (e) {
        failures.push(`${what()}: validateProduceRecords threw ${(e as Error).message}`);
      }
      const outcome = expectOnlyDecodeError(
        () => {
          for (const view of iterateBatches(m)) {
            if (view.magic === 2) {
              const check = checkBatchHeader(view);
              view.isValid();
              decodeRecords(view, { maxDecompressedSize: 1 << 20 });
              expect(typeof check.errorCode).toBe('number');
            }
          }
        },
        what,
        failures,
      );
      if (outcome === 'rejected') rejected++;
    }
    expect(failures.slice(0, 10)).toEqual([]);
    expect(rejected).toBeGreaterThan(2_000);
  });

  it('a frame claiming a 2 GB array, or 2^32 compact elements, fails fast without allocating', () => {
    const before = process.memoryUsage();
    const t0 = performance.now();
    // Metadata v4 (classic): topics array length 0x7fffffff, then nothing.
    const classic = new Writer();
    encodeRequestHeader(classic, { requestApiKey: 3, requestApiVersion: 4, correlationId: 1, clientId: 'x' }, 1);
    classic.int32(0x7fffffff);
    expect(() => decodeFrame(classic.toBuffer(), byKey)).toThrow(DecodeError);
    // Metadata v12 (flexible): compact array length 2^32 - 1.
    const flexible = new Writer();
    encodeRequestHeader(flexible, { requestApiKey: 3, requestApiVersion: 12, correlationId: 1, clientId: 'x' }, 2);
    flexible.uvarint(0);
    flexible.uvarint(0xffffffff);
    expect(() => decodeFrame(flexible.toBuffer(), byKey)).toThrow(DecodeError);
    // Produce v9: records claiming 2 GB of bytes.
    const produce = new Writer();
    encodeRequestHeader(produce, { requestApiKey: 0, requestApiVersion: 9, correlationId: 1, clientId: 'x' }, 2);
    produce.uvarint(0).int16(1).int32(1000).uvarint(2).compactString('t').uvarint(2).int32(0).uvarint(0x7fffffff);
    expect(() => decodeFrame(produce.toBuffer(), byKey)).toThrow(DecodeError);
    // A record batch claiming 2^31-1 records, and a frame claiming 2 GB.
    const batch = buildRecordBatch({ records: [{ value: Buffer.from('x') }] });
    batch.writeInt32BE(0x7fffffff, 57);
    expect(() => [...iterateBatches(batch)].map((v) => decodeRecords(v))).toThrow(DecodeError);
    const size = Buffer.alloc(4);
    size.writeInt32BE(0x7fffffff, 0);
    expect(() => new FrameDecoder().push(size)).toThrow(DecodeError);
    const after = process.memoryUsage();
    expect(after.arrayBuffers - before.arrayBuffers).toBeLessThan(16 << 20);
    expect(after.heapUsed - before.heapUsed).toBeLessThan(64 << 20);
    expect(performance.now() - t0).toBeLessThan(5_000);
  });
});
