import type { CoordinatorRecord } from './coordinator-batch.js';
import type { WriteResult } from './coordinator-runtime.js';
import type { ClassicGroup } from './classic-group.js';
import type { ConsumerGroup } from './consumer-group.js';
import type { StreamsGroup } from './streams-group.js';
import type { PersistedShareGroup } from './share-group-records.js';
import type { GroupConfig } from './group-config.js';
import type { OffsetCommitValue } from './group-records.js';

/**
 * What a group operation may use of its __consumer_offsets shard: the groups to read (and, for
 * the rebalance protocols' in-memory part, to change), committed offsets to read, the records it
 * emits, and its shard's clock and timers. It is the shard's write context, as the operations of
 * Kafka's GroupMetadataManager see their shard through the CoordinatorRuntime: an operation never
 * reaches the log, the runtime or other shards.
 */

/** group → topic → partition → committed offset: changed only by replaying offset records. */
type CommittedOffsets = ReadonlyMap<string, ReadonlyMap<string, ReadonlyMap<number, OffsetCommitValue>>>;

/** TxnOffsetCommit offsets not yet followed by their transaction's marker: producer id → group → "topic\0partition". */
type PendingTxnOffsets = ReadonlyMap<number, ReadonlyMap<string, ReadonlyMap<string, OffsetCommitValue>>>;

interface GroupTimers {
  now(): number;
  /** (Re)schedules the timer `key`; when it fires, `op` runs as a write operation of the shard. */
  schedule(key: string, delayMs: number, op: () => WriteResult<unknown>): void;
  cancel(key: string): void;
}

export interface GroupWriteContext {
  readonly classic: Map<string, ClassicGroup>;
  readonly consumer: Map<string, ConsumerGroup>;
  readonly streams: Map<string, StreamsGroup>;
  /** Share groups (KIP-932) as their records hold them: read here only to keep one namespace of group ids. */
  readonly share: ReadonlyMap<string, PersistedShareGroup>;
  readonly offsets: CommittedOffsets;
  readonly pendingTxnOffsets: PendingTxnOffsets;
  readonly cfg: GroupConfig;
  readonly timers: GroupTimers;
  /** Queues a record for the running write operation. */
  emit(record: CoordinatorRecord): void;
  /** Ends a write operation: the records it emitted plus its response. */
  result<T>(response: T): WriteResult<T>;
}
