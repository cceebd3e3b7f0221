/**
 * Legacy message sets (magic 0 and 1) for tests: Fjord takes only record batches (magic 2), and
 * hostile-input tests send these to check that they are refused, never decoded.
 */
import { crc32 } from 'node:zlib';
import { compress } from '../../src/protocol/compression.js';

/**
 * Builds a legacy message set (magic 0 or 1, as producers before Kafka 0.11 sent).
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
  const compressed = compress(codec, body);
  const last = input.messages.length - 1;
  return entry(base + last, input.magic, codec, input.messages[last]?.timestamp ?? 0, null, compressed);
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
