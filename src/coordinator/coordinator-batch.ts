import { crc32c } from '../protocol/crc32c.js';
import { Writer } from '../protocol/writer.js';
import { ATTR, BATCH, RecordBatchView } from '../protocol/record-batch.js';
import { DecodeError } from '../protocol/decode-error.js';
import { forEachRecord } from '../protocol/record-walk.js';

/**
 * Coordinator records as key/value byte pairs, and the uncompressed magic-2 batches that carry
 * them. Coordinators write few, small records per operation, so batches stay uncompressed (as
 * Kafka's coordinators do by default) and this module needs no codec.
 */
export interface CoordinatorRecord {
  readonly key: Buffer;
  /** null is a tombstone: compaction removes the key. */
  readonly value: Buffer | null;
}

/** The producer of a transactional coordinator batch (TxnOffsetCommit offsets). */
export interface BatchProducer {
  readonly producerId: number;
  readonly producerEpoch: number;
}

/**
 * Builds one uncompressed batch (baseOffset 0; the log assigns offsets). With `producer` it is a
 * transactional batch of that producer, whose records take effect only when a COMMIT marker for
 * the producer follows. Such a batch carries sequence 0: the log refuses a producer id without a
 * sequence, and does not check sequences of coordinator appends.
 */
export function buildCoordinatorBatch(records: readonly CoordinatorRecord[], timestamp: number, producer?: BatchProducer): Buffer {
  const body = new Writer(1024);
  records.forEach((rec, i) => {
    const rw = new Writer(256);
    rw.int8(0); // record attributes
    rw.varlong(0n); // timestamp delta
    rw.varint(i); // offset delta
    rw.varint(rec.key.length).raw(rec.key);
    if (rec.value === null) rw.varint(-1);
    else rw.varint(rec.value.length).raw(rec.value);
    rw.varint(0); // headers
    body.varint(rw.length);
    for (const c of rw.chunkList()) body.raw(c);
  });
  const recs = body.toBuffer();
  const buf = Buffer.alloc(BATCH.HEADER_SIZE + recs.length);
  buf.writeBigInt64BE(0n, BATCH.BASE_OFFSET);
  buf.writeInt32BE(buf.length - BATCH.LOG_OVERHEAD, BATCH.BATCH_LENGTH);
  buf.writeInt32BE(-1, BATCH.PARTITION_LEADER_EPOCH);
  buf.writeInt8(2, BATCH.MAGIC);
  buf.writeInt16BE(producer ? ATTR.TRANSACTIONAL : 0, BATCH.ATTRIBUTES);
  buf.writeInt32BE(records.length - 1, BATCH.LAST_OFFSET_DELTA);
  buf.writeBigInt64BE(BigInt(timestamp), BATCH.BASE_TIMESTAMP);
  buf.writeBigInt64BE(BigInt(timestamp), BATCH.MAX_TIMESTAMP);
  buf.writeBigInt64BE(BigInt(producer?.producerId ?? -1), BATCH.PRODUCER_ID);
  buf.writeInt16BE(producer?.producerEpoch ?? -1, BATCH.PRODUCER_EPOCH);
  buf.writeInt32BE(producer ? 0 : -1, BATCH.BASE_SEQUENCE);
  buf.writeInt32BE(records.length, BATCH.RECORDS_COUNT);
  recs.copy(buf, BATCH.HEADER_SIZE);
  buf.writeUInt32BE(crc32c(buf.subarray(BATCH.ATTRIBUTES)), BATCH.CRC);
  return buf;
}

export interface ReplayedRecord extends CoordinatorRecord {
  readonly offset: number;
}

/** A replayed batch: its records, or the fact that it was a control batch (transaction marker). */
export interface ReplayedBatch {
  readonly baseOffset: number;
  readonly lastOffset: number;
  readonly isControl: boolean;
  readonly isTransactional: boolean;
  readonly producerId: number;
  readonly records: ReplayedRecord[];
}

/**
 * Walks the whole batches in `buf` (a trailing partial batch is ignored, as Fetch allows).
 * Compressed batches are refused: coordinators write uncompressed batches only.
 */
export function* readCoordinatorBatches(buf: Buffer): Generator<ReplayedBatch> {
  let at = 0;
  while (at + BATCH.HEADER_SIZE <= buf.length) {
    const view = new RecordBatchView(buf, at);
    const size = view.sizeInBytes;
    if (size < BATCH.HEADER_SIZE) throw new DecodeError(`batch size ${size} too small`, at);
    if (at + size > buf.length) return;
    if (view.magic !== 2) throw new DecodeError(`coordinator batch with magic ${view.magic}`, at);
    if (view.compression !== 0) throw new DecodeError('compressed coordinator batch', at);
    const baseOffset = view.baseOffset;
    const records: ReplayedRecord[] = [];
    try {
      forEachRecord(view, (r) => {
        if (r.valueAt + Math.max(r.valueLength, 0) > at + size) throw new RangeError('value overruns the batch');
        const value = r.valueLength < 0 ? null : buf.subarray(r.valueAt, r.valueAt + r.valueLength);
        records.push({ key: r.key ?? Buffer.alloc(0), value, offset: baseOffset + r.offsetDelta });
      });
    } catch (e) {
      throw new DecodeError(`coordinator batch record: ${(e as Error).message}`, at);
    }
    yield {
      baseOffset,
      lastOffset: view.lastOffset,
      isControl: view.isControl,
      isTransactional: view.isTransactional,
      producerId: view.producerId,
      records,
    };
    at += size;
  }
}
