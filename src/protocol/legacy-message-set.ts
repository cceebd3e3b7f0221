import { crc32 } from 'node:zlib';
import { Codec, compress, decompress } from './compression.js';
import { DecodeError } from './decode-error.js';
import { Reader } from './reader.js';

/**
 * Read-only decoding of legacy message sets (magic 0 and 1, Kafka's LegacyRecord and
 * AbstractLegacyRecordBatch): entries of `offset int64, size int32, message`, where message =
 * crc uint32 (plain CRC-32 of magic..end), magic int8, attributes int8, [timestamp int64 in v1],
 * key bytes, value bytes. A compressed entry's value is a whole inner message set: in v1 inner
 * offsets are relative (the wrapper holds the last inner offset), in v0 they are absolute.
 * Kafka 4 no longer accepts these on produce; they are read for old segments and old fetches.
 */
export interface LegacyRecord {
  readonly offset: number;
  readonly magic: 0 | 1;
  readonly attributes: number;
  /** -1 for magic 0. */
  readonly timestamp: number;
  readonly timestampType: 'create' | 'log-append' | 'none';
  readonly key: Buffer | null;
  readonly value: Buffer | null;
  /** Whether the stored CRC-32 matched. */
  readonly crcValid: boolean;
}

export interface LegacyDecodeResult {
  readonly records: LegacyRecord[];
  /** A trailing incomplete entry was found (Fetch may end with one). */
  readonly partialTail: boolean;
}

interface RawMessage {
  readonly offset: number;
  readonly magic: 0 | 1;
  readonly attributes: number;
  readonly timestamp: number;
  readonly key: Buffer | null;
  readonly value: Buffer | null;
  readonly crcValid: boolean;
}

export function decodeLegacyMessageSet(buf: Buffer, start = 0, end = buf.length): LegacyDecodeResult {
  const records: LegacyRecord[] = [];
  const r = new Reader(buf, start, end);
  let partialTail = false;
  while (r.remaining > 0) {
    if (r.remaining < 12) {
      partialTail = true;
      break;
    }
    const size = buf.readInt32BE(r.offset + 8);
    if (size < 14) throw new DecodeError(`legacy message size ${size} below 14`, r.offset);
    if (r.remaining < 12 + size) {
      partialTail = true;
      break;
    }
    const msg = readMessage(r);
    const codec = msg.attributes & 0x07;
    if (codec === Codec.NONE) {
      records.push(toRecord(msg, msg.offset, msg.attributes, msg.timestamp));
      continue;
    }
    if (msg.value === null) throw new DecodeError('compressed legacy wrapper without a value');
    const inner = decompress(codec, msg.value, { legacyKafkaLz4: msg.magic === 0 });
    const innerMsgs: RawMessage[] = [];
    const ir = new Reader(inner);
    while (ir.remaining > 0) {
      const m = readMessage(ir);
      if ((m.attributes & 0x07) !== 0) throw new DecodeError('nested compression in legacy message set');
      innerMsgs.push(m);
    }
    const lastRelative = innerMsgs.length > 0 ? innerMsgs[innerMsgs.length - 1]!.offset : 0;
    const logAppend = msg.magic === 1 && (msg.attributes & 0x08) !== 0;
    for (const m of innerMsgs) {
      // v1 inner offsets are relative to the wrapper's (which is the last inner offset).
      const offset = msg.magic === 1 ? msg.offset - lastRelative + m.offset : m.offset;
      records.push(toRecord(m, offset, m.attributes | (logAppend ? 0x08 : 0), logAppend ? msg.timestamp : m.timestamp));
    }
  }
  return { records, partialTail };
}

function readMessage(r: Reader): RawMessage {
  const offset = Number(r.int64());
  const size = r.int32();
  if (size < 14 || size > r.remaining) throw new DecodeError(`bad legacy message size ${size}`, r.offset);
  const mr = new Reader(r.buf, r.offset, r.offset + size);
  r.offset += size;
  const crc = mr.uint32();
  const crcValid = crc32(mr.buf.subarray(mr.offset, mr.end)) === crc;
  const magic = mr.int8();
  if (magic !== 0 && magic !== 1) throw new DecodeError(`legacy magic ${magic}`, mr.offset - 1);
  const attributes = mr.int8();
  const timestamp = magic === 1 ? Number(mr.int64()) : -1;
  const key = mr.nullableBytes();
  const value = mr.nullableBytes();
  if (mr.remaining !== 0) throw new DecodeError('bytes after legacy message value', mr.offset);
  return { offset, magic, attributes, timestamp, key, value, crcValid };
}

function toRecord(m: RawMessage, offset: number, attributes: number, timestamp: number): LegacyRecord {
  return {
    offset,
    magic: m.magic,
    attributes,
    timestamp,
    timestampType: m.magic === 0 ? 'none' : attributes & 0x08 ? 'log-append' : 'create',
    key: m.key,
    value: m.value,
    crcValid: m.crcValid,
  };
}

/**
 * Builds a legacy message set (for tests and tools that must produce old-format data).
 * `compression` wraps all messages in one wrapper message, as old producers did.
 */
export function buildLegacyMessageSet(input: {
  readonly magic: 0 | 1;
  readonly baseOffset?: number;
  readonly compression?: number;
  readonly messages: readonly { key?: Buffer | null; value?: Buffer | null; timestamp?: number }[];
}): Buffer {
  const base = input.baseOffset ?? 0;
  const codec = input.compression ?? 0;
  const inner = input.messages.map((m, i) =>
    entry(codec !== 0 && input.magic === 1 ? i : base + i, input.magic, 0, m.timestamp ?? 0, m.key ?? null, m.value ?? null),
  );
  if (codec === 0) return Buffer.concat(inner);
  const body = Buffer.concat(inner);
  const compressed = compressLegacy(codec, body);
  const last = input.messages.length - 1;
  return entry(base + last, input.magic, codec, input.messages[last]?.timestamp ?? 0, null, compressed);
}

function compressLegacy(codec: number, body: Buffer): Buffer {
  return compress(codec, body);
}

function entry(offset: number, magic: 0 | 1, attributes: number, ts: number, key: Buffer | null, value: Buffer | null): Buffer {
  const size = 4 + 1 + 1 + (magic === 1 ? 8 : 0) + 4 + (key?.length ?? 0) + 4 + (value?.length ?? 0);
  const b = Buffer.alloc(12 + size);
  b.writeBigInt64BE(BigInt(offset), 0);
  b.writeInt32BE(size, 8);
  let at = 16;
  b.writeInt8(magic, at++);
  b.writeInt8(attributes, at++);
  if (magic === 1) {
    b.writeBigInt64BE(BigInt(ts), at);
    at += 8;
  }
  for (const f of [key, value]) {
    b.writeInt32BE(f === null ? -1 : f.length, at);
    at += 4;
    if (f !== null) {
      f.copy(b, at);
      at += f.length;
    }
  }
  b.writeUInt32BE(crc32(b.subarray(16)), 12);
  return b;
}
