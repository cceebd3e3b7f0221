/**
 * Epoch truncation of the mirror fetcher, Kafka's `truncateToEpochEndOffsets`, reached two ways:
 *
 * - the truncating phase (KIP-1279 §9.5): when a partition is added, it asks its source leader,
 *   with OffsetsForLeaderEpoch, where the local log's latest epoch ends on the source, and drops
 *   whatever the local log holds beyond that point. A log without epochs has nothing to compare
 *   and goes straight to fetching.
 * - truncation on the fetch response (AbstractFetcherThread.truncateOnFetchResponse): while
 *   fetching, every Fetch carries LastFetchedEpoch, and a source whose log diverged from ours
 *   (an unclean election there, a leader change we had not seen when we last truncated) answers
 *   a DivergingEpoch instead of records. We truncate to it before anything more is appended, so
 *   a batch is never appended over history the source no longer has.
 *
 * Either way the cut follows the rules the replica follower uses too
 * (src/storage/truncation-point.ts), and the partition then fetches from its new log end, with
 * the epoch of its last batch as the next LastFetchedEpoch.
 */
import { ErrorCode } from '../protocol/generated/errors.js';
import { KafkaError } from '../protocol/kafka-error.js';
import { truncateToLeaderEpochEnd } from '../storage/truncation-point.js';
import type { FetcherContext } from './fetcher-context.js';
import { localLogGone } from './partition-data.js';
import { handlePartitionError } from './partition-errors.js';
import { lastBatchEpoch, type PartitionState } from './partition-state.js';
import type { MirrorLog } from './mirror-log.js';
import type { EpochEndOffset } from './source-endpoint.js';

/** One OffsetsForLeaderEpoch round for partitions (all led by `brokerId`) in the truncating state. */
export async function truncatePartitions(ctx: FetcherContext, brokerId: number, parts: readonly PartitionState[]): Promise<void> {
  const ask: PartitionState[] = [];
  for (const ps of parts) {
    const log = ctx.cb.log(ps.tp);
    if (log === undefined) {
      ctx.failPartition(ps, localLogGone(), false);
      continue;
    }
    if (log.latestEpoch < 0) {
      ps.fetchOffset = log.logEndOffset;
      ps.lastFetchedEpoch = -1;
      ps.state = 'fetching';
    } else {
      ask.push(ps);
    }
  }
  if (ask.length === 0) return;
  let res: EpochEndOffset[];
  try {
    ctx.stats.epochLookups++;
    res = await ctx.endpoint.offsetsForLeaderEpoch(
      brokerId,
      ask.map((ps) => ({
        topic: ps.tp.topic,
        partition: ps.tp.partition,
        currentLeaderEpoch: ps.sourceLeaderEpoch,
        leaderEpoch: ctx.cb.log(ps.tp)?.latestEpoch ?? -1,
      })),
    );
  } catch (err) {
    ctx.delay(ask, err as Error);
    return;
  }
  await Promise.all(
    ask.map((ps) =>
      ctx.serialize(ps, async () => {
        if (!ctx.isCurrent(ps)) return;
        const r = res.find((x) => x.topic === ps.tp.topic && x.partition === ps.tp.partition);
        if (r === undefined) {
          ctx.delay([ps], new KafkaError(ErrorCode.UNKNOWN_SERVER_ERROR, 'no OffsetsForLeaderEpoch answer'));
          return;
        }
        if (r.errorCode !== ErrorCode.NONE) {
          await handlePartitionError(ctx, ps, r.errorCode, -1, -1);
          return;
        }
        await truncateTo(ctx, ps, r);
      }),
    ),
  );
}

/** Truncates one partition's log to where it and the source agree, then starts fetching. */
async function truncateTo(ctx: FetcherContext, ps: PartitionState, r: EpochEndOffset): Promise<void> {
  const log = ctx.cb.log(ps.tp);
  if (log === undefined) throw localLogGone();
  const leo = log.logEndOffset;
  if (r.endOffset < 0 && ps.sourceLeaderEpoch >= 0 && log.latestEpoch > ps.sourceLeaderEpoch) {
    // Mirror only (a follower's epochs never pass its leader's): the source knows no epoch at or
    // below our latest, which is above every epoch it has (or it has none). Everything we hold at
    // epochs above the source leader's epoch is history the source never had: drop it, then ask
    // again with the epoch we are left with (the partition stays truncating).
    const local = log.endOffsetForEpoch(ps.sourceLeaderEpoch);
    const cut = local.endOffset >= 0 ? local.endOffset : log.logStartOffset;
    if (cut < leo) {
      await log.truncateTo(cut);
      ps.fetchOffset = log.logEndOffset;
      ps.lastFetchedEpoch = lastBatchEpoch(log);
      return;
    }
    // Nothing but an epoch marker at our log end (a leader-epoch bump) lies above the source's
    // epochs: no data diverges, fetch from our end. The next mirrored batch replaces the marker
    // in the epoch cache.
  }
  await truncateToLeaderEpochEnd(log, { epoch: r.leaderEpoch, endOffset: r.endOffset });
  startFetchingAtLogEnd(ps, log);
}

function startFetchingAtLogEnd(ps: PartitionState, log: MirrorLog): void {
  ps.fetchOffset = log.logEndOffset;
  ps.lastFetchedEpoch = lastBatchEpoch(log);
  ps.state = 'fetching';
  ps.unreachableSince = 0;
}

/**
 * A DivergingEpoch answer: the source's largest epoch at or below our LastFetchedEpoch, and where
 * it ends there; cut by the rules of src/storage/truncation-point.ts, shared with the replica
 * follower. Runs serialised after the partition's pending appends.
 */
export async function truncateOnDivergingEpoch(ctx: FetcherContext, ps: PartitionState, sourceEpoch: number, sourceEndOffset: number): Promise<void> {
  const log = ctx.cb.log(ps.tp);
  if (log === undefined) throw localLogGone();
  ctx.stats.divergingEpochTruncations++;
  const epochBefore = ps.lastFetchedEpoch;
  const { from } = await truncateToLeaderEpochEnd(log, { epoch: sourceEpoch, endOffset: sourceEndOffset });
  if (!ctx.isCurrent(ps)) return;
  startFetchingAtLogEnd(ps, log);
  if (ps.fetchOffset === from && ps.lastFetchedEpoch === epochBefore) {
    // Nothing to cut (or no end offset to cut at), so the same Fetch would get the same answer:
    // back off, then, unlike the follower, which has only its Fetch to ask with, look the
    // divergence point up with OffsetsForLeaderEpoch.
    ps.lastFetchedEpoch = -1;
    ctx.delay([ps], new KafkaError(ErrorCode.OFFSET_OUT_OF_RANGE, `source answered DivergingEpoch ${sourceEpoch}@${sourceEndOffset} with nothing to truncate at ${from}`));
  }
}
