import { BATCH, RecordBatchView } from '../protocol/record-batch.js';
import { MIN_BATCH_LENGTH } from './batch-scan.js';
import { AppendError, StorageError } from './errors.js';
import type { LogConfig } from './log-config.js';
import type { AppendOrigin } from './producer-state.js';

/**
 * Checks the batch headers of an append without decoding records (Kafka's LogValidator checks
 * that need no record walk) and returns each batch's start. Client and coordinator origins get
 * the full checks; replication (mirror) only the structural ones. Throws AppendError.
 */
export function validateBatchHeaders(records: Buffer, origin: AppendOrigin, checkCrc: boolean, config: LogConfig): number[] {
  const starts: number[] = [];
  if (records.length === 0) throw new AppendError(StorageError.INVALID_RECORD, 'no record batch');
  let at = 0;
  while (at < records.length) {
    if (records.length - at < BATCH.HEADER_SIZE) throw new AppendError(StorageError.CORRUPT_MESSAGE, 'truncated record batch');
    const len = records.readInt32BE(at + BATCH.BATCH_LENGTH);
    const size = len + BATCH.LOG_OVERHEAD;
    if (len < MIN_BATCH_LENGTH || at + size > records.length) throw new AppendError(StorageError.CORRUPT_MESSAGE, `bad batch length ${len}`);
    const v = new RecordBatchView(records, at);
    if (v.magic !== 2) throw new AppendError(StorageError.INVALID_RECORD, `magic ${v.magic} is not 2`);
    if (origin !== 'replication') {
      if (size > config.maxMessageBytes) {
        throw new AppendError(StorageError.MESSAGE_TOO_LARGE, `batch of ${size} bytes exceeds max.message.bytes ${config.maxMessageBytes}`);
      }
      if (checkCrc && !v.isValid()) throw new AppendError(StorageError.CORRUPT_MESSAGE, 'record batch CRC mismatch');
      const count = v.recordsCount;
      if (count <= 0 || v.lastOffsetDelta !== count - 1) {
        throw new AppendError(StorageError.INVALID_RECORD, `lastOffsetDelta ${v.lastOffsetDelta} inconsistent with ${count} records`);
      }
      if (v.isControl && origin === 'client') throw new AppendError(StorageError.INVALID_RECORD, 'clients may not write control batches');
      if (!v.isControl && v.producerId >= 0 && v.baseSequence < 0) throw new AppendError(StorageError.INVALID_RECORD, 'idempotent batch without a sequence');
      if (v.isTransactional && v.producerId < 0) throw new AppendError(StorageError.INVALID_RECORD, 'transactional batch without a producer id');
    } else if (v.lastOffsetDelta < 0) {
      throw new AppendError(StorageError.CORRUPT_MESSAGE, 'negative lastOffsetDelta');
    }
    starts.push(at);
    at += size;
  }
  return starts;
}

/** message.timestamp.before/after.max.ms against the batch's max timestamp (CreateTime). */
export function checkTimestamps(v: RecordBatchView, now: number, config: LogConfig): void {
  const ts = v.maxTimestamp;
  if (ts < 0) return;
  if (now - ts > config.messageTimestampBeforeMaxMs || ts - now > config.messageTimestampAfterMaxMs) {
    throw new AppendError(StorageError.INVALID_TIMESTAMP, `timestamp ${ts} is out of range at ${now}`);
  }
}
