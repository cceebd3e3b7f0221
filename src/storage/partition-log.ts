import { systemClock, type Clock } from '../common/time.js';
import { ErrorCode } from '../protocol/generated/errors.js';
import { KafkaError } from '../protocol/kafka-error.js';
import { AbortedTxns } from './aborted-txns.js';
import { realFileSystem, type FileSystem } from './file-system.js';
import { sharedGroupCommit, type GroupCommit, type Syncable } from './group-commit.js';
import type { AbortedTxn } from './indexes.js';
import { LeaderEpochCache, type EpochEntry } from './leader-epoch-cache.js';
import { LocalLog } from './local-log.js';
import { appendFailure, leaderAppend, mirrorAppend, type Written } from './log-append.js';
import { deleteRecordsLocked, retentionLocked, truncateFullyLocked, truncateLocked } from './log-truncation.js';
import type { PartitionContext } from './partition-context.js';
import { compactLog, type CleanStats } from './log-cleaner.js';
import type { LogConfig } from './log-config.js';
import { loadLog, takeSnapshot } from './log-loader.js';
import type { LogSegment } from './log-segment.js';
import type { AppendOptions, AppendResult, MirrorAppendOptions, PartitionLogOptions, ReadOptions, ReadResult } from './partition-log-options.js';
import { ProducerStateManager, type ProducerStateView } from './producer-state.js';
import { readWholeBatches, type TimestampAndOffset } from './segment-read.js';

export type * from './partition-log-options.js';

/** PartitionLogOptions.flushAheadBytes when not given: off, as the broker key `log.flush.ahead.bytes` defaults. */
export const DEFAULT_FLUSH_AHEAD_BYTES = 0;

/**
 * One partition's log (Kafka's UnifiedLog): the high watermark and log start offset, the
 * leader-epoch cache, producer state and transactions, and the two append paths (as leader:
 * offsets and epoch assigned here; as mirror: the source's offsets and epochs kept), over a
 * LocalLog of segments (local-log.ts) loaded and recovered by log-loader.ts.
 *
 * Concurrency contract: every mutation (append, truncation, retention, compaction, close) runs
 * through one promise queue, so exactly one is in flight per partition. Reads run concurrently
 * with it and see only batches whose write completed. fsync waits happen outside the queue, so
 * appends keep flowing while a group commit runs.
 *
 * High watermark on a single node: the HW advances to the log end once the data is durable per
 * the flush policy. An acks=all append (or one reaching flush.messages) waits for its fsync
 * (group commit) and the HW moves after it; acks=0/1 appends under Kafka's page-cache default
 * (flush.messages unset) count as durable once written, as a one-replica ISR would.
 *
 * Flushing ahead: once `flushAheadBytes` of written data is not yet fsynced, a background fsync
 * of this log starts (through the group commit, so it never overlaps another fsync of this log),
 * and an append that finds four times that much unflushed waits for it before writing. The page
 * cache then never holds more than that of this log's data unflushed, so an fsync (this log's own
 * for acks=all, or the kernel's journal commit on behalf of any file) finds little to write,
 * instead of the gigabyte a fast acks=1 writer leaves behind under the kernel's 30 s writeback.
 */
export class PartitionLog implements Syncable {
  private readonly local: LocalLog;
  private readonly producers = new ProducerStateManager();
  private readonly aborted = new AbortedTxns();
  private queue: Promise<unknown> = Promise.resolve();
  private readonly listeners = new Set<() => void>();
  /** Messages whose write completed, and how many of them a completed fsync covers. */
  private messagesWritten = 0;
  private messagesSynced = 0;
  /** Bytes (LocalLog.bytesAppended) a completed fsync covers. */
  private bytesSynced = 0;
  private readonly flushAheadBytes: number;
  /** The background fsync started by flushing ahead, while it runs. */
  private flushingAhead: Promise<void> | null = null;
  private lastFlushTime: number;
  /** Offset up to which the cleaner has compacted (in memory; a restart cleans everything once). */
  cleanedUpTo = 0;
  private closed = false;
  /**
   * True while the partition is replicated (more than one replica): the high watermark then
   * moves only through `updateHighWatermark`, from the ISR's log ends on the leader and from the
   * leader's high watermark on a follower (Kafka's Partition.maybeIncrementLeaderHW), never by
   * an append alone.
   */
  private replicatedHw = false;
  /** True while the high watermark is still the one recovery set at open. */
  private hwFromRecovery = true;
  /** The log's offsets and parts, shared with its append and truncation paths. */
  private readonly context: PartitionContext;

  readonly dir: string;
  readonly topicId: string;
  readonly fs: FileSystem;
  readonly clock: Clock;
  readonly groupCommit: GroupCommit;
  private readonly producerIdExpirationMs: number;

  private constructor(opts: PartitionLogOptions) {
    this.dir = opts.dir;
    this.topicId = opts.topicId;
    this.fs = opts.fs ?? realFileSystem;
    this.clock = opts.clock ?? systemClock;
    this.groupCommit = opts.groupCommit ?? sharedGroupCommit;
    this.producerIdExpirationMs = opts.producerIdExpirationMs ?? 86_400_000;
    this.flushAheadBytes = opts.flushAheadBytes ?? DEFAULT_FLUSH_AHEAD_BYTES;
    this.lastFlushTime = this.clock.now();
    this.local = new LocalLog(this.dir, this.fs, this.clock, () => this.context.config, opts.onOffline);
    this.context = {
      local: this.local,
      epochs: new LeaderEpochCache(this.fs, this.local.path('leader-epoch-checkpoint')),
      producers: this.producers,
      aborted: this.aborted,
      config: opts.config,
      clock: this.clock,
      logStartOffset: 0,
      highWatermark: 0,
      lastBatch: null,
      checkOnline: () => this.checkOnline(),
      roll: (baseOffset) => this.roll(baseOffset),
      afterWrite: (messages, acksAll) => this.afterWrite(messages, acksAll),
      notify: () => this.notify(),
    };
  }

  /** Opens (creating if needed) and recovers the partition directory. */
  static async open(opts: PartitionLogOptions): Promise<PartitionLog> {
    const log = new PartitionLog(opts);
    const loaded = await loadLog(log.local, log.producers, log.topicId, opts);
    log.context.epochs = loaded.epochs;
    log.context.logStartOffset = loaded.logStartOffset;
    log.aborted.push(...loaded.aborted);
    // Whatever survived the restart is on disk now: it is the high watermark.
    log.context.highWatermark = log.local.logEndOffset;
    return log;
  }

  /** The topic's log config; a changed topic config applies from the next operation. */
  get config(): LogConfig {
    return this.context.config;
  }
  set config(config: LogConfig) {
    this.context.config = config;
  }
  private get epochs(): LeaderEpochCache {
    return this.context.epochs;
  }

  get logStartOffset(): number {
    return this.context.logStartOffset;
  }
  get logEndOffset(): number {
    return this.local.logEndOffset;
  }
  get highWatermark(): number {
    return this.context.highWatermark;
  }
  /** min(first unstable transaction offset, high watermark). */
  get lastStableOffset(): number {
    return Math.min(this.producers.firstUnstableOffset(), this.context.highWatermark);
  }
  get latestEpoch(): number {
    return this.epochs.latestEpoch;
  }
  get recoveryPoint(): number {
    return this.local.recoveryPoint;
  }
  /** Total bytes of all segment files. */
  get size(): number {
    return this.local.size;
  }
  get segmentCount(): number {
    return this.local.segments.length;
  }
  /** Base offsets of the segments, oldest first. */
  get segmentBaseOffsets(): number[] {
    return this.local.segments.map((s) => s.baseOffset);
  }
  get epochEntries(): readonly EpochEntry[] {
    return this.epochs.all;
  }
  get isOffline(): boolean {
    return this.local.offlineReason !== null;
  }

  /** Calls `cb` whenever the log end or the high watermark moves (wakes delayed fetches). */
  onAppend(cb: () => void): () => void {
    this.listeners.add(cb);
    return () => this.listeners.delete(cb);
  }

  private notify(): void {
    for (const cb of this.listeners) {
      try {
        cb();
      } catch {
        // a listener's failure is its own; the log goes on
      }
    }
  }

  private serial<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.queue.then(() => {
      // A closed log is a partition this node no longer serves: clients refresh metadata and retry.
      if (this.closed) throw new KafkaError(ErrorCode.NOT_LEADER_OR_FOLLOWER, `log ${this.dir} is closed`);
      return fn();
    });
    this.queue = run.catch(() => undefined);
    return run;
  }

  /** Hands the high watermark to replication (true) or back to local appends (false). */
  setReplicated(replicated: boolean): void {
    if (replicated && !this.replicatedHw && this.hwFromRecovery) {
      // The log end that recovery took for the high watermark is only this replica's: other ISR
      // members may not have it. Until the ISR (as leader) or the leader (as follower) says
      // otherwise, nothing above the log start counts as committed, so no consumer reads a
      // record the ISR may not hold (Kafka keeps a replication-offset-checkpoint instead).
      this.context.highWatermark = this.context.logStartOffset;
    }
    this.replicatedHw = replicated;
  }

  get isReplicated(): boolean {
    return this.replicatedHw;
  }

  /**
   * Moves the high watermark forward to `hw` (capped at the log end; never backwards, which
   * only truncation does): the replicated partition's leader or follower decides it.
   */
  updateHighWatermark(hw: number): void {
    this.setHighWatermark(hw);
  }

  private setHighWatermark(hw: number): void {
    const next = Math.min(Math.max(hw, this.context.highWatermark), this.local.logEndOffset);
    if (next === this.context.highWatermark) return;
    this.hwFromRecovery = false;
    this.context.highWatermark = next;
    this.producers.onHighWatermark(next);
    this.notify();
  }

  private checkOnline(): void {
    if (this.local.offlineReason !== null) throw new KafkaError(ErrorCode.KAFKA_STORAGE_ERROR, `log offline: ${this.local.offlineReason}`);
  }

  /**
   * Appends client (or coordinator) batches: validates headers, checks idempotent/transactional
   * producer state, assigns offsets and the leader epoch by patching `records` in place (for
   * LogAppendTime also the timestamp type and maxTimestamp, with the CRC recomputed), writes,
   * and resolves per `requiredAcks`. A duplicate of one of a producer's last 5 batches returns
   * the original offsets with errorCode 0.
   */
  async appendAsLeader(records: Buffer, leaderEpoch: number, opts: AppendOptions = {}): Promise<AppendResult> {
    let written: Written;
    try {
      written = await this.serial(async () => {
        await this.boundUnflushed();
        return leaderAppend(this.context, records, leaderEpoch, opts);
      });
    } catch (e) {
      return appendFailure(e, this.context.logStartOffset);
    }
    return this.finishAppend(written);
  }

  /**
   * Appends batches at their source offsets (mirror): offsets and partition
   * leader epochs are kept byte for byte. The first batch must start at or after the log end
   * (gaps are legal: a compacted source has them) and batches must increase. The epoch cache is
   * built from the batches' epochs and producer state is replayed without sequence checks; a
   * MIRROR_PID_RESET control batch (KIP-1279) clears all producer state.
   */
  async appendAsMirror(records: Buffer, opts: MirrorAppendOptions = {}): Promise<AppendResult> {
    let written: Written;
    try {
      written = await this.serial(async () => {
        await this.boundUnflushed();
        return mirrorAppend(this.context, records, opts);
      });
    } catch (e) {
      return appendFailure(e, this.context.logStartOffset);
    }
    return this.finishAppend(written);
  }

  /**
   * Appends the leader's batches on a follower (Kafka's UnifiedLog.appendAsFollower): the same
   * append as `appendAsMirror` (the leader's offsets and epochs kept byte for byte, the epoch cache
   * built from the batches, producer state replayed, a MIRROR_PID_RESET of a mirror topic's log
   * clearing it), except that the first batch must start exactly at the log end, where the
   * follower fetched from. Kafka's follower also takes a first batch above its log end; a mirror
   * does, since a compacted source has offset gaps.
   */
  appendAsFollower(records: Buffer, opts: Omit<MirrorAppendOptions, 'requireContiguous'> = {}): Promise<AppendResult> {
    return this.appendAsMirror(records, { ...opts, requireContiguous: true });
  }

  private async finishAppend(written: Written): Promise<AppendResult> {
    const { result } = written;
    if (result.errorCode !== 0 || result.lastOffset < 0) return result;
    if (written.sync) {
      try {
        await this.groupCommit.sync(this);
      } catch (e) {
        return { ...result, errorCode: ErrorCode.KAFKA_STORAGE_ERROR, errorMessage: `fsync failed: ${String(e)}` };
      }
    }
    if (!this.replicatedHw) this.setHighWatermark(result.lastOffset + 1);
    return result;
  }

  /** Counts unflushed messages and says whether this append must wait for an fsync. */
  private afterWrite(messages: number, acksAll: boolean): boolean {
    this.messagesWritten += messages;
    this.notify();
    const sync = acksAll || this.unflushedMessages >= this.config.flushMessages;
    if (!sync && this.flushAheadBytes > 0 && this.unflushedBytes >= this.flushAheadBytes) this.flushAhead();
    return sync;
  }

  private get unflushedMessages(): number {
    return this.messagesWritten - this.messagesSynced;
  }

  /** Written bytes no completed fsync covers yet. */
  get unflushedBytes(): number {
    return this.local.bytesAppended - this.bytesSynced;
  }

  /**
   * Starts a background fsync unless one is running, and another after it while what was written
   * meanwhile is still at least `flushAheadBytes`. A failed fsync takes the log offline
   * (LocalLog.sync) and starts no other.
   */
  private flushAhead(): void {
    if (this.flushingAhead !== null) return;
    this.flushingAhead = this.groupCommit.sync(this).then(
      () => {
        this.flushingAhead = null;
        if (!this.closed && this.unflushedBytes >= this.flushAheadBytes) this.flushAhead();
      },
      () => {
        this.flushingAhead = null;
      },
    );
  }

  /**
   * Inside the queue, before a write: with four times `flushAheadBytes` unflushed (the disk is
   * slower than the writer), waits for an fsync, so the unflushed data stays bounded.
   */
  private async boundUnflushed(): Promise<void> {
    if (this.flushAheadBytes <= 0 || this.unflushedBytes < 4 * this.flushAheadBytes) return;
    try {
      await this.groupCommit.sync(this);
    } catch (e) {
      throw new KafkaError(ErrorCode.KAFKA_STORAGE_ERROR, `fsync failed: ${String(e)}`);
    }
  }

  /** Kafka's UnifiedLog.roll: a new active segment, and a producer-state snapshot at its base. */
  private async roll(baseOffset: number): Promise<void> {
    if (await this.local.roll(baseOffset)) await takeSnapshot(this.local, this.producers, baseOffset);
  }

  /**
   * fsyncs every segment with unflushed data; the recovery point moves to the log end seen before.
   * Epochs started since the last fsync are written to their checkpoint first, so the recovery
   * point never passes an epoch the file lacks (./leader-epoch-cache.ts).
   */
  async syncNow(): Promise<void> {
    const messages = this.messagesWritten;
    const bytes = this.local.bytesAppended;
    const end = this.local.logEndOffset;
    const truncations = this.local.truncations;
    // The recovery point moves into the segment holding `end`; a recovery starts from there.
    if (this.epochs.mustWriteBefore(this.local.segments[this.local.segmentIndexFor(end)]?.baseOffset ?? 0)) await this.epochs.flush();
    await this.local.sync(end, truncations);
    // What was written while the fsync ran stays counted as unflushed.
    this.messagesSynced = Math.max(this.messagesSynced, messages);
    this.bytesSynced = Math.max(this.bytesSynced, bytes);
    this.lastFlushTime = this.clock.now();
  }

  /** Makes everything appended so far durable (group commit) and advances the high watermark. */
  async flush(): Promise<void> {
    const end = this.local.logEndOffset;
    await this.groupCommit.sync(this);
    if (!this.replicatedHw) this.setHighWatermark(end);
  }

  /** flush.ms: flushes when the oldest unflushed data is older than flush.ms. */
  async maybeFlushByTime(): Promise<void> {
    if (this.flushDueBy(this.clock.now())) await this.flush();
  }

  /** Whether flush.ms has passed at `now` with records not yet flushed. */
  flushDueBy(now: number): boolean {
    return this.unflushedMessages > 0 && now - this.lastFlushTime >= this.config.flushMs;
  }

  /**
   * Reads whole batches from `fetchOffset` (the batch containing it first) up to `maxOffset`
   * (exclusive; the HW or LSO) and about `maxBytes`, as file ranges: the fetch path reads them
   * into its own pooled buffer (see FileSlice). One segment per read, as Kafka does. With
   * `minOneMessage` the first batch is returned whole even when larger than maxBytes.
   * Offsets outside [logStartOffset, logEndOffset] are OFFSET_OUT_OF_RANGE.
   */
  async read(opts: ReadOptions): Promise<ReadResult> {
    const base = { highWatermark: this.context.highWatermark, lastStableOffset: this.lastStableOffset, logStartOffset: this.context.logStartOffset };
    const empty: ReadResult = { errorCode: 0, records: [], abortedTransactions: [], ...base };
    const { fetchOffset, maxOffset } = opts;
    if (fetchOffset < this.context.logStartOffset || fetchOffset > this.local.logEndOffset) return { ...empty, errorCode: ErrorCode.OFFSET_OUT_OF_RANGE };
    if (fetchOffset >= maxOffset || fetchOffset === this.local.logEndOffset) return empty;
    const found = await this.local.read(opts);
    if (found === null) return empty;
    const abortedTransactions = opts.readCommitted === true ? this.aborted.between(fetchOffset, found.upperOffset) : [];
    return { errorCode: 0, records: [found.slice], abortedTransactions, ...base };
  }

  /** Like `read`, with the bytes read into one Buffer (coordinators, tools, tests). */
  async readToBuffer(opts: ReadOptions): Promise<ReadResult<Buffer>> {
    const r = await this.read(opts);
    return { ...r, records: await readWholeBatches(r.records) };
  }

  /** The OffsetsForLeaderEpoch answer for `epoch`: (-1, -1) when the log knows nothing of it. */
  endOffsetForEpoch(epoch: number): { epoch: number; endOffset: number } {
    const r = this.epochs.endOffsetFor(epoch, this.local.logEndOffset);
    return { epoch: r.epoch, endOffset: r.endOffset };
  }

  /**
   * Records that `epoch` starts at `offset` (a new leader epoch starts at the log end). In memory:
   * the file follows with the log's fsyncs (see LeaderEpochCache).
   */
  async assignEpochStartOffset(epoch: number, offset: number): Promise<void> {
    await this.serial(async () => {
      this.epochs.assign(epoch, offset);
    });
  }

  /**
   * ListOffsets: -2 earliest, -1 latest, -3 the record with the max timestamp; otherwise the first record whose
   * timestamp is ≥ ts (exact inside uncompressed batches, the batch for compressed ones).
   */
  offsetForTimestamp(ts: number): Promise<TimestampAndOffset | null> {
    return this.local.offsetForTimestamp(ts, this.context.logStartOffset, this.epochs);
  }

  /**
   * The largest timestamp and the last offset of the batch holding it, from memory (no I/O).
   * `offsetForTimestamp(-3)` gives the exact record offset KIP-734 asks for.
   */
  maxTimestampOffset(): TimestampAndOffset | null {
    return this.local.maxTimestampOffset(this.epochs);
  }

  /**
   * Removes every batch at or after `offset` (the batch containing it included): a follower or
   * mirror diverged from its leader. Epoch cache, producer state and transactions follow.
   */
  truncateTo(offset: number): Promise<void> {
    return this.serial(() => truncateLocked(this.context, offset));
  }

  /**
   * Forgets leader epochs that start at or after `offset` while keeping every batch: a leader
   * that becomes a follower drops the epoch it started at its log end with no batch in it, so
   * its LastFetchedEpoch is that of its last batch (Kafka's follower fetch state).
   */
  truncateEpochsFrom(offset: number): Promise<void> {
    return this.serial(async () => {
      this.epochs.truncateFromEnd(offset);
      if (this.epochs.isDirty) await this.epochs.flush();
    });
  }

  /** Empties the log and restarts it at `offset` (a mirror or follower out of range). */
  truncateFullyAndStartAt(offset: number): Promise<void> {
    return this.serial(() => truncateFullyLocked(this.context, offset));
  }

  /**
   * DeleteRecords: moves the log start to `offset` (≤ high watermark) and deletes the segments
   * entirely below it. Returns the new log start offset, or throws OFFSET_OUT_OF_RANGE.
   */
  deleteRecordsBefore(offset: number): Promise<number> {
    return this.serial(() => deleteRecordsLocked(this.context, offset));
  }

  /** Time and size retention (cleanup.policy containing delete); returns the segments deleted. */
  applyRetention(): Promise<number> {
    return this.serial(() => retentionLocked(this.context));
  }

  /** DescribeProducers: the active producers of this partition. */
  producerStates(): ProducerStateView[] {
    return this.producers.views();
  }

  /** Aborted transactions known to the log (from the .txnindex files), oldest first. */
  abortedTransactions(): readonly AbortedTxn[] {
    return this.aborted.all;
  }

  /**
   * Whether the producer has a transaction open here at this epoch (Kafka's
   * UnifiedLog.hasOngoingTransaction): its transaction coordinator already holds the partition, so
   * the produce path need not verify or add it again.
   */
  hasOngoingTransaction(producerId: number, producerEpoch: number): boolean {
    const e = this.producers.entry(producerId);
    return e !== undefined && e.currentTxnFirstOffset >= 0 && e.producerEpoch === producerEpoch;
  }

  /** Open transactions (producer id, first offset), e.g. to abort them before MIRROR_PID_RESET. */
  ongoingTransactions(): { producerId: number; firstOffset: number }[] {
    return this.producers.ongoingTransactions();
  }

  /** Drops producers idle past producer.id.expiration.ms. */
  async expireProducers(): Promise<void> {
    await this.serial(async () => this.producers.removeExpired(this.clock.now(), this.producerIdExpirationMs));
  }

  /** Runs `fn` inside the append queue with the segments (used by the log cleaner). */
  async withSegmentsLocked<T>(fn: (segments: LogSegment[], replace: (oldSegs: LogSegment[], newSeg: LogSegment) => Promise<void>) => Promise<T>): Promise<T> {
    return this.serial(() => fn(this.local.segments.slice(), (oldSegs, newSeg) => this.local.replaceSegments(oldSegs, newSeg)));
  }

  /** Compacts the log (cleanup.policy=compact); see log-cleaner.ts. */
  compact(): Promise<CleanStats> {
    return compactLog(this).finally(() => {
      this.context.lastBatch = null;
    });
  }

  /**
   * The partition leader epoch and control type (-1 for data) of the log's last batch, as the
   * append that wrote it saw them, without reading the log; undefined when no append since the
   * log opened (or was last truncated or compacted) wrote the batch it ends with.
   */
  get lastBatch(): { readonly partitionLeaderEpoch: number; readonly controlType: number } | undefined {
    const b = this.context.lastBatch;
    return b !== null && b.nextOffset === this.local.logEndOffset ? b : undefined;
  }

  /** Flushes, snapshots producer state at the log end, and closes every file. */
  async close(): Promise<void> {
    await this.serial(async () => {
      if (this.local.offlineReason === null) {
        // Through the group commit, so it waits for a background fsync still running.
        await this.groupCommit.sync(this);
        for (const s of this.local.segments) await s.syncIndexes();
        await takeSnapshot(this.local, this.producers, this.local.logEndOffset);
        await this.epochs.flush();
      }
      await this.local.closeFiles(false);
      this.closed = true;
    });
  }

  /**
   * Closes the file handles without flushing, snapshotting or waiting for the append queue
   * (Kafka's closeHandlers): for a log dir that went offline, where writing is pointless.
   * What was written stays as it is on disk, as after a crash.
   */
  async closeHandlers(): Promise<void> {
    this.closed = true;
    this.local.offlineReason ??= 'handlers closed';
    await this.local.closeFiles(true);
  }

  /** Closes the log and removes its directory (topic deletion). */
  async deleteLog(): Promise<void> {
    if (!this.closed) {
      this.local.offlineReason ??= 'deleted';
      await this.close();
    }
    await this.local.deleteDir();
  }
}
