/**
 * The mirror fetcher's side of the per-partition error table (src/protocol/fetch-partition-errors.ts,
 * shared with the replica follower, as AbstractFetcherThread's `processFetchRequest` has one for
 * every fetcher): a partition's error code in a Fetch or OffsetsForLeaderEpoch answer decides
 * what happens to that partition alone, never to the others in the response.
 *
 *   out-of-range   ListOffsets earliest and latest; restart at the source log start if we are
 *                  below it, truncate to its end if above
 *   leader         the response names a newer leader: re-home and truncate against it;
 *                  otherwise back off and refresh metadata
 *   topic          back off and refresh metadata (the refresh tells a deleted or recreated
 *                  topic apart, KIP-1279 §8.10)
 *   auth, other    the partition fails (retried by the state machine); an auth failure at once,
 *                  with the source's error code in the reason
 */
import { ErrorCode } from '../protocol/generated/errors.js';
import { fetchErrorKind } from '../protocol/fetch-partition-errors.js';
import { KafkaError } from '../protocol/kafka-error.js';
import type { FetcherContext } from './fetcher-context.js';
import { lastBatchEpoch, resumeFetching, type PartitionState } from './partition-state.js';

/** The source refused who we are or what we may do: fail now, show the reason. */
export function isAuthFailure(err: unknown): boolean {
  return err instanceof KafkaError && fetchErrorKind(err.code) === 'auth';
}

/** The error a partition fails with for a source error code: Kafka's name for it leads the message. */
export function sourceError(code: number, what: string): KafkaError {
  const e = new KafkaError(code);
  return new KafkaError(code, `${e.codeName}: the source refused ${what}: ${e.message}`);
}

/** ListOffsets timestamps (Kafka's ListOffsetsRequest.EARLIEST_TIMESTAMP / LATEST_TIMESTAMP). */
const EARLIEST = -2;
const LATEST = -1;

/**
 * Applies the table to one partition. `leaderId`/`leaderEpoch` come from the response's
 * CurrentLeader field (KIP-951), -1 when it named none. Throws for errors the table does not
 * handle (the caller fails the partition).
 */
export async function handlePartitionError(ctx: FetcherContext, ps: PartitionState, code: number, leaderId: number, leaderEpoch: number): Promise<void> {
  const kind = fetchErrorKind(code);
  if (kind === 'out-of-range') {
    await handleOutOfRange(ctx, ps);
    return;
  }
  if (kind === 'leader') {
    if (leaderId >= 0 && leaderEpoch > ps.sourceLeaderEpoch) {
      // The response names the new leader: re-home without waiting for metadata. A new source
      // epoch may mean an unclean election: the LastFetchedEpoch of the next Fetch lets the new
      // leader answer where we diverge (or we truncate against it first when we have none).
      ps.sourceLeaderId = leaderId;
      ps.sourceLeaderEpoch = leaderEpoch;
      resumeFetching(ps);
      ctx.ensureLoop(leaderId);
      void ctx.refreshMetadata();
      return;
    }
    ctx.delay([ps], new KafkaError(code, `source error ${code}`));
    return;
  }
  if (kind === 'topic') {
    ctx.delay([ps], new KafkaError(code, `source error ${code}`));
    return;
  }
  throw sourceError(code, `${ps.tp.topic}-${ps.tp.partition}`);
}

/** OFFSET_OUT_OF_RANGE: where the source's log is now decides (KIP-1279 §8.3). */
async function handleOutOfRange(ctx: FetcherContext, ps: PartitionState): Promise<void> {
  const base = { topic: ps.tp.topic, partition: ps.tp.partition, currentLeaderEpoch: ps.sourceLeaderEpoch };
  const earliest = (await ctx.endpoint.listOffsets(ps.sourceLeaderId, [{ ...base, timestamp: EARLIEST }]))[0];
  const latest = (await ctx.endpoint.listOffsets(ps.sourceLeaderId, [{ ...base, timestamp: LATEST }]))[0];
  if (earliest === undefined || latest === undefined || earliest.errorCode !== ErrorCode.NONE || latest.errorCode !== ErrorCode.NONE) {
    const code = earliest?.errorCode || latest?.errorCode || ErrorCode.OFFSET_OUT_OF_RANGE;
    ctx.delay([ps], new KafkaError(code, 'ListOffsets failed after OFFSET_OUT_OF_RANGE'));
    return;
  }
  const log = ctx.cb.log(ps.tp);
  if (log === undefined || !ctx.isCurrent(ps)) return;
  if (ps.fetchOffset < earliest.offset) {
    // The source deleted what we have not copied yet: restart at its log start.
    await log.truncateFullyAndStartAt(earliest.offset);
    ps.fetchOffset = earliest.offset;
    ps.lastFetchedEpoch = -1;
  } else if (ps.fetchOffset > latest.offset) {
    // Our log is longer than the source's: truncate to the source's end (as a Kafka follower does).
    await log.truncateTo(latest.offset);
    ps.fetchOffset = log.logEndOffset;
    ps.lastFetchedEpoch = lastBatchEpoch(log);
  } else if (ps.lastFetchedEpoch >= 0) {
    // In range: Kafka's leader answers OFFSET_OUT_OF_RANGE when it knows no epoch at or below our
    // LastFetchedEpoch (Partition.fetchRecords). Look the divergence point up instead.
    ps.lastFetchedEpoch = -1;
    ps.state = 'truncating';
  }
}
