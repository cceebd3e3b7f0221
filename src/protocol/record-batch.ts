import { crc32c } from './crc32c.js';
import { DecodeError } from './decode-error.js';
import { ErrorCode } from './generated/errors.js';

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
  get timestampType(): 'create' | 'log-append' {
    return (this.attributes & ATTR.TIMESTAMP_LOG_APPEND) !== 0 ? 'log-append' : 'create';
  }
  get hasDeleteHorizon(): boolean {
    return (this.attributes & ATTR.DELETE_HORIZON) !== 0;
  }
  /** Offset one past the last record: where the next batch in the log starts. */
  get nextOffset(): number {
    return this.lastOffset + 1;
  }
  /** The bytes after the header: the records, or one compressed blob of them (a subarray). */
  get recordsBytes(): Buffer {
    return this.buf.subarray(this.offset + BATCH.HEADER_SIZE, this.offset + this.sizeInBytes);
  }
  /** CRC-32C over attributes..end compared with the stored CRC. */
  isValid(): boolean {
    const end = this.offset + this.sizeInBytes;
    if (this.magic !== 2 || this.sizeInBytes < BATCH.HEADER_SIZE || end > this.buf.length) return false;
    return crc32c(this.buf.subarray(this.offset + BATCH.ATTRIBUTES, end)) === this.crc;
  }
  /** Recomputes and stores the CRC (after a change to a field the CRC covers). */
  updateCrc(): void {
    const end = this.offset + this.sizeInBytes;
    this.buf.writeUInt32BE(crc32c(this.buf.subarray(this.offset + BATCH.ATTRIBUTES, end)), this.offset + BATCH.CRC);
  }
}

/**
 * The smallest size a log entry may claim (Kafka's LegacyRecord.RECORD_OVERHEAD_V0): below it
 * the entry is corrupt, whatever its magic. A magic-2 batch needs BATCH.HEADER_SIZE.
 */
const MIN_ENTRY_SIZE = 14;

/**
 * Walks the batches of a `records` blob (a log segment slice, a Fetch partition's records, a
 * Produce partition's records) without copying. Iteration stops cleanly at a trailing partial
 * batch, which Fetch responses may legitimately end with (the broker cuts at maxBytes); after the
 * loop `partialTail` says whether one was found and `validBytes` how many bytes whole batches
 * took. A size field that no batch can have is corruption: DecodeError.
 *
 * Views of any magic are yielded (magic 0/1 legacy message sets share the 12-byte offset+size
 * prefix; callers refuse them). Matches Kafka's ByteBufferLogInputStream.
 */
class BatchIterator implements IterableIterator<RecordBatchView> {
  private pos: number;
  /** True once iteration stopped at an incomplete trailing batch. */
  partialTail = false;

  constructor(
    readonly buf: Buffer,
    readonly start = 0,
    readonly end = buf.length,
  ) {
    this.pos = start;
  }

  /** Bytes covered by the whole batches returned so far. */
  get validBytes(): number {
    return this.pos - this.start;
  }

  next(): IteratorResult<RecordBatchView> {
    const remaining = this.end - this.pos;
    if (remaining === 0) return { done: true, value: undefined };
    if (remaining < BATCH.LOG_OVERHEAD) return this.stopPartial();
    const batchLength = this.buf.readInt32BE(this.pos + BATCH.BATCH_LENGTH);
    if (batchLength < MIN_ENTRY_SIZE) throw new DecodeError(`record batch size ${batchLength} below ${MIN_ENTRY_SIZE}`, this.pos);
    if (remaining < BATCH.LOG_OVERHEAD + batchLength) return this.stopPartial();
    const view = new RecordBatchView(this.buf, this.pos);
    if (view.magic >= 2 && batchLength + BATCH.LOG_OVERHEAD < BATCH.HEADER_SIZE) {
      throw new DecodeError(`record batch size ${batchLength} below the magic-2 header`, this.pos);
    }
    this.pos += BATCH.LOG_OVERHEAD + batchLength;
    return { done: false, value: view };
  }

  private stopPartial(): IteratorResult<RecordBatchView> {
    this.partialTail = true;
    return { done: true, value: undefined };
  }

  [Symbol.iterator](): this {
    return this;
  }
}

/** Iterates the batches in `buf[start, end)`; see BatchIterator. */
export function iterateBatches(buf: Buffer, start = 0, end = buf.length): BatchIterator {
  return new BatchIterator(buf, start, end);
}

/** Kafka error codes a batch check can return (named from the generated ErrorCode table). */
export const BatchErrorCode = {
  NONE: ErrorCode.NONE,
  CORRUPT_MESSAGE: ErrorCode.CORRUPT_MESSAGE,
  MESSAGE_TOO_LARGE: ErrorCode.MESSAGE_TOO_LARGE,
  INVALID_REQUEST: ErrorCode.INVALID_REQUEST,
  UNSUPPORTED_FOR_MESSAGE_FORMAT: ErrorCode.UNSUPPORTED_FOR_MESSAGE_FORMAT,
  UNSUPPORTED_COMPRESSION_TYPE: ErrorCode.UNSUPPORTED_COMPRESSION_TYPE,
  INVALID_RECORD: ErrorCode.INVALID_RECORD,
  INVALID_TIMESTAMP: ErrorCode.INVALID_TIMESTAMP,
} as const;

interface BatchCheck {
  /** 0 when the records may be appended, otherwise a Kafka error code for the partition. */
  readonly errorCode: number;
  /** Why, for the response's errorMessage (Produce v8+). */
  readonly message: string | null;
  /** The one batch (Produce v3+ carries exactly one) when errorCode is 0. */
  readonly batch: RecordBatchView | null;
}

interface ProduceCheckOptions {
  /** Produce request version (zstd needs ≥ 7). */
  readonly apiVersion: number;
  /** The topic's max.message.bytes; a larger batch is MESSAGE_TOO_LARGE. */
  readonly maxMessageSize?: number;
  /**
   * True when the batch comes from the broker itself (transaction markers, coordinators), not a
   * client: Kafka's LogValidator skips its client-only checks (no control batches, a sequence
   * with every producer id) for those origins.
   */
  readonly allowControl?: boolean;
}

interface Failure {
  readonly errorCode: number;
  readonly message: string;
}

const fail = (errorCode: number, message: string): BatchCheck => ({ errorCode, message, batch: null });

/**
 * Kafka's LogValidator.validateBatch for a batch a leader appends (from a client, or from the
 * broker itself when `fromClient` is false): size against max.message.bytes, the CRC-32C when
 * asked, lastOffsetDelta + 1 == recordsCount > 0, no control batch and a sequence with every
 * producer id from clients. Null when it passes.
 */
function checkLeaderBatch(batch: RecordBatchView, maxMessageSize: number | undefined, checkCrc: boolean, fromClient: boolean): Failure | null {
  if (maxMessageSize !== undefined && batch.sizeInBytes > maxMessageSize) {
    return { errorCode: ErrorCode.MESSAGE_TOO_LARGE, message: `batch of ${batch.sizeInBytes} bytes exceeds max.message.bytes ${maxMessageSize}` };
  }
  if (checkCrc && !batch.isValid()) return { errorCode: ErrorCode.CORRUPT_MESSAGE, message: 'record batch CRC mismatch' };
  if (batch.isControl && fromClient) return { errorCode: ErrorCode.INVALID_RECORD, message: 'clients may not write control records' };
  const count = batch.recordsCount;
  if (count <= 0) return { errorCode: ErrorCode.INVALID_RECORD, message: `invalid record count ${count}` };
  if (batch.lastOffsetDelta + 1 !== count) {
    return { errorCode: ErrorCode.INVALID_RECORD, message: `lastOffsetDelta ${batch.lastOffsetDelta} inconsistent with ${count} records` };
  }
  const producerId = batch.producerId;
  if (fromClient && producerId >= 0 && batch.baseSequence < 0) return { errorCode: ErrorCode.INVALID_RECORD, message: 'idempotent batch without a base sequence' };
  // A transactional flag without a producer id is taken as Kafka takes it: the batch belongs to no
  // producer, so no producer state, transaction or verification applies to it.
  return null;
}

/**
 * Checks one partition's Produce records before append, without decoding records, the way Kafka
 * does it (ProduceRequest.validateRecords, UnifiedLog.analyzeAndValidateRecords,
 * LogValidator.validateBatch): exactly one magic-2 batch, baseOffset 0, sizes, CRC-32C,
 * lastOffsetDelta + 1 == recordsCount > 0, codec allowed at this version, producer fields
 * coherent. Never throws: every problem is an error code for the partition response. Bytes after
 * the batch that do not form a whole batch are ignored, as Kafka trims them: append
 * `batch.bytes`, which the log then takes as validated (no rule is checked twice).
 */
export function validateProduceRecords(records: Buffer | null, options: ProduceCheckOptions): BatchCheck {
  if (records === null || records.length === 0) {
    return fail(BatchErrorCode.INVALID_RECORD, 'Produce requests must have one record batch per partition');
  }
  let batch: RecordBatchView | null = null;
  try {
    const it = iterateBatches(records);
    for (const view of it) {
      if (batch !== null) return fail(BatchErrorCode.INVALID_RECORD, 'Produce requests may carry exactly one record batch per partition');
      batch = view;
    }
  } catch (e) {
    if (e instanceof DecodeError) return fail(BatchErrorCode.CORRUPT_MESSAGE, e.message);
    throw e;
  }
  if (batch === null) return fail(BatchErrorCode.INVALID_RECORD, 'Produce requests must have one whole record batch per partition');
  if (batch.magic !== 2) {
    return fail(BatchErrorCode.INVALID_RECORD, `Produce v${options.apiVersion} only accepts record batches with magic 2, got ${batch.magic}`);
  }
  const code = checkBatchHeader(batch);
  if (code.errorCode !== 0) return code;
  if (batch.compression === 4 && options.apiVersion < 7) {
    return fail(BatchErrorCode.UNSUPPORTED_COMPRESSION_TYPE, 'zstd needs Produce v7 or later');
  }
  if (batch.compression > 4) return fail(BatchErrorCode.CORRUPT_MESSAGE, `unknown compression codec ${batch.compression}`);
  if (batch.baseOffset !== 0) return fail(BatchErrorCode.INVALID_RECORD, `baseOffset should be 0, got ${batch.baseOffset}`);
  const failed = checkLeaderBatch(batch, options.maxMessageSize, true, options.allowControl !== true);
  if (failed !== null) return fail(failed.errorCode, failed.message);
  return { errorCode: 0, message: null, batch };
}

/** Where an append's batches come from (Kafka's AppendOrigin): the checks differ by origin. */
export type BatchOrigin = 'client' | 'coordinator' | 'replication';

interface AppendCheck {
  readonly errorCode: number;
  readonly message: string | null;
  /** Where each batch starts in the records, when errorCode is 0. */
  readonly starts: number[];
}

/**
 * Checks the batch headers of records handed straight to a log (coordinators, the metadata
 * log, mirror and follower appends, tools) and returns each batch's start. Every byte must
 * belong to a whole magic-2 batch. Client and coordinator origins get checkLeaderBatch;
 * replication keeps the source's bytes and gets only the structural checks (its CRC is the
 * fetcher's choice). Never throws.
 */
export function validateAppendRecords(records: Buffer, origin: BatchOrigin, maxMessageSize: number): AppendCheck {
  const bad = (errorCode: number, message: string): AppendCheck => ({ errorCode, message, starts: [] });
  if (records.length === 0) return bad(ErrorCode.INVALID_RECORD, 'no record batch');
  const starts: number[] = [];
  let at = 0;
  while (at < records.length) {
    if (records.length - at < BATCH.HEADER_SIZE) return bad(ErrorCode.CORRUPT_MESSAGE, 'truncated record batch');
    const len = records.readInt32BE(at + BATCH.BATCH_LENGTH);
    const size = len + BATCH.LOG_OVERHEAD;
    if (size < BATCH.HEADER_SIZE || at + size > records.length) return bad(ErrorCode.CORRUPT_MESSAGE, `bad batch length ${len}`);
    const v = new RecordBatchView(records, at);
    if (v.magic !== 2) return bad(ErrorCode.INVALID_RECORD, `magic ${v.magic} is not 2`);
    if (origin !== 'replication') {
      const failed = checkLeaderBatch(v, maxMessageSize, true, origin === 'client');
      if (failed !== null) return bad(failed.errorCode, failed.message);
    } else if (v.lastOffsetDelta < 0) {
      return bad(ErrorCode.CORRUPT_MESSAGE, 'negative lastOffsetDelta');
    }
    starts.push(at);
    at += size;
  }
  return { errorCode: 0, message: null, starts };
}

/**
 * message.timestamp.before/after.max.ms against a CreateTime batch's max timestamp (Kafka's
 * LogValidator.validateTimestamp); null when within bounds or the batch has no timestamp.
 */
export function checkBatchTimestamp(batch: RecordBatchView, now: number, beforeMaxMs: number, afterMaxMs: number): Failure | null {
  const ts = batch.maxTimestamp;
  if (ts < 0 || (now - ts <= beforeMaxMs && ts - now <= afterMaxMs)) return null;
  return { errorCode: ErrorCode.INVALID_TIMESTAMP, message: `timestamp ${ts} is out of range at ${now}` };
}

/**
 * Structural header check of one magic-2 batch, for any origin (Produce, replication, mirror
 * fetch, log recovery): the int64 fields are in range and the records region can hold
 * recordsCount records. It does not check the CRC (isValid does).
 */
export function checkBatchHeader(batch: RecordBatchView): BatchCheck {
  try {
    if (batch.magic !== 2) return fail(BatchErrorCode.CORRUPT_MESSAGE, `magic ${batch.magic} is not 2`);
    if (batch.sizeInBytes < BATCH.HEADER_SIZE) return fail(BatchErrorCode.CORRUPT_MESSAGE, 'batch smaller than its header');
    if (batch.offset + batch.sizeInBytes > batch.buf.length) return fail(BatchErrorCode.CORRUPT_MESSAGE, 'batch extends past its buffer');
    void batch.baseOffset;
    void batch.baseTimestamp;
    void batch.maxTimestamp;
    void batch.producerId;
    const count = batch.recordsCount;
    if (count < 0) return fail(BatchErrorCode.CORRUPT_MESSAGE, `negative record count ${count}`);
    // An uncompressed record takes at least 7 bytes (length, attributes, two deltas, key and value
    // lengths, header count: one byte each), so the count is bounded before any record is read.
    if (batch.compression === 0 && count * 7 > batch.sizeInBytes - BATCH.HEADER_SIZE) {
      return fail(BatchErrorCode.CORRUPT_MESSAGE, `${count} records cannot fit in ${batch.sizeInBytes - BATCH.HEADER_SIZE} bytes`);
    }
  } catch (e) {
    if (e instanceof DecodeError) return fail(BatchErrorCode.CORRUPT_MESSAGE, e.message);
    throw e;
  }
  return { errorCode: 0, message: null, batch };
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

/**
 * Turns a batch into a LogAppendTime batch stamped `timestamp`, as a broker does for topics with
 * message.timestamp.type=LogAppendTime: sets the attribute bit and maxTimestamp, which lie under
 * the CRC, so the CRC is recomputed (Kafka's DefaultRecordBatch.setMaxTimestamp).
 */
export function patchLogAppendTime(batch: RecordBatchView, timestamp: number): void {
  const { buf, offset } = batch;
  buf.writeInt16BE(batch.attributes | ATTR.TIMESTAMP_LOG_APPEND, offset + BATCH.ATTRIBUTES);
  writeOffset(buf, offset + BATCH.MAX_TIMESTAMP, timestamp);
  batch.updateCrc();
}

/** Sets partitionLeaderEpoch in place (outside the CRC). */
export function patchPartitionLeaderEpoch(buf: Buffer, batchStart: number, epoch: number): void {
  buf.writeInt32BE(epoch, batchStart + BATCH.PARTITION_LEADER_EPOCH);
}
