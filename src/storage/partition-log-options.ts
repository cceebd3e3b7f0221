/**
 * The options and results of the PartitionLog API (appends, reads, opening), apart from the
 * class so the layers below it (LocalLog, the loader) can name them without importing it.
 */
import type { Clock } from '../common/time.js';
import type { FileSlice } from './file-slice.js';
import type { FileSystem } from './file-system.js';
import type { GroupCommit } from './group-commit.js';
import type { LogConfig } from './log-config.js';
import type { TimestampAndOffset } from './segment-read.js';

export interface AppendResult {
  errorCode: number;
  baseOffset: number;
  lastOffset: number;
  /** The broker's append time for LogAppendTime topics, -1 otherwise. */
  logAppendTime: number;
  logStartOffset: number;
  errorMessage?: string;
}

export interface AppendOptions {
  /** -1 (all): resolve after the data is fsynced (group commit). 0/1: after the write. */
  requiredAcks?: number;
  timestampType?: 'CreateTime' | 'LogAppendTime';
  /** Transaction coordinator epoch of COMMIT/ABORT markers (origin 'coordinator'). */
  coordinatorEpoch?: number;
  /** 'coordinator' allows control batches (transaction markers) and skips client-only checks. */
  origin?: 'client' | 'coordinator';
  /**
   * `records` is exactly the one batch validateProduceRecords passed (its `batch.bytes`): the
   * header rules are not checked again here.
   */
  prevalidated?: boolean;
}

export interface MirrorAppendOptions {
  /** -1: resolve after the fsync (group commit), as for acks=all. */
  requiredAcks?: number;
  /** Check each batch's CRC-32C (the fetcher may have done it already). */
  verifyCrc?: boolean;
  /**
   * Refuse a first batch that does not start exactly at the log end. Off by default because a
   * compacted source legitimately has offset gaps between batches (Kafka's followers accept any
   * first offset ≥ the log end).
   */
  requireContiguous?: boolean;
}

export interface ReadOptions {
  fetchOffset: number;
  /** Exclusive upper bound: the high watermark or the last stable offset. */
  maxOffset: number;
  maxBytes: number;
  minOneMessage: boolean;
  /** Also report the aborted transactions overlapping the range (read_committed fetches). */
  readCommitted?: boolean;
}

export interface AbortedTransaction {
  producerId: number;
  firstOffset: number;
}

export interface ReadResult<R = FileSlice[]> {
  errorCode: number;
  records: R;
  highWatermark: number;
  lastStableOffset: number;
  logStartOffset: number;
  abortedTransactions: AbortedTransaction[];
}

export type { TimestampAndOffset };

export interface PartitionLogOptions {
  dir: string;
  topicId: string;
  config: LogConfig;
  fs?: FileSystem;
  clock?: Clock;
  /** Defaults to the process-wide sharedGroupCommit. */
  groupCommit?: GroupCommit;
  /** True when the log dir's clean-shutdown marker was present: indexes and snapshots are trusted. */
  cleanShutdown?: boolean;
  /** Offset up to which the log was fsynced (recovery-point-offset-checkpoint); 0 scans every segment. */
  recoveryPoint?: number;
  /** Persisted log start offset (log-start-offset-checkpoint), when DeleteRecords moved it. */
  logStartOffset?: number;
  /** Kafka's producer.id.expiration.ms (default one day). */
  producerIdExpirationMs?: number;
  /**
   * Unflushed bytes at which a background fsync of the log starts; an append waits for one at
   * four times this (DEFAULT_FLUSH_AHEAD_BYTES, 4 MiB, when absent; 0 turns both off).
   */
  flushAheadBytes?: number;
  /** Told once when a failed write or fsync takes the log offline; its files are then untrusted. */
  onOffline?: (reason: string) => void;
}
