/**
 * Where a start of a topic that holds data here (a STOPPED mirror topic, or a local topic being
 * failed back) would truncate each partition, worked out over the wire without touching either
 * log. It follows the two steps the node takes, in order:
 *
 *  1. LOG_TRUNCATION (KIP-1279 §9.3, state-actions.ts): the last mirrored epoch (LME) the source
 *     holds for this cluster (the same DescribeClusterMirrors lookup the node makes), and the log
 *     cut to `endOffsetForEpoch(LME)` here, or to 0 when the source holds none;
 *  2. the mirror fetcher's truncating phase (§9.5, epoch-truncation.ts, Kafka's
 *     `truncateToEpochEndOffsets`): OffsetsForLeaderEpoch to the source with the latest epoch
 *     left here, and the log cut to where that epoch ends on the source; when the source knows no
 *     epoch at or above ours, what lies above the source leader's epoch is cut and it asks again.
 *
 * Epoch ends on this cluster come from OffsetsForLeaderEpoch to this cluster's leader (the log's
 * own endOffsetForEpoch), capped at the cut already decided; the latest epoch below a cut is the
 * partition leader epoch of the batch just below it.
 */
import { Apis } from '../client/apis.js';
import type { KafkaClient } from '../client/kafka-client.js';
import { ErrorCode } from '../protocol/generated/errors.js';
import { KafkaError } from '../protocol/kafka-error.js';
import { errorName } from './cli-common.js';
import { isFailure, readBatches, type PartitionLocation } from './mirror-verify-reader.js';

/** One partition on one cluster. */
interface LogSide {
  readonly client: KafkaClient;
  readonly at: PartitionLocation;
}

interface TruncationPlan {
  /** The offset the LOG_TRUNCATION step cuts to (the log end when it cuts nothing). */
  readonly afterLastMirrorEpoch: number;
  /** The offset the log is left at once the fetcher has compared epochs with the source. */
  readonly target: number;
}

/** OffsetsForLeaderEpoch v4 in the consumer form: the end of `epoch` on that side. */
async function epochEnd(side: LogSide, epoch: number, currentLeaderEpoch = -1): Promise<{ epoch: number; endOffset: number }> {
  const res = await side.client.send(
    Apis.OffsetForLeaderEpoch,
    { replicaId: -1, topics: [{ topic: side.at.topic, partitions: [{ partition: side.at.partition, currentLeaderEpoch, leaderEpoch: epoch }] }] },
    side.at.leaderId,
  );
  const p = res.topics[0]?.partitions[0];
  if (p === undefined) throw new KafkaError(ErrorCode.UNKNOWN_SERVER_ERROR, `no OffsetsForLeaderEpoch answer for ${side.at.topic}-${side.at.partition}`);
  if (p.errorCode !== ErrorCode.NONE) throw new KafkaError(p.errorCode, `OffsetsForLeaderEpoch ${side.at.topic}-${side.at.partition}: ${errorName(p.errorCode)}`);
  return { epoch: p.leaderEpoch, endOffset: Number(p.endOffset) };
}

/** The partition leader epoch of the batch holding offset `end - 1`: the log's latest epoch once cut at `end`. */
async function latestEpochBelow(side: LogSide, end: number): Promise<number> {
  if (end <= 0) return -1;
  const walk = readBatches(side.client, side.at, end - 1, end, 64 * 1024);
  try {
    const first = await walk.next();
    return first.done === true || isFailure(first.value) ? -1 : first.value.partitionLeaderEpoch;
  } finally {
    await walk.return(undefined);
  }
}

/**
 * Where the start would leave the local log: `lme` is the last mirrored epoch the source holds
 * for this cluster (-1 none), `logStart`/`logEnd` the local log's offsets.
 */
export async function planTruncation(local: LogSide, source: LogSide, lme: number, logStart: number, logEnd: number): Promise<TruncationPlan> {
  let target = 0;
  if (lme >= 0) {
    const r = await epochEnd(local, lme);
    target = r.endOffset >= 0 ? r.endOffset : 0;
  }
  target = Math.min(target, logEnd);
  const afterLastMirrorEpoch = target;
  // The fetcher's truncating phase; a few rounds at most (each UNDEFINED answer cuts an epoch).
  for (let round = 0; round < 16 && target > logStart; round++) {
    const latest = await latestEpochBelow(local, target);
    if (latest < 0) break;
    const sourceLeaderEpoch = source.at.leaderEpoch;
    const r = await epochEnd(source, latest, sourceLeaderEpoch);
    if (r.endOffset < 0 && sourceLeaderEpoch >= 0 && latest > sourceLeaderEpoch) {
      const own = await epochEnd(local, sourceLeaderEpoch);
      const cut = Math.min(own.endOffset >= 0 ? own.endOffset : logStart, target);
      if (cut >= target) break;
      target = cut;
      continue;
    }
    if (r.endOffset >= 0 && r.epoch >= 0) {
      let next: number;
      if (r.epoch < latest) {
        // The source does not know our latest epoch: our end of the epoch it answered with.
        const own = await epochEnd(local, r.epoch);
        const ownEnd = Math.min(own.endOffset, target);
        next = own.epoch === r.epoch ? Math.min(r.endOffset, ownEnd) : ownEnd;
      } else {
        next = Math.min(r.endOffset, target);
      }
      if (next >= 0 && next < target) target = next;
    }
    break;
  }
  return { afterLastMirrorEpoch, target };
}
