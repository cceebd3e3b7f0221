import type { Clock } from '../common/time.js';
import type { AbortedTxns } from './aborted-txns.js';
import type { LeaderEpochCache } from './leader-epoch-cache.js';
import type { LocalLog } from './local-log.js';
import type { LogConfig } from './log-config.js';
import type { ProducerStateManager } from './producer-state.js';

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
  /** Throws KAFKA_STORAGE_ERROR when the log went offline. */
  checkOnline(): void;
  /** Kafka's UnifiedLog.roll: a new active segment and a producer-state snapshot at its base. */
  roll(baseOffset: number): Promise<void>;
  /** Counts unflushed messages and says whether this append must wait for an fsync. */
  afterWrite(messages: number, acksAll: boolean): boolean;
  /** Wakes whoever waits on the log end or the high watermark. */
  notify(): void;
}
