/**
 * The fetcher's local-log seam: what the mirror fetcher needs from the destination partition it
 * copies into, as Kafka's ReplicaFetcherThread reaches its local `Partition`/`UnifiedLog`. The
 * broker gives a `PartitionLog` (src/storage/partition-log.ts); the STOPPING sequence of the
 * mirror state machine uses the same seam.
 */

/** The part of a partition log the mirror fetcher and the STOPPING sequence use. */
export interface MirrorLog {
  readonly logStartOffset: number;
  readonly logEndOffset: number;
  readonly highWatermark: number;
  /** Epoch of the last entry of the leader-epoch cache; -1 when the log has none. */
  readonly latestEpoch: number;
  /** The leader-epoch cache, oldest first: where each epoch starts. */
  readonly epochEntries: readonly { readonly epoch: number; readonly startOffset: number }[];
  /**
   * Appends whole record batches exactly as the source wrote them: offsets and partition leader
   * epochs are kept, the epoch cache is built from the batch epochs, producer state is updated
   * and a MIRROR_PID_RESET control batch clears it. The first batch must start at logEndOffset.
   */
  appendAsMirror(records: Buffer): Promise<MirrorAppendResult>;
  /** Drops everything at and above `offset` (no-op when offset >= logEndOffset). */
  truncateTo(offset: number): Promise<void>;
  /** Empties the log and restarts it at `offset` (out of range below the source log start). */
  truncateFullyAndStartAt(offset: number): Promise<void>;
  /**
   * Moves the log start offset up to `offset` (at most the high watermark) and deletes the
   * segments wholly below it, as DeleteRecords does; the mirror follows the source's log start.
   */
  deleteRecordsBefore(offset: number): Promise<number>;
  /**
   * Kafka's `endOffsetForEpoch`: the start offset of the first epoch greater than `epoch`, or the
   * log end offset when `epoch` is the latest; `{ epoch: -1, endOffset: -1 }` when unknown.
   */
  endOffsetForEpoch(epoch: number): { epoch: number; endOffset: number };
  /**
   * The partition leader epoch and control type (-1 for data) of the last batch, as the append
   * that wrote it saw them; undefined when no append since the log opened (or was last truncated)
   * wrote the batch the log ends with. STOPPING learns the last mirrored epoch from it: the epoch
   * cache's latest entry may be a destination leader-epoch marker rather than a batch's epoch.
   */
  readonly lastBatch: { readonly partitionLeaderEpoch: number; readonly controlType: number } | undefined;
  /**
   * Whole batches from the one containing `fetchOffset` (at least one when `minOneMessage`).
   * STOPPING reads the last batch when `lastBatch` does not know it.
   */
  readToBuffer(opts: { fetchOffset: number; maxOffset: number; maxBytes: number; minOneMessage: boolean }): Promise<{ errorCode: number; records: Buffer }>;
}

export interface MirrorAppendResult {
  readonly errorCode: number;
  readonly baseOffset: number;
  readonly lastOffset: number;
  readonly errorMessage?: string;
}
