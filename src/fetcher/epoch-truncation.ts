/**
 * The truncating phase of the mirror fetcher (KIP-1279 §9.5), Kafka's `truncateToEpochEndOffsets`:
 * before fetching, each partition asks its source leader, with OffsetsForLeaderEpoch, where the
 * local log's latest epoch ends on the source, and drops whatever the local log holds beyond
 * that point. A log without epochs has nothing to compare and goes straight to fetching.
 */
import { ErrorCode } from '../protocol/generated/errors.js';
import { KafkaError } from '../protocol/kafka-error.js';
import type { FetcherContext } from './fetcher-context.js';
import { localLogGone } from './partition-data.js';
import { handlePartitionError } from './partition-errors.js';
import type { PartitionState } from './partition-state.js';
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
      ps.state = 'fetching';
    } else {
      ask.push(ps);
    }
  }
  if (ask.length === 0) return;
  let res: EpochEndOffset[];
  try {
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
  let target = leo;
  if (r.endOffset < 0 && ps.sourceLeaderEpoch >= 0 && log.latestEpoch > ps.sourceLeaderEpoch) {
    // UNDEFINED: the source knows no epoch at or above ours. Everything we hold at epochs above
    // the source leader's epoch is history the source never had: drop it, then ask again with
    // the epoch we are left with (the partition stays truncating).
    const local = log.endOffsetForEpoch(ps.sourceLeaderEpoch);
    const cut = local.endOffset >= 0 ? local.endOffset : log.logStartOffset;
    if (cut < leo) {
      await log.truncateTo(cut);
      ps.fetchOffset = log.logEndOffset;
      return;
    }
    // Nothing but an epoch marker at our log end (a leader-epoch bump) lies above the source's
    // epochs: no data diverges, fetch from our end. The next mirrored batch replaces the marker
    // in the epoch cache.
  }
  if (r.endOffset >= 0 && r.leaderEpoch >= 0) {
    const requested = log.latestEpoch;
    if (r.leaderEpoch < requested) {
      // The source does not know our latest epoch: our end for the epoch it answered with.
      const local = log.endOffsetForEpoch(r.leaderEpoch);
      target = local.epoch === r.leaderEpoch ? Math.min(r.endOffset, local.endOffset) : local.endOffset;
    } else {
      target = Math.min(r.endOffset, leo);
    }
  }
  if (target >= 0 && target < leo) await log.truncateTo(target);
  ps.fetchOffset = log.logEndOffset;
  ps.state = 'fetching';
  ps.unreachableSince = 0;
}
