import type { Clock } from '../common/time.js';
import type { AbortedTxns } from './aborted-txns.js';
import type { LeaderEpochCache } from './leader-epoch-cache.js';
import type { LocalLog } from './local-log.js';
import type { LogConfig } from './log-config.js';
import type { ProducerStateManager } from './producer-state.js';

/** The newest batch of a log, as its append saw it. */
interface LastBatch {
  readonly partitionLeaderEpoch: number;
  /** The control record type of a control batch, -1 for a data batch. */
  readonly controlType: number;
  /** The log end offset right after it: the entry holds only while the log still ends there. */
  readonly nextOffset: number;
}

/**
 * What the append paths (log-append.ts) and the truncation paths (log-truncation.ts) see of
 * their PartitionLog: its segments, epoch cache, producer state, aborted transactions and the
 * offsets they move. Only ever used from inside the PartitionLog's per-partition queue.
 */
export interface PartitionContext {
  readonly local: LocalLog;
  /** Replaced once, by the loaded cache, when the log opens. */
  epochs: LeaderEpochCache;
  readonly producers: ProducerStateManager;
  readonly aborted: AbortedTxns;
  /** The topic's current config (LogManager.updateConfig replaces it). */
  config: LogConfig;
  readonly clock: Clock;
  logStartOffset: number;
  highWatermark: number;
  /** What the append paths last wrote at the log end; null when unknown (opened, truncated, compacted). */
  lastBatch: LastBatch | null;
  /** Throws KAFKA_STORAGE_ERROR when the log went offline. */
  checkOnline(): void;
  /** Kafka's UnifiedLog.roll: a new active segment and a producer-state snapshot at its base. */
  roll(baseOffset: number): Promise<void>;
  /** Counts unflushed messages and says whether this append must wait for an fsync. */
  afterWrite(messages: number, acksAll: boolean): boolean;
  /** Wakes whoever waits on the log end or the high watermark. */
  notify(): void;
}
