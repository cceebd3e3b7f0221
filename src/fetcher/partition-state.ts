/**
 * Per-partition fetch state of the mirror fetcher, Kafka's `PartitionFetchState`: truncating
 * (find the divergence point with OffsetsForLeaderEpoch first), fetching, or delayed (after an
 * error, until a backoff passes).
 *
 * A partition is truncating when it is added (a (re)start, KIP-1279 §9.5), and again only when it
 * has no LastFetchedEpoch to fetch with. Afterwards a source leader change or a backoff sends it
 * straight back to fetching: every Fetch carries `lastFetchedEpoch`, and the source answers a
 * DivergingEpoch when our log holds history it does not, as Kafka's fetcher truncates on the
 * fetch response when the leader supports Fetch v12 (`isTruncationOnFetchSupported`).
 *
 * Concurrency contract: one `PartitionState` object per partition while it is in the fetcher;
 * removing and re-adding a partition makes a new object, so code that awaited checks it still
 * holds the current one before writing to it. `busy` chains the partition's appends;
 * `fetchOffset` already counts appends chained there but not yet finished (./append-pipeline.ts).
 */

export interface MirrorTopicPartition {
  readonly topic: string;
  readonly topicId: string;
  readonly partition: number;
}

export function tpKey(tp: { readonly topicId: string; readonly partition: number }): string {
  return `${tp.topicId}:${tp.partition}`;
}

type FetchState = 'truncating' | 'fetching' | 'delayed';

export interface PartitionState {
  readonly tp: MirrorTopicPartition;
  readonly key: string;
  state: FetchState;
  fetchOffset: number;
  /**
   * Epoch of the batch just below `fetchOffset` (the last one appended or queued for append),
   * -1 when unknown: then the partition must truncate with OffsetsForLeaderEpoch before fetching.
   */
  lastFetchedEpoch: number;
  sourceLeaderId: number;
  sourceLeaderEpoch: number;
  sourceHighWatermark: number;
  sourceLogStartOffset: number;
  delayedUntil: number;
  /** Since when the partition has not been able to talk to its source leader (0 = fine). */
  unreachableSince: number;
  /** Partition max bytes asked for; grows to fit a batch larger than it (KIP-74). */
  maxBytes: number;
  /** The last proactive bump target asked for (KIP-1279 §9.4), so each is asked once. */
  bumpRequestedFor: number;
  /** Metadata answers in a row that did not know the topic (§8.10: two mean deleted). */
  missingTopicCount: number;
  /** When the source last answered a fetch of this partition without an error (0 = never). */
  lastFetchMs: number;
  /** Max timestamp of the newest batch appended, -1 before the first. */
  mirroredMaxTimestamp: number;
  busy: Promise<void>;
  /**
   * Responses of this partition waiting on the slow path (errors, truncation, fencing): while
   * above 0 the loop leaves the partition out of its fetches, since the outcome decides where
   * (and whether) to fetch next.
   */
  held: number;
  lastError?: Error;
}

/** A partition just added: truncating first, from the local log end (§9.5). */
export function newPartitionState(tp: MirrorTopicPartition, fetchOffset: number, maxBytes: number): PartitionState {
  return {
    tp,
    key: tpKey(tp),
    state: 'truncating',
    fetchOffset,
    lastFetchedEpoch: -1,
    sourceLeaderId: -1,
    sourceLeaderEpoch: -1,
    sourceHighWatermark: -1,
    sourceLogStartOffset: -1,
    delayedUntil: 0,
    unreachableSince: 0,
    maxBytes,
    bumpRequestedFor: -1,
    missingTopicCount: 0,
    lastFetchMs: 0,
    mirroredMaxTimestamp: -1,
    busy: Promise.resolve(),
    held: 0,
  };
}

/**
 * Where a partition goes after a source leader change or a backoff: fetching with its
 * LastFetchedEpoch (the new leader answers a DivergingEpoch if the logs diverged), or truncating
 * when it has none.
 */
export function resumeFetching(ps: PartitionState): void {
  ps.state = ps.lastFetchedEpoch >= 0 ? 'fetching' : 'truncating';
}

/**
 * The epoch of the last batch in `log`, from its leader-epoch cache: the newest entry that starts
 * below the log end (an entry at the log end is an epoch marker with no batch yet, which the
 * source never wrote). -1 for an empty log or one without epochs.
 */
export function lastBatchEpoch(log: { readonly logEndOffset: number; readonly logStartOffset: number; readonly epochEntries: readonly { readonly epoch: number; readonly startOffset: number }[] }): number {
  if (log.logEndOffset <= log.logStartOffset) return -1;
  const entries = log.epochEntries;
  for (let i = entries.length - 1; i >= 0; i--) {
    const e = entries[i]!;
    if (e.startOffset < log.logEndOffset) return e.epoch;
  }
  return -1;
}

export interface PartitionFetchStatus {
  readonly state: FetchState;
  readonly fetchOffset: number;
  readonly sourceHighWatermark: number;
  readonly localHighWatermark: number;
  readonly lag: number;
  readonly sourceLeaderId: number;
  readonly sourceLeaderEpoch: number;
  readonly lastFetchMs: number;
  readonly mirroredMaxTimestamp: number;
  /** The last error since the last good fetch, null when none. */
  readonly linkError: string | null;
}
