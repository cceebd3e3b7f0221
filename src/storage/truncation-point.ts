/**
 * Where a copy of a log must be cut to agree with the log it copies, from the leader's epoch end
 * offset: a DivergingEpoch in a Fetch answer, or an OffsetsForLeaderEpoch answer. One set of rules
 * for the replica follower (src/replication/replica-fetcher.ts) and the mirror fetcher
 * (src/fetcher/epoch-truncation.ts), Kafka's AbstractFetcherThread.getOffsetTruncationState:
 *
 *   leader's answer (epoch E, end O)       truncate to
 *   O undefined (-1)                       nowhere: the leader has no epoch to compare (a Kafka
 *                                          leader answers OFFSET_OUT_OF_RANGE instead of such a
 *                                          DivergingEpoch); Kafka keeps the fetch offset, which in
 *                                          both fetchers is the log end
 *   E undefined (-1), O defined            min(O, log end): a leader that answers without epochs
 *                                          (OffsetForLeaderEpoch v0)
 *   E unknown here (above our latest       min(O, log end)
 *   epoch, or no epochs here)
 *   E not held here, a smaller one is      our end of the largest epoch below E: the next Fetch
 *                                          carries that epoch and the leader answers again
 *   E held here (or below our first        min(O, our end of E, log end); an E below our first
 *   epoch)                                 epoch ends where our first one starts
 *
 * The cut may go below the high watermark (the high watermark follows the log end down), as
 * Kafka's follower truncates with a warning. Afterwards both fetchers fetch from the new log end
 * with the epoch of its last batch as LastFetchedEpoch.
 */

/** The part of a partition log (./partition-log.ts) truncation reads and cuts. */
export interface TruncatableLog {
  readonly logEndOffset: number;
  /** Kafka's endOffsetForEpoch: the largest epoch ≤ `epoch` and where it ends; (-1, -1) when unknown. */
  endOffsetForEpoch(epoch: number): { epoch: number; endOffset: number };
  /** Drops every batch at and above `offset`. */
  truncateTo(offset: number): Promise<void>;
}

/** The leader's answer: its largest epoch at or below the one asked about, and where that epoch ends. */
export interface LeaderEpochEnd {
  readonly epoch: number;
  readonly endOffset: number;
}

/** UNDEFINED_EPOCH / UNDEFINED_EPOCH_OFFSET of OffsetsForLeaderEpoch and DivergingEpoch. */
const UNDEFINED = -1;

/** The offset to truncate `log` to for the leader's answer (the log end when nothing diverges). */
export function truncationOffset(log: TruncatableLog, leader: LeaderEpochEnd): number {
  const leo = log.logEndOffset;
  if (leader.endOffset === UNDEFINED) return leo;
  if (leader.epoch === UNDEFINED) return Math.min(leader.endOffset, leo);
  const local = log.endOffsetForEpoch(leader.epoch);
  if (local.endOffset === UNDEFINED) return Math.min(leader.endOffset, leo);
  if (local.epoch !== leader.epoch) return Math.min(local.endOffset, leo);
  return Math.min(leader.endOffset, local.endOffset, leo);
}

/** Cuts `log` where the leader's answer says the two diverge; returns the log end before and after. */
export async function truncateToLeaderEpochEnd(log: TruncatableLog, leader: LeaderEpochEnd): Promise<{ from: number; to: number }> {
  const from = log.logEndOffset;
  const target = truncationOffset(log, leader);
  if (target < from) await log.truncateTo(target);
  return { from, to: log.logEndOffset };
}
