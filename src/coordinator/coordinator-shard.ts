import type { CoordinatorHost } from './coordinator-host.js';
import type { BatchProducer, CoordinatorRecord, ReplayedBatch, ReplayedRecord } from './coordinator-batch.js';
import type { SnapshotRegistry } from './snapshot-registry.js';

/**
 * The contract between a coordinator shard and its runtime (CoordinatorRuntime): what a write
 * operation returns (Kafka's CoordinatorResult: records plus a response), what a shard offers the
 * runtime (replay, its snapshots, load and unload hooks) and what the runtime offers a shard
 * (time, timers, later writes).
 */

export interface WriteResult<T> {
  readonly records: readonly CoordinatorRecord[];
  readonly response: T;
  /**
   * Called when the append fails, after the shard was reverted to its state before the batch:
   * answers what the operation left waiting and returns the response to send instead (the
   * operation's own error codes, with the mapped append error where it would have succeeded).
   * Without it the write rejects with a KafkaError carrying the mapped code.
   */
  readonly onAppendFailed?: (errorCode: number) => T;
  /** Runs once the records are committed and replayed, before the response is released. */
  readonly onCommitted?: () => void;
  /** Writes the records as a transactional batch of this producer. */
  readonly transactional?: BatchProducer;
  /** Instead of records: an end-transaction marker (control batch) for this producer. */
  readonly marker?: BatchProducer & { readonly commit: boolean; readonly coordinatorEpoch: number };
}

export type WriteOp<S, T> = (shard: S) => WriteResult<T>;

/** What a shard may use of its runtime: time and its own timers (which schedule write ops). */
export interface ShardContext<S> {
  readonly partition: number;
  now(): number;
  /** (Re)schedules the timer `key`; when it fires, `op` runs as a write operation. */
  scheduleTimer(key: string, delayMs: number, op: WriteOp<S, unknown>): void;
  cancelTimer(key: string): void;
  /** Runs `op` as a write operation on this shard later (after the current one). */
  scheduleWrite<T>(op: WriteOp<S, T>): Promise<T>;
}

export interface CoordinatorShard {
  /** Applies one record: during load, and for each write before its batch is appended. */
  replay(record: ReplayedRecord, batch: ReplayedBatch): void;
  /** Holds the shard's state, so a write whose append fails is reverted to the state before it. */
  readonly snapshots: SnapshotRegistry;
  /** Called once the partition has been replayed; timers (session, expiry) start here. */
  onLoaded?(): void;
  /** Called when the shard is closed; pending waiters should be answered here. */
  onUnloaded?(): void;
}

export interface RuntimeOptions<S extends CoordinatorShard> {
  readonly host: CoordinatorHost;
  readonly topic: string;
  readonly partitions: number;
  readonly newShard: (ctx: ShardContext<S>) => S;
  /** Bytes read per step while replaying. */
  readonly loadBufferBytes?: number;
  /**
   * About how many record bytes one append carries at most; writes beyond wait for the next.
   * A write with records always goes, so 1 appends (and fsyncs) each write on its own.
   */
  readonly maxBatchBytes?: number;
}

