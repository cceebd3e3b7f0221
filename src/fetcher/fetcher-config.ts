/**
 * What a mirror fetcher is given: its settings (the `mirror.fetch.*` keys), the callbacks through
 * which it reaches the destination node and the mirror state machine, and the counters it keeps.
 */
import type { MirrorLog } from './mirror-log.js';
import type { MirrorTopicPartition } from './partition-state.js';
import type { FetchQuota } from '../quota/replication-throttle.js';

/** Proactive bump when a source epoch comes within this distance of the destination epoch (KIP-1279 §9.4). */
export const LEADER_EPOCH_BUMP_THRESHOLD = 3;
/** Bump target: MinLeaderEpoch = source epoch + 10, the controller adds 1 (§9.4). */
export const LEADER_EPOCH_BUMP_INCREMENT = 10;

export interface MirrorFetcherCallbacks {
  /** The local log of a mirror partition led here. */
  log(tp: MirrorTopicPartition): MirrorLog | undefined;
  /** Current destination leader epoch of the partition (from the node's image). */
  destinationLeaderEpoch(tp: MirrorTopicPartition): number;
  /**
   * A batch carried an epoch above the destination leader epoch: the partition was removed from
   * the fetcher; the coordinator moves it to EPOCH_FENCING (bump, then MIRRORING re-adds it).
   */
  onEpochFenced(tp: MirrorTopicPartition, sourceEpoch: number): void;
  /** Asks for an asynchronous bump to at least `minLeaderEpoch + 1` (BumpLeaderEpochs). */
  requestEpochBump(tp: MirrorTopicPartition, minLeaderEpoch: number): void;
  /** The partition was removed from the fetcher after an error; the state machine takes over. */
  onPartitionFailed(tp: MirrorTopicPartition, err: Error, nonRetryable: boolean): void;
  /** Data appended (retry counting may start over). */
  onProgress?(tp: MirrorTopicPartition): void;
}

export interface MirrorFetcherConfig {
  /** mirror.fetch.wait.max.ms */
  readonly maxWaitMs: number;
  /** mirror.fetch.min.bytes */
  readonly minBytes: number;
  /** mirror.fetch.response.max.bytes */
  readonly maxBytes: number;
  /** mirror.fetch.max.bytes (per partition) */
  readonly partitionMaxBytes: number;
  /** mirror.fetch.backoff.ms */
  readonly backoffMs: number;
  /** A partition that cannot reach its source leader for this long goes FAILED (retried later). */
  readonly unreachableFailMs: number;
  /** mirror.replication.throttled.rate: consulted before every Fetch (src/quota/replication-throttle.ts). */
  readonly quota?: FetchQuota;
  /** mirror.num.replica.fetchers: loops (each with its own Fetch in flight and session) per source broker. */
  readonly numFetchers: number;
  /**
   * mirror.fetch.pipeline.max.bytes: how many fetched bytes a loop may hold that wait for their
   * append while its next Fetch is out (./append-pipeline.ts); over it, the loop sends no Fetch
   * until appends catch up. 0 appends each answer before the next Fetch, as AbstractFetcherThread
   * does. -1 (the default, `PIPELINE_AUTO`): each loop decides from the round trip it measures
   * to its source broker (./round-trip.ts), overlapping with `PIPELINE_AUTO_MAX_BYTES` once the
   * round trip reaches `PIPELINE_AUTO_MIN_RTT_MS`.
   */
  readonly pipelineMaxBytes: number;
}

/** `pipelineMaxBytes` that lets each loop decide from its measured round trip. */
const PIPELINE_AUTO = -1;
/** The budget of a loop that turned the overlap on by itself. */
export const PIPELINE_AUTO_MAX_BYTES = 10 * 1024 * 1024;
/**
 * The round trip (ms) at or above which a loop on `PIPELINE_AUTO` overlaps fetching and
 * appending; it stops below half of it. On loopback the overlap costs CPU for little gain, over a
 * 10 ms round trip it is faster (bench/mirror-latency.ts, docs/mirroring.md).
 */
export const PIPELINE_AUTO_MIN_RTT_MS = 4;

export const DEFAULT_FETCHER_CONFIG: MirrorFetcherConfig = {
  maxWaitMs: 1000,
  minBytes: 1,
  maxBytes: 10 * 1024 * 1024,
  partitionMaxBytes: 1024 * 1024,
  backoffMs: 1000,
  unreachableFailMs: 30_000,
  numFetchers: 1,
  pipelineMaxBytes: PIPELINE_AUTO,
};

export interface MirrorFetcherStats {
  fetches: number;
  batchesAppended: number;
  bytesAppended: number;
  /** DivergingEpoch answers the fetcher truncated on (Kafka's truncation on the fetch response). */
  divergingEpochTruncations: number;
  /** OffsetsForLeaderEpoch rounds sent by the truncating phase. */
  epochLookups: number;
  /** Records decoded on the mirror path. Nothing here decodes records, so it stays 0. */
  readonly recordsDecoded: number;
}
