/**
 * Every way a partition log loses batches (Kafka's UnifiedLog.truncateTo,
 * truncateFullyAndStartAt, deleteRecords and deleteOldSegments): truncation of a diverged tail,
 * a full restart at another offset, DeleteRecords and time/size retention. The segments go in
 * LocalLog; the epoch cache, producer state, aborted transactions, log start and high
 * watermark follow here.
 *
 * Concurrency contract: called only from inside the PartitionLog's per-partition queue, one at
 * a time; reads running alongside keep the segments they hold for file.delete.delay.ms.
 */
import { ErrorCode } from '../protocol/generated/errors.js';
import { KafkaError } from '../protocol/kafka-error.js';
import { rebuildProducerState } from './log-loader.js';
import type { LogSegment } from './log-segment.js';
import type { PartitionContext } from './partition-context.js';
import { deleteSnapshotsOutside } from './snapshot-files.js';

/** Removes every batch at or after `offset` (the batch containing it included). */
export async function truncateLocked(log: PartitionContext, offset: number): Promise<void> {
  if (offset >= log.local.logEndOffset) return;
  if (offset < log.logStartOffset) return truncateFullyLocked(log, offset);
  const seg = await log.local.truncateTo(offset);
  log.lastBatch = null;
  const end = log.local.logEndOffset;
  log.epochs.truncateFromEnd(end);
  await log.epochs.flush();
  log.aborted.truncateFromEnd(end);
  await seg.resetTxnIndex();
  for (const t of log.aborted.all) if (t.lastOffset >= seg.baseOffset) await seg.appendAbortedTxn(t);
  if (log.highWatermark > end) log.highWatermark = end;
  await rebuildProducerState(log.local, log.producers, log.highWatermark);
  log.notify();
}

/** Empties the log and restarts it at `offset`. */
export async function truncateFullyLocked(log: PartitionContext, offset: number): Promise<void> {
  await log.local.truncateFully(offset);
  log.lastBatch = null;
  log.logStartOffset = offset;
  log.highWatermark = offset;
  log.epochs.clear();
  await log.epochs.flush(true);
  log.producers.clear();
  log.aborted.clear();
  await deleteSnapshotsOutside(log.local.fs, log.local.dir, offset + 1, -1);
  log.notify();
}

/** DeleteRecords: the log start moves to `offset` (≤ high watermark, else OFFSET_OUT_OF_RANGE). */
export async function deleteRecordsLocked(log: PartitionContext, offset: number): Promise<number> {
  if (offset > log.highWatermark) {
    throw new KafkaError(ErrorCode.OFFSET_OUT_OF_RANGE, `offset ${offset} is above the high watermark ${log.highWatermark}`);
  }
  if (offset > log.logStartOffset) {
    log.logStartOffset = offset;
    await deleteSegmentsBelowStart(log);
  }
  return log.logStartOffset;
}

async function deleteSegmentsBelowStart(log: PartitionContext): Promise<void> {
  await log.local.deleteSegmentsBelow(log.logStartOffset);
  log.epochs.truncateFromStart(log.logStartOffset);
  await log.epochs.flush();
  log.aborted.truncateFromStart(log.logStartOffset);
}

/**
 * Time and size retention (cleanup.policy containing delete): deletes whole segments below
 * the high watermark whose newest timestamp is older than retention.ms, then oldest segments
 * while the log exceeds retention.bytes. The active segment goes too (after a roll) when all
 * of it is expired. Returns the number of segments deleted.
 */
export async function retentionLocked(log: PartitionContext): Promise<number> {
  if (!log.config.cleanupPolicy.includes('delete')) return 0;
  const n = log.local.retainableSegments(log.highWatermark);
  if (n === 0) return 0;
  if (n === log.local.segments.length) await log.roll(log.local.logEndOffset);
  await log.local.deleteOldest(n);
  log.logStartOffset = Math.max(log.logStartOffset, (log.local.segments[0] as LogSegment).baseOffset);
  await deleteSegmentsBelowStart(log);
  log.notify();
  return n;
}
