/**
 * One batch of a coordinator shard's writes (./coordinator-runtime.ts runs them one after
 * another per shard): the writes queued while the previous batch was out are applied to the
 * shard, appended as one log append, then answered, or reverted and failed together.
 */
import { buildCoordinatorBatch, type CoordinatorRecord, type ReplayedBatch } from './coordinator-batch.js';
import type { CoordinatorShard, WriteResult } from './coordinator-shard.js';
import type { AppliedWrite, ShardHolder } from './shard-holder.js';
import { ErrorCode } from '../protocol/generated/errors.js';
import { KafkaError } from '../protocol/kafka-error.js';
import { buildEndTxnMarkerBatch, controlRecordKey, ControlRecordType, endTxnMarkerValue } from '../protocol/control-records.js';

/** Kafka's default max.message.bytes (1 MiB + 12): a coordinator batch stays within it. */
export const DEFAULT_MAX_BATCH_BYTES = 1048588 - 4096;
/** A record's framing within its batch, at most (length, attributes, deltas, lengths, headers). */
const RECORD_OVERHEAD = 24;

/** Maps a log append error to what a coordinator client understands (Kafka's CoordinatorRuntime mapping). */
function mapAppendError(code: number): number {
  switch (code) {
    case ErrorCode.UNKNOWN_TOPIC_OR_PARTITION:
    case ErrorCode.NOT_ENOUGH_REPLICAS:
    case ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND:
    case ErrorCode.REQUEST_TIMED_OUT:
      return ErrorCode.COORDINATOR_NOT_AVAILABLE;
    case ErrorCode.NOT_LEADER_OR_FOLLOWER:
    case ErrorCode.KAFKA_STORAGE_ERROR:
      return ErrorCode.NOT_COORDINATOR;
    default:
      return ErrorCode.UNKNOWN_SERVER_ERROR;
  }
}

/**
 * One batch: apply every write queued while the previous batch was out (replaying each one's
 * records into the shard under a snapshot), append all their records at once (one log append,
 * one fsync), then release the responses in order (committed) or revert the shard to the
 * snapshot and answer each write with its failure (failed), as Kafka's CoordinatorRuntime
 * does with its current batch. Plain records of consecutive writes share one record batch; a
 * transactional write or an end-transaction marker is a record batch of its own within the
 * same append. A write that emits nothing and saw only committed state is answered at once.
 */
export async function runShardBatch<S extends CoordinatorShard>(holder: ShardHolder<S>, opts: { readonly now: number; readonly maxBytes: number; readonly topic: string }): Promise<void> {
  const { now, maxBytes } = opts;
  const shard = holder.shard;
  const snapshots = shard.snapshots;
  const nextOffset = holder.log.logEndOffset;
  const applied: AppliedWrite<S>[] = [];
  const batches: Buffer[] = [];
  let plain: CoordinatorRecord[] = [];
  const flushPlain = (): void => {
    if (plain.length > 0) batches.push(buildCoordinatorBatch(plain, now));
    plain = [];
  };
  let count = 0;
  let bytes = 0;
  while (holder.queue.length > 0 && (count === 0 || bytes < maxBytes)) {
    const write = holder.queue.shift()!;
    snapshots.snapshot();
    let out: WriteResult<unknown>;
    let n: number;
    try {
      out = write.op(shard);
      n = applyWrite(shard, out, nextOffset + count);
    } catch (e) {
      snapshots.revert();
      write.fail(e);
      continue;
    }
    if (count === 0 && n === 0) {
      // Nothing to append and nothing uncommitted seen: answered now, never reverted.
      snapshots.release();
      commitWrite({ write, out });
      continue;
    }
    // The first write with records keeps its snapshot open: it is the batch's, to revert to.
    if (count > 0) snapshots.release();
    applied.push({ write, out });
    count += n;
    if (out.marker) {
      flushPlain();
      batches.push(buildEndTxnMarkerBatch({ ...out.marker, timestamp: now }));
    } else if (out.transactional) {
      flushPlain();
      if (out.records.length > 0) batches.push(buildCoordinatorBatch(out.records, now, out.transactional));
    } else plain.push(...out.records);
    for (const r of out.records) bytes += r.key.length + (r.value?.length ?? 0) + RECORD_OVERHEAD;
  }
  flushPlain();
  if (count === 0) return;
  let errorCode: number;
  try {
    const appended = await holder.log.append(batches.length === 1 ? batches[0]! : Buffer.concat(batches));
    errorCode = appended.errorCode;
  } catch {
    errorCode = ErrorCode.UNKNOWN_SERVER_ERROR;
  }
  if (errorCode === 0) {
    snapshots.release();
    for (const a of applied) commitWrite(a);
    return;
  }
  snapshots.revert();
  const mapped = errorCode === ErrorCode.UNKNOWN_SERVER_ERROR ? errorCode : mapAppendError(errorCode);
  for (const { write, out } of applied) {
    if (!out.onAppendFailed) {
      write.fail(new KafkaError(mapped, `append to ${opts.topic}-${holder.partition} failed with ${errorCode}`));
      continue;
    }
    try {
      write.deliver(out.onAppendFailed(mapped));
    } catch (e) {
      write.fail(e);
    }
  }
}

/** Replays a write's records (or its marker) into the shard at the offsets they will take; returns their count. */
function applyWrite<S extends CoordinatorShard>(shard: S, out: WriteResult<unknown>, baseOffset: number): number {
  const written = out.marker
    ? [{ key: controlRecordKey(out.marker.commit ? ControlRecordType.COMMIT : ControlRecordType.ABORT), value: endTxnMarkerValue(out.marker.coordinatorEpoch) }]
    : out.records;
  if (written.length === 0) return 0;
  const records = written.map((r, i) => ({ key: r.key, value: r.value, offset: baseOffset + i }));
  const producer = out.marker ?? out.transactional;
  const batch: ReplayedBatch = {
    baseOffset,
    lastOffset: baseOffset + records.length - 1,
    isControl: out.marker !== undefined,
    isTransactional: producer !== undefined,
    producerId: producer?.producerId ?? -1,
    records,
  };
  for (const r of records) shard.replay(r, batch);
  return records.length;
}

function commitWrite<S extends CoordinatorShard>({ write, out }: AppliedWrite<S>): void {
  try {
    out.onCommitted?.();
    write.deliver(out.response);
  } catch (e) {
    write.fail(e);
  }
}
