import { Codec, compress, decompress, type CompressOptions } from './compression.js';
import { crc32c } from './crc32c.js';
import { DecodeError } from './decode-error.js';
import { Reader } from './reader.js';
import { ATTR, BATCH, RecordBatchView, writeOffset } from './record-batch.js';

/**
 * Builds and decodes the records inside a magic-2 batch (Kafka's DefaultRecord /
 * MemoryRecordsBuilder layout). Meant for coordinators, tools and tests: the produce, fetch and
 * mirror paths never decode records and keep batches as Buffer slices.
 */

interface RecordHeader {
  readonly key: string;
  readonly value: Buffer | null;
}

export interface RecordInput {
  readonly key?: Buffer | null;
  readonly value?: Buffer | null;
  readonly headers?: readonly RecordHeader[];
  /** Epoch milliseconds; defaults to the batch's `now`. */
  readonly timestamp?: number;
  /** Defaults to the record's index; must increase strictly within a batch. */
  readonly offsetDelta?: number;
}

export interface RecordBatchInput {
  readonly baseOffset?: number;
  readonly partitionLeaderEpoch?: number;
  readonly producerId?: number;
  readonly producerEpoch?: number;
  readonly baseSequence?: number;
  readonly isTransactional?: boolean;
  /** Control batches are written by the broker and coordinators only (see control-records.ts). */
  readonly isControl?: boolean;
  readonly compression?: number;
  readonly compressOptions?: CompressOptions;
  readonly timestampType?: 'create' | 'log-append';
  /** Default timestamp of records without one, and the LogAppendTime of log-append batches. */
  readonly now?: number;
  readonly records: readonly RecordInput[];
}

export interface Record {
  readonly offset: number;
  /** CreateTime of the record, or the batch's maxTimestamp when the batch is LogAppendTime. */
  readonly timestamp: number;
  readonly key: Buffer | null;
  readonly value: Buffer | null;
  readonly headers: RecordHeader[];
  /** baseSequence + offsetDelta (wrapping at 2^31), or -1 for a non-idempotent batch. */
  readonly sequence: number;
  readonly attributes: number;
}

const uvarintSize = (v: number): number => {
  let n = 1;
  while (v >= 0x80) {
    v = Math.floor(v / 128);
    n++;
  }
  return n;
};
const zigzag = (v: number): number => (v >= 0 ? v * 2 : -v * 2 - 1);
const varSize = (v: number): number => uvarintSize(zigzag(v));

function writeUvarint(buf: Buffer, at: number, v: number): number {
  while (v >= 0x80) {
    buf[at++] = (v % 128) | 0x80;
    v = Math.floor(v / 128);
  }
  buf[at++] = v;
  return at;
}
const writeVar = (buf: Buffer, at: number, v: number): number => writeUvarint(buf, at, zigzag(v));

interface Sized {
  readonly rec: RecordInput;
  readonly tsDelta: number;
  readonly offsetDelta: number;
  readonly headerKeys: Buffer[];
  readonly bodySize: number;
}

/**
 * Builds one magic-2 record batch, CRC-32C included. Timestamps are numbers (epoch ms), as are
 * offsets and producer ids (every such value fits in 2^53).
 */
export function buildRecordBatch(input: RecordBatchInput): Buffer {
  const records = input.records;
  if (records.length === 0) throw new RangeError('a record batch needs at least one record');
  const now = input.now ?? Date.now();
  const logAppend = input.timestampType === 'log-append';
  const compression = input.compression ?? Codec.NONE;
  if (!Number.isInteger(compression) || compression < 0 || compression > 4) throw new RangeError(`bad compression ${compression}`);

  const baseTimestamp = records[0]!.timestamp ?? now;
  let maxTimestamp = -1;
  let lastDelta = -1;
  const sized: Sized[] = [];
  let total = 0;
  for (let i = 0; i < records.length; i++) {
    const rec = records[i]!;
    const ts = rec.timestamp ?? now;
    if (ts > maxTimestamp) maxTimestamp = ts;
    const offsetDelta = rec.offsetDelta ?? i;
    if (offsetDelta <= lastDelta) throw new RangeError(`offsetDelta ${offsetDelta} not above ${lastDelta}`);
    lastDelta = offsetDelta;
    const tsDelta = ts - baseTimestamp;
    const key = rec.key ?? null;
    const value = rec.value ?? null;
    const headers = rec.headers ?? [];
    let body = 1 + varSize(tsDelta) + varSize(offsetDelta);
    body += key === null ? 1 : varSize(key.length) + key.length;
    body += value === null ? 1 : varSize(value.length) + value.length;
    body += varSize(headers.length);
    const headerKeys: Buffer[] = [];
    for (const h of headers) {
      const k = Buffer.from(h.key, 'utf8');
      headerKeys.push(k);
      body += varSize(k.length) + k.length;
      body += h.value === null ? 1 : varSize(h.value.length) + h.value.length;
    }
    sized.push({ rec, tsDelta, offsetDelta, headerKeys, bodySize: body });
    total += varSize(body) + body;
  }

  const plain = Buffer.allocUnsafe(total);
  let at = 0;
  for (const s of sized) {
    at = writeVar(plain, at, s.bodySize);
    plain[at++] = 0; // record attributes: unused
    at = writeVar(plain, at, s.tsDelta);
    at = writeVar(plain, at, s.offsetDelta);
    at = writeBytes(plain, at, s.rec.key ?? null);
    at = writeBytes(plain, at, s.rec.value ?? null);
    const headers = s.rec.headers ?? [];
    at = writeVar(plain, at, headers.length);
    for (let h = 0; h < headers.length; h++) {
      at = writeBytes(plain, at, s.headerKeys[h]!);
      at = writeBytes(plain, at, headers[h]!.value);
    }
  }

  const payload = compression === Codec.NONE ? plain : compress(compression, plain, input.compressOptions ?? {});
  const batch = Buffer.allocUnsafe(BATCH.HEADER_SIZE + payload.length);
  let attributes = compression;
  if (logAppend) attributes |= ATTR.TIMESTAMP_LOG_APPEND;
  if (input.isTransactional === true) attributes |= ATTR.TRANSACTIONAL;
  if (input.isControl === true) attributes |= ATTR.CONTROL;
  writeOffset(batch, BATCH.BASE_OFFSET, input.baseOffset ?? 0);
  batch.writeInt32BE(batch.length - BATCH.LOG_OVERHEAD, BATCH.BATCH_LENGTH);
  batch.writeInt32BE(input.partitionLeaderEpoch ?? -1, BATCH.PARTITION_LEADER_EPOCH);
  batch.writeInt8(2, BATCH.MAGIC);
  batch.writeInt16BE(attributes, BATCH.ATTRIBUTES);
  batch.writeInt32BE(lastDelta, BATCH.LAST_OFFSET_DELTA);
  writeOffset(batch, BATCH.BASE_TIMESTAMP, baseTimestamp);
  writeOffset(batch, BATCH.MAX_TIMESTAMP, logAppend ? now : maxTimestamp);
  writeOffset(batch, BATCH.PRODUCER_ID, input.producerId ?? -1);
  batch.writeInt16BE(input.producerEpoch ?? -1, BATCH.PRODUCER_EPOCH);
  batch.writeInt32BE(input.baseSequence ?? -1, BATCH.BASE_SEQUENCE);
  batch.writeInt32BE(records.length, BATCH.RECORDS_COUNT);
  payload.copy(batch, BATCH.HEADER_SIZE);
  batch.writeUInt32BE(crc32c(batch.subarray(BATCH.ATTRIBUTES)), BATCH.CRC);
  return batch;
}

function writeBytes(buf: Buffer, at: number, b: Buffer | null): number {
  if (b === null) return writeVar(buf, at, -1);
  at = writeVar(buf, at, b.length);
  b.copy(buf, at);
  return at + b.length;
}

interface DecodeRecordsOptions {
  /** Bound on the decompressed size (see compression.ts). */
  readonly maxDecompressedSize?: number;
}

/**
 * Decodes (and decompresses) every record of a magic-2 batch. Key, value and header values are
 * subarrays of the batch (or of the decompressed buffer). Malformed content is a DecodeError;
 * the CRC is not checked here (RecordBatchView.isValid does that).
 */
export function decodeRecords(batch: RecordBatchView, options: DecodeRecordsOptions = {}): Record[] {
  if (batch.magic !== 2) throw new DecodeError(`decodeRecords reads magic 2, got ${batch.magic}`, batch.offset);
  const size = batch.sizeInBytes;
  if (size < BATCH.HEADER_SIZE || batch.offset + size > batch.buf.length) throw new DecodeError('bad record batch size', batch.offset);
  const count = batch.recordsCount;
  if (count < 0) throw new DecodeError(`negative record count ${count}`, batch.offset);
  const compression = batch.compression;
  const body = decompress(
    compression,
    batch.recordsBytes,
    options.maxDecompressedSize === undefined ? {} : { maxSize: options.maxDecompressedSize },
  );
  if (count * 7 > body.length) throw new DecodeError(`${count} records cannot fit in ${body.length} bytes`, batch.offset);

  const baseOffset = batch.baseOffset;
  const baseTimestamp = batch.baseTimestamp;
  const logAppendTime = batch.timestampType === 'log-append' ? batch.maxTimestamp : -1;
  const baseSequence = batch.baseSequence;
  const r = new Reader(body);
  const out: Record[] = [];
  for (let i = 0; i < count; i++) {
    const len = r.varint();
    if (len < 0 || len > r.remaining) throw new DecodeError(`record length ${len} exceeds ${r.remaining} bytes`, r.offset);
    const end = r.offset + len;
    const rr = new Reader(body, r.offset, end);
    const attributes = rr.int8();
    const tsDelta = rr.varlongNumber();
    const offsetDelta = rr.varint();
    const key = varBytes(rr);
    const value = varBytes(rr);
    const headerCount = rr.varint();
    if (headerCount < 0 || headerCount * 2 > rr.remaining) throw new DecodeError(`bad header count ${headerCount}`, rr.offset);
    const headers: RecordHeader[] = [];
    for (let h = 0; h < headerCount; h++) {
      const hk = varBytes(rr);
      if (hk === null) throw new DecodeError('null header key', rr.offset);
      headers.push({ key: hk.toString('utf8'), value: varBytes(rr) });
    }
    if (rr.offset !== end) throw new DecodeError(`record has ${end - rr.offset} unread bytes`, rr.offset);
    r.offset = end;
    out.push({
      offset: baseOffset + offsetDelta,
      timestamp: logAppendTime >= 0 ? logAppendTime : baseTimestamp + tsDelta,
      key,
      value,
      headers,
      sequence: baseSequence < 0 ? -1 : (baseSequence + offsetDelta) % 0x80000000,
      attributes,
    });
  }
  if (r.remaining !== 0) throw new DecodeError(`${r.remaining} bytes after the last record`, r.offset);
  return out;
}

function varBytes(r: Reader): Buffer | null {
  const len = r.varint();
  if (len < -1) throw new DecodeError(`bad length ${len}`, r.offset);
  return len === -1 ? null : r.raw(len);
}
