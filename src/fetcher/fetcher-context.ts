/**
 * What the parts of the mirror fetcher (the per-broker loop, per-partition processing, epoch
 * truncation, source leaders) share: the settings and seams, and the few operations on the set
 * of partitions. `MirrorFetcher` is the one implementation.
 *
 * Concurrency contract: single event loop. A `PartitionState` taken before an await may have
 * been removed meanwhile; `isCurrent` says whether it still is the partition's state.
 */
import type { Clock, Timers } from '../common/time.js';
import type { MirrorFetcherCallbacks, MirrorFetcherConfig, MirrorFetcherStats } from './fetcher-config.js';
import type { PartitionState } from './partition-state.js';
import type { SourceEndpoint } from './source-endpoint.js';

export interface FetcherContext {
  readonly config: MirrorFetcherConfig;
  readonly cb: MirrorFetcherCallbacks;
  readonly endpoint: SourceEndpoint;
  readonly clock: Clock;
  readonly timers: Timers;
  readonly stats: MirrorFetcherStats;
  readonly closed: boolean;
  /** Every partition in the fetcher now. */
  partitions(): PartitionState[];
  partition(key: string): PartitionState | undefined;
  isCurrent(ps: PartitionState): boolean;
  /** Runs `fn` after the partition's previous work; an exception fails the partition (retryably). */
  serialize(ps: PartitionState, fn: () => Promise<void>): Promise<void>;
  /** Backs the partitions off for `backoffMs` and refreshes source metadata. */
  delay(parts: readonly PartitionState[], err: Error): void;
  /** Removes the partition and hands it to the state machine. */
  failPartition(ps: PartitionState, err: Error, nonRetryable: boolean): void;
  /** Fails the partitions that could not reach their source leader for `unreachableFailMs`. */
  failUnreachable(parts: readonly PartitionState[], now: number): void;
  /** Removes the partition without a callback (the caller reports why). */
  remove(ps: PartitionState): void;
  /** Refreshes the source leaders of every partition; one refresh at a time. */
  refreshMetadata(): Promise<void>;
  /** The loop of a source broker, started on first use; `notify` wakes it from a backoff sleep. */
  ensureLoop(brokerId: number): { notify(): void };
}
