import { crc32c } from '@node-rs/crc32';
import { DecodeError } from './decode-error.js';

/**
 * Record batch (magic 2) header layout. Offsets are from the start of the batch.
 * baseOffset and partitionLeaderEpoch lie outside the CRC (which covers attributes..end), so
 * both can be patched in place without recomputing it.
 */
export const BATCH = {
  BASE_OFFSET: 0, // int64
  BATCH_LENGTH: 8, // int32: bytes after this field
  PARTITION_LEADER_EPOCH: 12, // int32
  MAGIC: 16, // int8
  CRC: 17, // uint32, CRC-32C of ATTRIBUTES..end
  ATTRIBUTES: 21, // int16
  LAST_OFFSET_DELTA: 23, // int32
  BASE_TIMESTAMP: 27, // int64
  MAX_TIMESTAMP: 35, // int64
  PRODUCER_ID: 43, // int64
  PRODUCER_EPOCH: 51, // int16
  BASE_SEQUENCE: 53, // int32
  RECORDS_COUNT: 57, // int32
  HEADER_SIZE: 61,
  /** baseOffset + batchLength: the bytes that precede batchLength's count. */
  LOG_OVERHEAD: 12,
} as const;

export const ATTR = {
  COMPRESSION_MASK: 0x07,
  TIMESTAMP_LOG_APPEND: 0x08,
  TRANSACTIONAL: 0x10,
  CONTROL: 0x20,
  DELETE_HORIZON: 0x40,
} as const;

export const Compression = { NONE: 0, GZIP: 1, SNAPPY: 2, LZ4: 3, ZSTD: 4 } as const;
export type CompressionType = (typeof Compression)[keyof typeof Compression];

/** Reads a record batch header in place. Holds no copy: every getter reads the Buffer. */
export class RecordBatchView {
  constructor(
    readonly buf: Buffer,
    readonly offset = 0,
  ) {}

  /** Total size of the batch in bytes (LOG_OVERHEAD + batchLength). */
  get sizeInBytes(): number {
    return BATCH.LOG_OVERHEAD + this.batchLength;
  }
  get baseOffset(): number {
    return readOffset(this.buf, this.offset + BATCH.BASE_OFFSET);
  }
  get batchLength(): number {
    return this.buf.readInt32BE(this.offset + BATCH.BATCH_LENGTH);
  }
  get partitionLeaderEpoch(): number {
    return this.buf.readInt32BE(this.offset + BATCH.PARTITION_LEADER_EPOCH);
  }
  get magic(): number {
    return this.buf.readInt8(this.offset + BATCH.MAGIC);
  }
  get crc(): number {
    return this.buf.readUInt32BE(this.offset + BATCH.CRC);
  }
  get attributes(): number {
    return this.buf.readInt16BE(this.offset + BATCH.ATTRIBUTES);
  }
  get compression(): number {
    return this.attributes & ATTR.COMPRESSION_MASK;
  }
  get isTransactional(): boolean {
    return (this.attributes & ATTR.TRANSACTIONAL) !== 0;
  }
  get isControl(): boolean {
    return (this.attributes & ATTR.CONTROL) !== 0;
  }
  get lastOffsetDelta(): number {
    return this.buf.readInt32BE(this.offset + BATCH.LAST_OFFSET_DELTA);
  }
  get lastOffset(): number {
    return this.baseOffset + this.lastOffsetDelta;
  }
  get baseTimestamp(): number {
    return readOffset(this.buf, this.offset + BATCH.BASE_TIMESTAMP);
  }
  get maxTimestamp(): number {
    return readOffset(this.buf, this.offset + BATCH.MAX_TIMESTAMP);
  }
  get producerId(): number {
    return readOffset(this.buf, this.offset + BATCH.PRODUCER_ID);
  }
  get producerEpoch(): number {
    return this.buf.readInt16BE(this.offset + BATCH.PRODUCER_EPOCH);
  }
  get baseSequence(): number {
    return this.buf.readInt32BE(this.offset + BATCH.BASE_SEQUENCE);
  }
  get recordsCount(): number {
    return this.buf.readInt32BE(this.offset + BATCH.RECORDS_COUNT);
  }
  /** The batch's bytes (a subarray, no copy). */
  get bytes(): Buffer {
    return this.buf.subarray(this.offset, this.offset + this.sizeInBytes);
  }
  /** CRC-32C over attributes..end compared with the stored CRC. */
  isValid(): boolean {
    const end = this.offset + this.sizeInBytes;
    return crc32c(this.buf.subarray(this.offset + BATCH.ATTRIBUTES, end)) === this.crc;
  }
}

/**
 * int64 fields that are offsets, timestamps or producer ids are read as numbers: every value a
 * Kafka log holds fits in 2^53 (offsets, epoch-millisecond timestamps, producer ids), and numbers
 * keep the batch walk free of BigInt allocation. A value beyond 2^53 is a corrupt batch.
 */
export function readOffset(buf: Buffer, at: number): number {
  const hi = buf.readInt32BE(at);
  const lo = buf.readUInt32BE(at + 4);
  if (hi > 0x1fffff || hi < -0x200000) throw new DecodeError('int64 beyond 2^53 in batch header', at);
  return hi * 0x100000000 + lo;
}

export function writeOffset(buf: Buffer, at: number, v: number): void {
  const hi = Math.floor(v / 0x100000000);
  buf.writeInt32BE(hi, at);
  buf.writeUInt32BE(v - hi * 0x100000000, at + 4);
}

/** Sets baseOffset in place (outside the CRC). */
export function patchBaseOffset(buf: Buffer, batchStart: number, baseOffset: number): void {
  writeOffset(buf, batchStart + BATCH.BASE_OFFSET, baseOffset);
}

/** Sets partitionLeaderEpoch in place (outside the CRC). */
export function patchPartitionLeaderEpoch(buf: Buffer, batchStart: number, epoch: number): void {
  buf.writeInt32BE(epoch, batchStart + BATCH.PARTITION_LEADER_EPOCH);
}
