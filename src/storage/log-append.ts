/**
 * The two append paths of a partition log (Kafka's UnifiedLog.append as leader and as
 * follower): the leader path validates, checks producer state, assigns offsets and the leader
 * epoch in place and writes; the mirror path keeps the source's offsets and epochs byte for
 * byte. Both stage producer-state changes and commit them only once the bytes are written.
 *
 * Concurrency contract: called only from inside the PartitionLog's per-partition queue, one at
 * a time; the fsync an append may need is awaited by the caller, outside the queue.
 */
import { DecodeError } from '../protocol/decode-error.js';
import { ErrorCode } from '../protocol/generated/errors.js';
import { KafkaError } from '../protocol/kafka-error.js';
import {
  BATCH,
  RecordBatchView,
  checkBatchTimestamp,
  patchBaseOffset,
  patchLogAppendTime,
  patchPartitionLeaderEpoch,
  validateAppendRecords,
  type BatchOrigin,
} from '../protocol/record-batch.js';
import type { AppendedBatch } from './log-segment.js';
import type { PartitionContext } from './partition-context.js';
import type { AppendOptions, AppendResult, MirrorAppendOptions } from './partition-log-options.js';
import type { AppendOrigin, CompletedTxn } from './producer-state.js';
import { ControlRecordType, controlTypeOf, markerCoordinatorEpoch } from '../protocol/control-records.js';

export interface Written {
  readonly result: AppendResult;
  /** The append must wait for an fsync before it is acknowledged. */
  readonly sync: boolean;
}

/** The leader append inside the partition's queue (PartitionLog.appendAsLeader): offsets and epoch assigned here. */
export async function leaderAppend(log: PartitionContext, records: Buffer, leaderEpoch: number, opts: AppendOptions): Promise<Written> {
  log.checkOnline();
  const origin: AppendOrigin = opts.origin ?? 'client';
  const starts = batchStarts(records, origin, opts.prevalidated === true, log.config.maxMessageBytes);
  if (leaderEpoch < log.epochs.latestEpoch) {
    throw new KafkaError(ErrorCode.FENCED_LEADER_EPOCH, `leader epoch ${leaderEpoch} is older than ${log.epochs.latestEpoch}`);
  }
  const now = log.clock.now();
  const logAppend = (opts.timestampType ?? log.config.messageTimestampType) === 'LogAppendTime';
  if (starts.length === 1 && origin === 'client') {
    const dup = log.producers.findDuplicate(new RecordBatchView(records, 0));
    if (dup !== undefined) {
      return {
        result: { errorCode: 0, baseOffset: dup.firstOffset, lastOffset: dup.lastOffset, logAppendTime: logAppend ? now : -1, logStartOffset: log.logStartOffset },
        sync: false,
      };
    }
  }
  const staged = log.producers.begin();
  const firstOffset = log.local.logEndOffset;
  let next = firstOffset;
  let lastControlType = -1;
  const batches: AppendedBatch[] = [];
  for (const at of starts) {
    const v = new RecordBatchView(records, at);
    if (!logAppend) {
      const late = checkBatchTimestamp(v, now, log.config.messageTimestampBeforeMaxMs, log.config.messageTimestampAfterMaxMs);
      if (late !== null) throw new KafkaError(late.errorCode, late.message);
    }
    patchBaseOffset(records, at, next);
    patchPartitionLeaderEpoch(records, at, leaderEpoch);
    if (logAppend) patchLogAppendTime(v, now);
    const ctype = v.isControl ? controlTypeOf(v) : -1;
    const coordEpoch = opts.coordinatorEpoch ?? (ctype === ControlRecordType.ABORT || ctype === ControlRecordType.COMMIT ? markerCoordinatorEpoch(v) : -1);
    staged.add(v, origin, ctype, coordEpoch);
    batches.push({ baseOffset: next, lastOffset: v.lastOffset, maxTimestamp: v.maxTimestamp, size: v.sizeInBytes });
    next = v.lastOffset + 1;
    lastControlType = ctype;
  }
  await writeBatches(log, [records], batches);
  log.lastBatch = { partitionLeaderEpoch: leaderEpoch, controlType: lastControlType, nextOffset: next };
  // A new epoch reaches the checkpoint file at the log's next fsync (./leader-epoch-cache.ts).
  log.epochs.assign(leaderEpoch, firstOffset);
  const completed = staged.commit();
  if (completed.length > 0) await commitProducerState(log, completed);
  const result: AppendResult = { errorCode: 0, baseOffset: firstOffset, lastOffset: next - 1, logAppendTime: logAppend ? now : -1, logStartOffset: log.logStartOffset };
  return { result, sync: log.afterWrite(next - firstOffset, opts.requiredAcks === -1) };
}

/** The mirror and follower append inside the partition's queue (PartitionLog.appendAsMirror, appendAsFollower): the source's or leader's offsets and epochs kept. */
export async function mirrorAppend(log: PartitionContext, records: Buffer, opts: MirrorAppendOptions): Promise<Written> {
  log.checkOnline();
  const starts = batchStarts(records, 'replication', false, log.config.maxMessageBytes);
  let expected = log.local.logEndOffset;
  const batches: AppendedBatch[] = [];
  const staged = log.producers.begin();
  const epochChanges: [number, number][] = [];
  let latest = log.epochs.latestEpoch;
  let messages = 0;
  let lastEpoch = -1;
  let lastControlType = -1;
  for (const at of starts) {
    const v = new RecordBatchView(records, at);
    if (v.baseOffset < expected || (opts.requireContiguous === true && at === 0 && v.baseOffset !== expected)) {
      throw new KafkaError(ErrorCode.OFFSET_OUT_OF_RANGE, `batch at offset ${v.baseOffset} does not continue the log end ${expected}`);
    }
    if (opts.verifyCrc === true && !v.isValid()) throw new KafkaError(ErrorCode.CORRUPT_MESSAGE, `CRC mismatch in batch at ${v.baseOffset}`);
    const ctype = v.isControl ? controlTypeOf(v) : -1;
    staged.add(v, 'replication', ctype, -1);
    if (v.partitionLeaderEpoch >= 0 && v.partitionLeaderEpoch !== latest) {
      epochChanges.push([v.partitionLeaderEpoch, v.baseOffset]);
      latest = v.partitionLeaderEpoch;
    }
    batches.push({ baseOffset: v.baseOffset, lastOffset: v.lastOffset, maxTimestamp: v.maxTimestamp, size: v.sizeInBytes });
    messages += v.lastOffsetDelta + 1;
    expected = v.lastOffset + 1;
    lastEpoch = v.partitionLeaderEpoch;
    lastControlType = ctype;
  }
  const first = batches[0] as AppendedBatch;
  const active = log.local.active;
  if (active.size === 0 && active.baseOffset < first.baseOffset && log.local.segments.length === 1 && log.local.logEndOffset === active.baseOffset) {
    // An empty log adopting the source's start: the segment is renamed by rolling at the first offset.
    await log.roll(first.baseOffset);
    log.logStartOffset = first.baseOffset;
  }
  await writeBatches(log, [records], batches);
  log.lastBatch = { partitionLeaderEpoch: lastEpoch, controlType: lastControlType, nextOffset: expected };
  for (const [epoch, offset] of epochChanges) log.epochs.assign(epoch, offset);
  const completed = staged.commit();
  if (completed.length > 0) await commitProducerState(log, completed);
  const result: AppendResult = { errorCode: 0, baseOffset: first.baseOffset, lastOffset: expected - 1, logAppendTime: -1, logStartOffset: log.logStartOffset };
  return { result, sync: log.afterWrite(messages, opts.requiredAcks === -1) };
}

/**
 * Where each batch of an append starts, after the header rules of validateAppendRecords; a
 * prevalidated append is one whole batch (anything else is checked in full after all).
 */
function batchStarts(records: Buffer, origin: BatchOrigin, prevalidated: boolean, maxMessageBytes: number): number[] {
  if (prevalidated && records.length >= BATCH.HEADER_SIZE && new RecordBatchView(records, 0).sizeInBytes === records.length) return [0];
  const check = validateAppendRecords(records, origin, maxMessageBytes);
  if (check.errorCode !== 0) throw new KafkaError(check.errorCode, check.message ?? 'invalid record batch');
  return check.starts;
}

/**
 * Records aborted transactions of the markers just written: in memory at once, then in the
 * active segment's .txnindex. Reads do not wait for the append queue, and the producer state
 * already counts these transactions as ended, so the last stable offset may pass the markers
 * (once the ISR has them) while the index is being written; a read_committed fetch then must
 * already find the transactions among the aborted ones, or it hands out their records.
 */
async function commitProducerState(log: PartitionContext, completed: CompletedTxn[]): Promise<void> {
  const entries = completed.filter((t) => t.isAborted).map((t) => log.producers.abortedEntry(t));
  for (const entry of entries) log.aborted.push(entry);
  for (const entry of entries) await log.local.active.appendAbortedTxn(entry);
}

/** Rolls if needed, then writes the batches at the log end. */
async function writeBatches(log: PartitionContext, buffers: Buffer[], batches: AppendedBatch[]): Promise<void> {
  const first = batches[0] as AppendedBatch;
  const last = batches.at(-1) as AppendedBatch;
  const bytes = batches.reduce((n, b) => n + b.size, 0);
  const maxTs = batches.reduce((m, b) => Math.max(m, b.maxTimestamp), -1);
  if (log.local.shouldRoll(last.lastOffset, bytes, maxTs)) await log.roll(first.baseOffset);
  await log.local.append(buffers, batches);
}

/** The AppendResult of an append that threw: a KafkaError's code, CORRUPT_MESSAGE for unreadable input. */
export function appendFailure(e: unknown, logStartOffset: number): AppendResult {
  const fail = (errorCode: number, errorMessage: string): AppendResult => ({
    errorCode,
    baseOffset: -1,
    lastOffset: -1,
    logAppendTime: -1,
    logStartOffset,
    errorMessage,
  });
  if (e instanceof KafkaError) return fail(e.code, e.message);
  // A header field no batch can hold (an int64 beyond 2^53, a record that overruns its batch)
  // is corrupt input, answered with a code rather than a failed request.
  if (e instanceof DecodeError || e instanceof RangeError) return fail(ErrorCode.CORRUPT_MESSAGE, e.message);
  throw e;
}
