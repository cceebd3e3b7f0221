import { createRequire } from 'node:module';
import * as zlib from 'node:zlib';
import { xxh32 } from '@node-rs/xxhash';
import { compressFrameSync, decompressFrameSync } from 'lz4-napi';
import { compressSync as snappyCompressSync, uncompressSync as snappyUncompressSync } from 'snappy';
import type * as ZstdBinding from 'zstd-napi/binding.js';
import { DecodeError } from './decode-error.js';

/**
 * The four record-batch codecs, byte-compatible with what Kafka and its clients write and read
 * (facts from Kafka's `compress/*Compression.java`, librdkafka `rdkafka_msgset_reader.c`):
 *
 * - gzip (1): RFC 1952 stream, node:zlib; concatenated members are read as one.
 * - snappy (2): written in the xerial snappy-java framing the Java client uses (the one framing
 *   every reader accepts); read in either xerial framing or raw snappy, as librdkafka and
 *   platformatic write raw.
 * - lz4 (3): the standard LZ4 frame, independent blocks, no checksums (as Kafka writes). For
 *   magic 0 message sets, `legacyKafkaLz4` accepts Kafka 0.8–0.9's wrong header checksum.
 * - zstd (4): standard zstd frames.
 *
 * The API is synchronous: codecs run on the caller's thread, which is what the decode path of a
 * single batch wants.
 *
 * Decompression is bounded by `maxSize` (DEFAULT_MAX_DECOMPRESSED_SIZE): declared sizes are
 * checked before anything is allocated and output beyond the bound is a DecodeError, so a small
 * hostile batch cannot make the process allocate gigabytes. Every codec failure is a DecodeError.
 */
export const Codec = { NONE: 0, GZIP: 1, SNAPPY: 2, LZ4: 3, ZSTD: 4 } as const;

export const CODEC_NAMES: readonly string[] = ['none', 'gzip', 'snappy', 'lz4', 'zstd'];

const DEFAULT_MAX_DECOMPRESSED_SIZE = 256 * 1024 * 1024;

export interface CompressOptions {
  /** snappy only: 'xerial' (default, as the Java client writes) or 'raw' (as librdkafka writes). */
  readonly snappyFraming?: 'xerial' | 'raw';
  /** gzip (1–9) and zstd (1–22) compression level; codec default otherwise. */
  readonly level?: number;
}

interface DecompressOptions {
  readonly maxSize?: number;
  /** lz4 only: also accept the pre-0.10 Kafka frame header checksum (magic 0 message sets). */
  readonly legacyKafkaLz4?: boolean;
}

const requireCjs = createRequire(import.meta.url);
let zstd: typeof ZstdBinding | undefined;
function zstdBinding(): typeof ZstdBinding {
  zstd ??= requireCjs('zstd-napi/binding.js') as typeof ZstdBinding;
  return zstd;
}
let zstdC: ZstdBinding.CCtx | undefined;
let zstdD: ZstdBinding.DCtx | undefined;

export function compress(codec: number, data: Buffer, options: CompressOptions = {}): Buffer {
  switch (codec) {
    case Codec.NONE:
      return data;
    case Codec.GZIP:
      return zlib.gzipSync(data, options.level === undefined ? {} : { level: options.level });
    case Codec.SNAPPY:
      return options.snappyFraming === 'raw' ? snappyCompressSync(data) : xerialCompress(data);
    case Codec.LZ4:
      return compressFrameSync(data, { contentChecksum: false, blockChecksums: false });
    case Codec.ZSTD: {
      const b = zstdBinding();
      zstdC ??= new b.CCtx();
      zstdC.reset(b.ResetDirective.parameters);
      if (options.level !== undefined) zstdC.setParameter(b.CParameter.compressionLevel, options.level);
      const bound = b.compressBound(data.length);
      const out = Buffer.allocUnsafe(bound);
      const n = zstdC.compress2(out, data);
      return out.subarray(0, n);
    }
    default:
      throw new RangeError(`unknown compression codec ${codec}`);
  }
}

export function decompress(codec: number, data: Buffer, options: DecompressOptions = {}): Buffer {
  const maxSize = options.maxSize ?? DEFAULT_MAX_DECOMPRESSED_SIZE;
  try {
    switch (codec) {
      case Codec.NONE:
        return data;
      case Codec.GZIP:
        return zlib.gunzipSync(data, { maxOutputLength: maxSize });
      case Codec.SNAPPY:
        return isXerial(data) ? xerialDecompress(data, maxSize) : snappyRaw(data, maxSize);
      case Codec.LZ4:
        return lz4Decompress(data, maxSize, options.legacyKafkaLz4 === true);
      case Codec.ZSTD:
        return zstdDecompress(data, maxSize);
      default:
        throw new DecodeError(`unknown compression codec ${codec}`);
    }
  } catch (e) {
    if (e instanceof DecodeError) throw e;
    throw new DecodeError(`${CODEC_NAMES[codec] ?? codec} decompression failed: ${(e as Error).message}`);
  }
}

// --- snappy -------------------------------------------------------------------------------

const XERIAL_MAGIC = Buffer.from([0x82, 0x53, 0x4e, 0x41, 0x50, 0x50, 0x59, 0x00]);
const XERIAL_HEADER = 16;
/** snappy-java's default block size, which Kafka's SnappyOutputStream keeps. */
const XERIAL_BLOCK = 32 * 1024;

function isXerial(data: Buffer): boolean {
  return data.length >= XERIAL_HEADER && data.subarray(0, 8).equals(XERIAL_MAGIC);
}

function xerialCompress(data: Buffer): Buffer {
  const parts: Buffer[] = [];
  const header = Buffer.alloc(XERIAL_HEADER);
  XERIAL_MAGIC.copy(header, 0);
  header.writeInt32BE(1, 8); // version
  header.writeInt32BE(1, 12); // minimum compatible version
  parts.push(header);
  for (let at = 0; at < data.length; at += XERIAL_BLOCK) {
    const block = snappyCompressSync(data.subarray(at, Math.min(data.length, at + XERIAL_BLOCK)));
    const len = Buffer.allocUnsafe(4);
    len.writeInt32BE(block.length, 0);
    parts.push(len, block);
  }
  return Buffer.concat(parts);
}

function xerialDecompress(data: Buffer, maxSize: number): Buffer {
  const out: Buffer[] = [];
  let total = 0;
  let at = XERIAL_HEADER;
  while (at < data.length) {
    if (at + 4 > data.length) throw new DecodeError('truncated xerial snappy block length');
    const len = data.readInt32BE(at);
    at += 4;
    if (len < 0 || at + len > data.length) throw new DecodeError(`bad xerial snappy block length ${len}`);
    const block = snappyRaw(data.subarray(at, at + len), maxSize - total);
    at += len;
    total += block.length;
    out.push(block);
  }
  return out.length === 1 ? out[0]! : Buffer.concat(out, total);
}

/** Raw snappy: the uncompressed length (uvarint preamble) is checked before decoding. */
function snappyRaw(data: Buffer, maxSize: number): Buffer {
  let len = 0;
  let shift = 0;
  for (let i = 0; ; i++) {
    if (i >= 5 || i >= data.length) throw new DecodeError('bad snappy length preamble');
    const b = data[i]!;
    len += (b & 0x7f) * 2 ** shift;
    if ((b & 0x80) === 0) break;
    shift += 7;
  }
  if (len > maxSize) throw new DecodeError(`snappy block of ${len} bytes exceeds ${maxSize}`);
  const out = snappyUncompressSync(data, { asBuffer: true });
  if (typeof out === 'string') throw new DecodeError('snappy returned a string');
  return out;
}

// --- lz4 ----------------------------------------------------------------------------------

const LZ4_MAGIC = 0x184d2204;

function lz4Decompress(data: Buffer, maxSize: number, legacy: boolean): Buffer {
  if (data.length < 7 || data.readUInt32LE(0) !== LZ4_MAGIC) throw new DecodeError('not an LZ4 frame');
  const flg = data[4]!;
  const descEnd = 6 + (flg & 0x08 ? 8 : 0) + (flg & 0x01 ? 4 : 0);
  if (data.length <= descEnd) throw new DecodeError('truncated LZ4 frame descriptor');
  // The native decoder cannot be stopped at a size, so it only gets frames whose headers bound
  // the output within maxSize; the rest go through the JavaScript decoder, which stops there.
  if (lz4OutputBound(data) > maxSize) return lz4DecodeJs(data, maxSize);
  let input = data;
  if (legacy) {
    // Kafka before 0.10 hashed the magic number into the header checksum as well; rewrite it to
    // the standard one (a hash of the descriptor only) so a standard decoder accepts the frame.
    const hc = (xxh32(data.subarray(4, descEnd), 0) >>> 8) & 0xff;
    if (data[descEnd] !== hc) {
      input = Buffer.from(data);
      input[descEnd] = hc;
    }
  }
  const out = decompressFrameSync(input);
  if (out.length > maxSize) throw new DecodeError(`LZ4 output exceeds ${maxSize} bytes`);
  return out;
}

const LZ4_BLOCK_MAX = [0, 0, 0, 0, 64 * 1024, 256 * 1024, 1024 * 1024, 4 * 1024 * 1024];

/**
 * An upper bound on the decompressed size of the LZ4 frames in `data`, from their headers alone.
 * A compressed block of n bytes decodes to at most min(block maximum, 255n + 19) bytes (a match
 * length grows by at most 255 per input byte), an uncompressed one to n; a declared content
 * size caps the total. The native decoder is only called once this bound is acceptable, so a
 * small hostile frame cannot make it allocate gigabytes.
 */
function lz4OutputBound(data: Buffer): number {
  let at = 0;
  let total = 0;
  while (at < data.length) {
    if (at + 7 > data.length) throw new DecodeError('truncated LZ4 frame header');
    const magic = data.readUInt32LE(at);
    if ((magic & 0xfffffff0) === 0x184d2a50) {
      // skippable frame: int32 size, then that many bytes
      if (at + 8 > data.length) throw new DecodeError('truncated LZ4 skippable frame');
      at += 8 + data.readUInt32LE(at + 4);
      continue;
    }
    if (magic !== LZ4_MAGIC) throw new DecodeError('not an LZ4 frame');
    const flg = data[at + 4]!;
    const blockMax = LZ4_BLOCK_MAX[(data[at + 5]! >> 4) & 0x07] ?? 0;
    if (blockMax === 0) throw new DecodeError('bad LZ4 block maximum size');
    const hasContentSize = (flg & 0x08) !== 0;
    const contentSize = hasContentSize && at + 14 <= data.length ? Number(data.readBigUInt64LE(at + 6)) : -1;
    at += 7 + (hasContentSize ? 8 : 0) + (flg & 0x01 ? 4 : 0);
    const blockChecksum = (flg & 0x10) !== 0 ? 4 : 0;
    let blocks = 0; // bound on this frame's output
    for (;;) {
      if (at + 4 > data.length) throw new DecodeError('truncated LZ4 block');
      const size = data.readUInt32LE(at) & 0x7fffffff;
      at += 4;
      if (size === 0) break;
      if (size > blockMax) throw new DecodeError(`LZ4 block of ${size} bytes above its ${blockMax} maximum`);
      const stored = (data.readUInt32LE(at - 4) & 0x80000000) !== 0;
      blocks += stored ? size : Math.min(blockMax, size * 255 + 19);
      at += size + blockChecksum;
    }
    if (flg & 0x04) at += 4; // content checksum
    total += contentSize >= 0 ? Math.min(contentSize, blocks) : blocks;
  }
  return total;
}

/**
 * LZ4 frame decoding in JavaScript with an exact output limit (checksums are not verified).
 * Blocks are decoded into one growing buffer, so linked blocks (matches reaching into earlier
 * blocks) decode as well as independent ones.
 */
export function lz4DecodeJs(data: Buffer, maxSize: number): Buffer {
  lz4OutputBound(data); // validates the frame structure the loop below relies on
  let out = Buffer.allocUnsafe(Math.min(maxSize, Math.max(64 * 1024, data.length * 4)));
  let o = 0;
  const ensure = (n: number): void => {
    if (o + n > maxSize) throw new DecodeError(`LZ4 output exceeds ${maxSize} bytes`);
    if (o + n <= out.length) return;
    const grown = Buffer.allocUnsafe(Math.min(maxSize, Math.max(o + n, out.length * 2)));
    out.copy(grown, 0, 0, o);
    out = grown;
  };
  let at = 0;
  while (at < data.length) {
    const magic = data.readUInt32LE(at);
    if ((magic & 0xfffffff0) === 0x184d2a50) {
      at += 8 + data.readUInt32LE(at + 4);
      continue;
    }
    const flg = data[at + 4]!;
    at += 7 + (flg & 0x08 ? 8 : 0) + (flg & 0x01 ? 4 : 0);
    const blockChecksum = (flg & 0x10) !== 0 ? 4 : 0;
    for (;;) {
      const word = data.readUInt32LE(at);
      at += 4;
      const size = word & 0x7fffffff;
      if (size === 0) break;
      const end = at + size;
      if (word & 0x80000000) {
        ensure(size);
        data.copy(out, o, at, end);
        o += size;
      } else {
        let i = at;
        while (i < end) {
          const token = data[i++]!;
          let lit = token >> 4;
          if (lit === 15) {
            let b: number;
            do {
              if (i >= end) throw new DecodeError('truncated LZ4 literal length');
              b = data[i++]!;
              lit += b;
            } while (b === 255);
          }
          if (i + lit > end) throw new DecodeError('LZ4 literals past the block');
          ensure(lit);
          data.copy(out, o, i, i + lit);
          o += lit;
          i += lit;
          if (i >= end) break;
          if (i + 2 > end) throw new DecodeError('truncated LZ4 match offset');
          const offset = data[i]! | (data[i + 1]! << 8);
          i += 2;
          if (offset === 0 || offset > o) throw new DecodeError(`bad LZ4 match offset ${offset}`);
          let len = token & 15;
          if (len === 15) {
            let b: number;
            do {
              if (i >= end) throw new DecodeError('truncated LZ4 match length');
              b = data[i++]!;
              len += b;
            } while (b === 255);
          }
          len += 4;
          ensure(len);
          if (offset >= len) {
            out.copy(out, o, o - offset, o - offset + len);
            o += len;
          } else {
            for (let k = 0; k < len; k++, o++) out[o] = out[o - offset]!;
          }
        }
      }
      at = end + blockChecksum;
    }
    if (flg & 0x04) at += 4;
  }
  return out.subarray(0, o);
}

// --- zstd ---------------------------------------------------------------------------------

const ZSTD_CHUNK = 128 * 1024;

/**
 * Streaming decode, so a frame header claiming a huge content size allocates nothing: output
 * grows chunk by chunk and stops at `maxSize`.
 */
function zstdDecompress(data: Buffer, maxSize: number): Buffer {
  const b = zstdBinding();
  zstdD ??= new b.DCtx();
  zstdD.reset(b.ResetDirective.sessionAndParameters);
  const out: Buffer[] = [];
  let total = 0;
  let input = data;
  let hint = 1;
  for (;;) {
    const chunk = Buffer.allocUnsafe(Math.min(ZSTD_CHUNK, Math.max(1, maxSize - total + 1)));
    const [ret, produced, consumed] = zstdD.decompressStream(chunk, input);
    // A call on exhausted input after a complete frame returns the next frame's size hint.
    if (produced > 0 || consumed > 0) hint = ret;
    input = input.subarray(consumed);
    if (produced > 0) {
      total += produced;
      if (total > maxSize) throw new DecodeError(`zstd output exceeds ${maxSize} bytes`);
      out.push(chunk.subarray(0, produced));
    }
    if (input.length === 0 && produced < chunk.length) break;
    if (produced === 0 && consumed === 0) throw new DecodeError('zstd made no progress');
  }
  if (hint !== 0) throw new DecodeError('truncated zstd frame');
  return out.length === 1 ? out[0]! : Buffer.concat(out, total);
}
