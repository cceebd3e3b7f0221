/**
 * One fetched partition without an error, Kafka's `processPartitionData`: the batches the walk
 * keeps (src/protocol/fetched-batch-walk.ts) go to `appendAsMirror` as one slice of the response frame, so offsets,
 * epochs and bytes stay the source's (KIP-1279 §8.3). Then the walk's stop reason is acted on:
 * stale source metadata is refreshed (§9.5), an epoch above the destination leader epoch fences
 * the partition (§9.4), and a source epoch close to the destination's asks for a proactive bump.
 *
 * A batch failing its CRC-32C fails the partition before anything of the response is appended,
 * as Kafka's UnifiedLog.appendAsFollower validates every batch before writing any. The failure
 * is retryable: AbstractFetcherThread treats a CorruptRecordException in the leader's data as a
 * partition error to retry after a backoff (the corruption may be transient, e.g. a partial
 * read), so the state machine's FAILED retry fetches it again, and describe shows the reason.
 */
import { channel } from 'node:diagnostics_channel';
import { ErrorCode } from '../protocol/generated/errors.js';
import { KafkaError } from '../protocol/kafka-error.js';
import { RecordBatchView } from '../protocol/record-batch.js';
import { type CorruptBatch, walkFetchedBatches } from '../protocol/fetched-batch-walk.js';
import { LEADER_EPOCH_BUMP_INCREMENT, LEADER_EPOCH_BUMP_THRESHOLD } from './fetcher-config.js';
import type { FetcherContext } from './fetcher-context.js';
import { truncateOnDivergingEpoch } from './epoch-truncation.js';
import { handlePartitionError } from './partition-errors.js';
import type { MirrorLog } from './mirror-log.js';
import { lastBatchEpoch, type PartitionState } from './partition-state.js';
import type { FetchPartitionResponse } from './source-endpoint.js';

/** Mirror fetch progress, observed by src/metrics (the channel names are in src/metrics/channels.ts). */
const mirrorFetchChannel = channel('fjord:mirror-fetch');

export function localLogGone(): KafkaError {
  return new KafkaError(ErrorCode.NOT_LEADER_OR_FOLLOWER, 'the local log is gone');
}

function hex32(n: number): string {
  return `0x${n.toString(16).padStart(8, '0')}`;
}

/** CORRUPT_MESSAGE, Kafka's CorruptRecordException code, naming where the bad batch is. */
function corruptBatchError(ps: PartitionState, c: CorruptBatch): KafkaError {
  const where = `${ps.tp.topic}-${ps.tp.partition}`;
  return new KafkaError(ErrorCode.CORRUPT_MESSAGE, `${where}: record batch at base offset ${c.baseOffset} fails its CRC-32C check (stored ${hex32(c.storedCrc)}, computed ${hex32(c.computedCrc)})`);
}

/** Applies one partition of a Fetch response. Runs serialised per partition. */
export async function processPartitionResponse(ctx: FetcherContext, ps: PartitionState, pr: FetchPartitionResponse): Promise<void> {
  if (!ctx.isCurrent(ps)) return;
  if (pr.errorCode !== ErrorCode.NONE) {
    await handlePartitionError(ctx, ps, pr.errorCode, pr.currentLeaderId, pr.currentLeaderEpoch);
    return;
  }
  ps.sourceHighWatermark = pr.highWatermark;
  ps.sourceLogStartOffset = pr.logStartOffset;
  ps.lastFetchMs = ctx.clock.now();
  delete ps.lastError;
  if (pr.divergingEpoch !== null) {
    // The source's log diverged from ours at our LastFetchedEpoch: it sent no records, and
    // nothing is appended before our log is cut back to where the two agree.
    await truncateOnDivergingEpoch(ctx, ps, pr.divergingEpoch.epoch, pr.divergingEpoch.endOffset);
    return;
  }
  if (mirrorFetchChannel.hasSubscribers) mirrorFetchChannel.publish({ topic: ps.tp.topic, partition: ps.tp.partition, records: pr.records, sourceHighWatermark: pr.highWatermark });
  const log = ctx.cb.log(ps.tp);
  if (log === undefined) throw localLogGone();
  const dle = ctx.cb.destinationLeaderEpoch(ps.tp);
  maybeBumpProactively(ctx, ps, ps.sourceLeaderEpoch, dle);
  const records = pr.records;
  if (records === null || records.length === 0) {
    await followLogStart(ctx, ps, log, pr.logStartOffset);
    return;
  }

  const run = walkFetchedBatches(records, ps.fetchOffset, ps.sourceLeaderEpoch, dle, ps.maxBytes);
  if (run.corrupt !== null) throw corruptBatchError(ps, run.corrupt);
  if (run.oversizedBatch > 0) ps.maxBytes = run.oversizedBatch;
  if (run.start >= 0) {
    if (run.firstBaseOffset < log.logEndOffset) {
      // The first batch straddles our end (our log ends mid-batch, e.g. after a truncation):
      // drop our overlapping batch and fetch again from where our log now ends, so the source's
      // batches land whole and contiguous.
      await log.truncateTo(run.firstBaseOffset);
      ps.fetchOffset = log.logEndOffset;
      ps.lastFetchedEpoch = lastBatchEpoch(log);
      if (ps.fetchOffset < run.firstBaseOffset) return;
    }
    const slice = records.subarray(run.start, run.end);
    const res = await log.appendAsMirror(slice);
    if (res.errorCode !== ErrorCode.NONE) throw new KafkaError(res.errorCode, res.errorMessage ?? `appendAsMirror failed with error ${res.errorCode}`);
    if (!ctx.isCurrent(ps)) return;
    ps.fetchOffset = run.lastOffset + 1;
    ps.lastFetchedEpoch = run.lastEpoch;
    ps.mirroredMaxTimestamp = new RecordBatchView(slice, run.lastBatchStart - run.start).maxTimestamp;
    ctx.stats.batchesAppended += run.batches;
    ctx.stats.bytesAppended += slice.length;
    ctx.cb.onProgress?.(ps.tp);
  }
  await followLogStart(ctx, ps, log, pr.logStartOffset);
  if (run.staleEpoch >= 0) {
    // A batch epoch above the source leader epoch we know: our source metadata is stale (older
    // sources bump epochs without a leader change). Refresh before going on.
    await ctx.refreshMetadata();
    if (ctx.isCurrent(ps) && ps.sourceLeaderEpoch >= 0 && ps.sourceLeaderEpoch < run.staleEpoch) {
      throw new KafkaError(ErrorCode.UNKNOWN_LEADER_EPOCH, `source batch epoch ${run.staleEpoch} is above the source leader epoch ${ps.sourceLeaderEpoch} after a metadata refresh`);
    }
    return;
  }
  if (run.fencedEpoch >= 0) {
    ctx.remove(ps);
    ctx.cb.onEpochFenced(ps.tp, run.fencedEpoch);
    return;
  }
  maybeBumpProactively(ctx, ps, run.maxEpoch, dle);
}

/**
 * The source's log start moved (retention or DeleteRecords there): move ours with it, as
 * ReplicaFetcherThread.processPartitionData calls `maybeIncrementLogStartOffset` with the
 * leader's log start offset (KIP-1279 §8.3). Bounded by our high watermark, as Kafka's
 * UnifiedLog refuses a log start above it; what is left moves on a later fetch.
 */
export async function followLogStart(ctx: FetcherContext, ps: PartitionState, log: MirrorLog, sourceLogStart: number): Promise<void> {
  if (!ctx.isCurrent(ps)) return;
  const target = Math.min(sourceLogStart, log.highWatermark);
  if (target <= log.logStartOffset || target > log.logEndOffset) return;
  await log.deleteRecordsBefore(target);
  ps.sourceLogStartOffset = sourceLogStart;
}

/** Asks for a bump when the source epoch comes within the threshold of the destination's (§9.4). */
export function maybeBumpProactively(ctx: FetcherContext, ps: PartitionState, sourceEpoch: number, dle: number): void {
  const sle = Math.max(sourceEpoch, ps.sourceLeaderEpoch);
  if (sle < 0 || sle <= dle - LEADER_EPOCH_BUMP_THRESHOLD) return;
  const target = sle + LEADER_EPOCH_BUMP_INCREMENT;
  if (target <= ps.bumpRequestedFor) return;
  ps.bumpRequestedFor = target;
  ctx.cb.requestEpochBump(ps.tp, target);
}
