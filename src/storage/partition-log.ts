import { join } from 'node:path';
import {
  ATTR,
  BATCH,
  RecordBatchView,
  patchBaseOffset,
  patchPartitionLeaderEpoch,
  writeOffset,
} from '../protocol/record-batch.js';
import { crc32c } from '@node-rs/crc32';
import { DecodeError } from '../protocol/decode-error.js';
import { forEachBatchIn, scanBatches } from './batch-scan.js';
import { systemClock, type Clock } from './clock.js';
import { AppendError, StorageError } from './errors.js';
import { FileSlice } from './file-slice.js';
import { realFileSystem, type FileSystem } from './file-system.js';
import { sharedGroupCommit, type GroupCommit, type Syncable } from './group-commit.js';
import type { AbortedTxn } from './indexes.js';
import { compactLog, type CleanStats } from './log-cleaner.js';
import { LeaderEpochCache, type EpochEntry } from './leader-epoch-cache.js';
import type { LogConfig } from './log-config.js';
import { LogSegment, type AppendedBatch } from './log-segment.js';
import { ProducerStateManager, type AppendOrigin, type CompletedTxn, type ProducerStateView } from './producer-state.js';
import { ControlType, controlTypeOf, markerCoordinatorEpoch } from './record-walk.js';
import { findMaxTimestampOffset, findOffsetForTimestamp, readSegments, type TimestampAndOffset } from './segment-read.js';
import { checkTimestamps, validateBatchHeaders } from './append-validation.js';
import { deleteSnapshotsOutside, listSnapshotOffsets, snapshotPath } from './snapshot-files.js';
import { channel } from 'node:diagnostics_channel';

/** Log flush latency, observed by src/metrics (the channel names are in src/metrics/channels.ts). */
const fsyncChannel = channel('fjord:fsync');

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
  /** The caller already checked sizes and the CRC (validateProduceRecords): skip the CRC here. */
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
}

const FENCED_LEADER_EPOCH = 74;
const LIST_OFFSETS_EARLIEST = -2;
const LIST_OFFSETS_LATEST = -1;
const LIST_OFFSETS_MAX_TIMESTAMP = -3;
const SNAPSHOTS_TO_KEEP = 3;

/**
 * One partition's log (Kafka's UnifiedLog + LocalLog): Kafka-format segments, the leader-epoch
 * cache, producer state, transactions, recovery, truncation, retention.
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
 */
export class PartitionLog implements Syncable {
  private segments: LogSegment[] = [];
  private _logStartOffset = 0;
  private _logEndOffset = 0;
  private _highWatermark = 0;
  /** Offset below which everything is fsynced (Kafka's recovery point). */
  private _recoveryPoint = 0;
  private epochs!: LeaderEpochCache;
  private readonly producers = new ProducerStateManager();
  private aborted: AbortedTxn[] = [];
  private queue: Promise<unknown> = Promise.resolve();
  private readonly listeners = new Set<() => void>();
  private unflushedMessages = 0;
  private lastFlushTime: number;
  private readonly pendingCloses = new Set<{ seg: LogSegment; timer: NodeJS.Timeout }>();
  private offlineReason: string | null = null;
  /** Offset up to which the cleaner has compacted (in memory; a restart cleans everything once). */
  cleanedUpTo = 0;
  private closed = false;

  readonly dir: string;
  readonly topicId: string;
  config: LogConfig;
  readonly fs: FileSystem;
  readonly clock: Clock;
  readonly groupCommit: GroupCommit;
  private readonly producerIdExpirationMs: number;

  private constructor(opts: PartitionLogOptions) {
    this.dir = opts.dir;
    this.topicId = opts.topicId;
    this.config = opts.config;
    this.fs = opts.fs ?? realFileSystem;
    this.clock = opts.clock ?? systemClock;
    this.groupCommit = opts.groupCommit ?? sharedGroupCommit;
    this.producerIdExpirationMs = opts.producerIdExpirationMs ?? 86_400_000;
    this.lastFlushTime = this.clock.now();
  }

  /** Opens (creating if needed) and recovers the partition directory. */
  static async open(opts: PartitionLogOptions): Promise<PartitionLog> {
    const log = new PartitionLog(opts);
    await log.load(opts);
    return log;
  }

  get logStartOffset(): number {
    return this._logStartOffset;
  }
  get logEndOffset(): number {
    return this._logEndOffset;
  }
  get highWatermark(): number {
    return this._highWatermark;
  }
  /** min(first unstable transaction offset, high watermark). */
  get lastStableOffset(): number {
    return Math.min(this.producers.firstUnstableOffset(), this._highWatermark);
  }
  get latestEpoch(): number {
    return this.epochs.latestEpoch;
  }
  get recoveryPoint(): number {
    return this._recoveryPoint;
  }
  /** Total bytes of all segment files. */
  get size(): number {
    return this.segments.reduce((n, s) => n + s.size, 0);
  }
  get segmentCount(): number {
    return this.segments.length;
  }
  /** Base offsets of the segments, oldest first. */
  get segmentBaseOffsets(): number[] {
    return this.segments.map((s) => s.baseOffset);
  }
  get epochEntries(): readonly EpochEntry[] {
    return this.epochs.all;
  }
  get isOffline(): boolean {
    return this.offlineReason !== null;
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
      if (this.closed) throw new AppendError(StorageError.NOT_LEADER_OR_FOLLOWER, `log ${this.dir} is closed`);
      return fn();
    });
    this.queue = run.catch(() => undefined);
    return run;
  }

  private get active(): LogSegment {
    return this.segments.at(-1) as LogSegment;
  }

  /** Index of the last segment whose base offset ≤ offset (0 when offset precedes all). */
  private segmentIndexFor(offset: number): number {
    let lo = 0;
    let hi = this.segments.length - 1;
    let found = 0;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      if ((this.segments[mid] as LogSegment).baseOffset <= offset) {
        found = mid;
        lo = mid + 1;
      } else hi = mid - 1;
    }
    return found;
  }

  private setHighWatermark(hw: number): void {
    const next = Math.min(Math.max(hw, this._highWatermark), this._logEndOffset);
    if (next === this._highWatermark) return;
    this._highWatermark = next;
    this.producers.onHighWatermark(next);
    this.notify();
  }

  // ---------------------------------------------------------------- loading and recovery

  private async load(opts: PartitionLogOptions): Promise<void> {
    const fs = this.fs;
    await fs.mkdirp(this.dir);
    await this.writePartitionMetadata();
    const names = await fs.readdir(this.dir);
    for (const n of names) {
      if (n.endsWith('.tmp') || n.endsWith('.cleaned')) await fs.unlink(join(this.dir, n));
    }
    const bases = names
      .filter((n) => /^\d{20}\.log$/.test(n))
      .map((n) => Number(n.slice(0, 20)))
      .sort((a, b) => a - b);
    this.epochs = await LeaderEpochCache.load(fs, join(this.dir, 'leader-epoch-checkpoint'));
    const segOpts = { indexIntervalBytes: this.config.indexIntervalBytes, maxIndexBytes: this.config.segmentIndexBytes, now: this.clock.now() };
    if (bases.length === 0) bases.push(opts.logStartOffset ?? 0);
    for (const b of bases) this.segments.push(await LogSegment.open(fs, this.dir, b, segOpts));

    const clean = opts.cleanShutdown === true;
    const recoveryPoint = opts.recoveryPoint ?? 0;
    const recoverFrom = clean ? this.segments.length : this.segmentIndexFor(recoveryPoint);
    const snapLimit = clean ? Number.POSITIVE_INFINITY : (this.segments[recoverFrom]?.baseOffset ?? Number.POSITIVE_INFINITY);
    const snapOffset = await this.loadLatestSnapshot(snapLimit);

    for (let i = 0; i < this.segments.length; i++) {
      const seg = this.segments[i] as LogSegment;
      if (i < recoverFrom && (await seg.loadClean())) {
        this.aborted.push(...(await seg.readAbortedTxns()));
        if (seg.nextOffset > snapOffset) await this.replaySegment(seg, snapOffset);
        continue;
      }
      const truncated = await this.recoverSegment(seg, snapOffset);
      if (truncated > 0) {
        // Everything after a torn or corrupt batch is unreliable (Kafka deletes the later segments).
        for (const later of this.segments.splice(i + 1)) {
          await later.close();
          await later.deleteFiles();
        }
        break;
      }
    }
    this._logEndOffset = this.active.nextOffset;
    this._logStartOffset = Math.max(opts.logStartOffset ?? 0, (this.segments[0] as LogSegment).baseOffset);
    if (this._logStartOffset > this._logEndOffset) this._logEndOffset = this._logStartOffset;
    this.epochs.truncateFromEnd(this._logEndOffset);
    this.epochs.truncateFromStart(this._logStartOffset);
    await this.epochs.flush(true);
    await deleteSnapshotsOutside(this.fs, this.dir, 0, this._logEndOffset);
    // Whatever survived the restart is on disk now: it is the high watermark and the recovery point.
    this._recoveryPoint = this._logEndOffset;
    this._highWatermark = this._logEndOffset;
    this.producers.onHighWatermark(this._highWatermark);
  }

  private async writePartitionMetadata(): Promise<void> {
    const path = join(this.dir, 'partition.metadata');
    if (await this.fs.exists(path)) {
      const text = (await this.fs.readFile(path)).toString('utf8');
      const m = /topic_id:\s*(\S+)/.exec(text);
      if (m !== null && m[1] !== this.topicId) throw new Error(`${path} holds topic id ${m[1]}, expected ${this.topicId}`);
      if (m !== null) return;
    }
    await this.fs.writeFileAtomic(path, `version: 0\ntopic_id: ${this.topicId}\n`);
  }

  /** Loads the newest snapshot at or below `limit`; returns its offset (the log start when none). */
  private async loadLatestSnapshot(limit: number): Promise<number> {
    const offsets = (await listSnapshotOffsets(this.fs, this.dir)).filter((o) => o <= limit);
    for (let i = offsets.length - 1; i >= 0; i--) {
      const off = offsets[i] as number;
      if (this.producers.loadSnapshot(await this.fs.readFile(snapshotPath(this.dir, off)))) return off;
    }
    this.producers.clear();
    return this.segments[0]?.baseOffset ?? 0;
  }

  /** Applies a replayed batch to producer state, recording aborted transactions. */
  private replayBatch(view: RecordBatchView, into: AbortedTxn[]): void {
    if (view.producerId < 0 && !view.isControl) return;
    const ctype = view.isControl ? controlTypeOf(view) : -1;
    const completed = this.producers.replay(view, ctype);
    this.producers.onHighWatermark(view.lastOffset + 1);
    for (const t of completed) if (t.isAborted) into.push(this.abortedEntry(t));
  }

  private abortedEntry(t: CompletedTxn): AbortedTxn {
    const lso = Math.min(this.producers.ongoingFirstOffset(), t.lastOffset + 1);
    return { producerId: t.producerId, firstOffset: t.firstOffset, lastOffset: t.lastOffset, lastStableOffset: lso };
  }

  private async replaySegment(seg: LogSegment, fromOffset: number): Promise<void> {
    const start = fromOffset > seg.baseOffset ? ((await seg.translateOffset(fromOffset))?.position ?? seg.size) : 0;
    const ignored: AbortedTxn[] = [];
    await scanBatches(seg.log, start, seg.size, { full: true }, (v) => {
      if (v.baseOffset >= fromOffset) this.replayBatch(v, ignored);
    });
  }

  private async recoverSegment(seg: LogSegment, snapOffset: number): Promise<number> {
    const aborted: AbortedTxn[] = [];
    const truncated = await seg.recover(Math.max(this.config.maxMessageBytes, 1 << 20) + BATCH.HEADER_SIZE, (v) => {
      // Only epochs newer than the cache's latest (Kafka's LogSegment.recover): re-scanning an
      // older segment must not wipe the later entries.
      if (v.partitionLeaderEpoch > this.epochs.latestEpoch) this.epochs.assign(v.partitionLeaderEpoch, v.baseOffset);
      if (v.baseOffset >= snapOffset) this.replayBatch(v, aborted);
    });
    for (const t of aborted) await seg.appendAbortedTxn(t);
    this.aborted.push(...aborted);
    return truncated;
  }

  /** Rebuilds producer state and aborted transactions for the log as it now ends (after truncation). */
  private async rebuildProducerState(): Promise<void> {
    await deleteSnapshotsOutside(this.fs, this.dir, 0, this._logEndOffset);
    const snapOffset = await this.loadLatestSnapshot(this._logEndOffset);
    for (const seg of this.segments) if (seg.nextOffset > snapOffset) await this.replaySegment(seg, snapOffset);
    this.producers.onHighWatermark(this._highWatermark);
  }

  private async takeSnapshot(offset: number): Promise<void> {
    await this.fs.writeFileAtomic(snapshotPath(this.dir, offset), this.producers.encodeSnapshot());
    const all = await listSnapshotOffsets(this.fs, this.dir);
    for (const off of all.slice(0, Math.max(0, all.length - SNAPSHOTS_TO_KEEP))) await this.fs.unlink(snapshotPath(this.dir, off));
  }

  // ---------------------------------------------------------------- append

  private checkOnline(): void {
    if (this.offlineReason !== null) throw new AppendError(StorageError.KAFKA_STORAGE_ERROR, `log offline: ${this.offlineReason}`);
  }

  private failure(e: unknown): AppendResult {
    const fail = (errorCode: number, errorMessage: string): AppendResult => ({
      errorCode,
      baseOffset: -1,
      lastOffset: -1,
      logAppendTime: -1,
      logStartOffset: this._logStartOffset,
      errorMessage,
    });
    if (e instanceof AppendError) return fail(e.errorCode, e.message);
    // A header field no batch can hold (an int64 beyond 2^53, a record that overruns its batch)
    // is corrupt input, answered with a code rather than a failed request.
    if (e instanceof DecodeError || e instanceof RangeError) return fail(StorageError.CORRUPT_MESSAGE, e.message);
    throw e;
  }

  /**
   * Appends client (or coordinator) batches: validates headers, checks idempotent/transactional
   * producer state, assigns offsets and the leader epoch by patching `records` in place (for
   * LogAppendTime also the timestamp type and maxTimestamp, with the CRC recomputed), writes,
   * and resolves per `requiredAcks`. A duplicate of one of a producer's last 5 batches returns
   * the original offsets with errorCode 0.
   */
  async appendAsLeader(records: Buffer, leaderEpoch: number, opts: AppendOptions = {}): Promise<AppendResult> {
    let written: { result: AppendResult; sync: boolean };
    try {
      written = await this.serial(() => this.leaderAppendLocked(records, leaderEpoch, opts));
    } catch (e) {
      return this.failure(e);
    }
    return this.finishAppend(written);
  }

  private async finishAppend(written: { result: AppendResult; sync: boolean }): Promise<AppendResult> {
    const { result } = written;
    if (result.errorCode !== 0 || result.lastOffset < 0) return result;
    if (written.sync) {
      try {
        await this.groupCommit.sync(this);
      } catch (e) {
        return { ...result, errorCode: StorageError.KAFKA_STORAGE_ERROR, errorMessage: `fsync failed: ${String(e)}` };
      }
    }
    this.setHighWatermark(result.lastOffset + 1);
    return result;
  }

  private async leaderAppendLocked(records: Buffer, leaderEpoch: number, opts: AppendOptions): Promise<{ result: AppendResult; sync: boolean }> {
    this.checkOnline();
    const origin: AppendOrigin = opts.origin ?? 'client';
    const starts = validateBatchHeaders(records, origin, opts.prevalidated !== true, this.config);
    if (leaderEpoch < this.epochs.latestEpoch) {
      throw new AppendError(FENCED_LEADER_EPOCH, `leader epoch ${leaderEpoch} is older than ${this.epochs.latestEpoch}`);
    }
    const now = this.clock.now();
    const logAppend = (opts.timestampType ?? this.config.messageTimestampType) === 'LogAppendTime';
    if (starts.length === 1 && origin === 'client') {
      const dup = this.producers.findDuplicate(new RecordBatchView(records, 0));
      if (dup !== undefined) {
        return {
          result: { errorCode: 0, baseOffset: dup.firstOffset, lastOffset: dup.lastOffset, logAppendTime: logAppend ? now : -1, logStartOffset: this._logStartOffset },
          sync: false,
        };
      }
    }
    const staged = this.producers.begin();
    const firstOffset = this._logEndOffset;
    let next = firstOffset;
    const batches: AppendedBatch[] = [];
    for (const at of starts) {
      const v = new RecordBatchView(records, at);
      if (!logAppend) checkTimestamps(v, now, this.config);
      patchBaseOffset(records, at, next);
      patchPartitionLeaderEpoch(records, at, leaderEpoch);
      if (logAppend) {
        records.writeInt16BE(v.attributes | ATTR.TIMESTAMP_LOG_APPEND, at + BATCH.ATTRIBUTES);
        writeOffset(records, at + BATCH.MAX_TIMESTAMP, now);
        records.writeUInt32BE(crc32c(records.subarray(at + BATCH.ATTRIBUTES, at + v.sizeInBytes)), at + BATCH.CRC);
      }
      const ctype = v.isControl ? controlTypeOf(v) : -1;
      const coordEpoch = opts.coordinatorEpoch ?? (ctype === ControlType.ABORT || ctype === ControlType.COMMIT ? markerCoordinatorEpoch(v) : -1);
      staged.add(v, origin, ctype, coordEpoch);
      batches.push({ baseOffset: next, lastOffset: v.lastOffset, maxTimestamp: v.maxTimestamp, size: v.sizeInBytes });
      next = v.lastOffset + 1;
    }
    await this.writeBatches([records], batches);
    if (this.epochs.assign(leaderEpoch, firstOffset)) await this.epochs.flush();
    const completed = staged.commit();
    if (completed.length > 0) await this.commitProducerState(completed);
    const count = next - firstOffset;
    const result: AppendResult = {
      errorCode: 0,
      baseOffset: firstOffset,
      lastOffset: next - 1,
      logAppendTime: logAppend ? now : -1,
      logStartOffset: this._logStartOffset,
    };
    return { result, sync: this.afterWrite(count, opts.requiredAcks === -1) };
  }

  /** Records aborted transactions of the markers just written (into the active segment's .txnindex). */
  private async commitProducerState(completed: CompletedTxn[]): Promise<void> {
    for (const t of completed) {
      if (!t.isAborted) continue;
      const entry = this.abortedEntry(t);
      await this.active.appendAbortedTxn(entry);
      this.aborted.push(entry);
    }
  }

  /** Counts unflushed messages and says whether this append must wait for an fsync. */
  private afterWrite(messages: number, acksAll: boolean): boolean {
    this.unflushedMessages += messages;
    this.notify();
    return acksAll || this.unflushedMessages >= this.config.flushMessages;
  }

  /** Rolls if needed, then writes the batches at the log end; on failure the tail is cut back. */
  private async writeBatches(buffers: Buffer[], batches: AppendedBatch[]): Promise<void> {
    const first = batches[0] as AppendedBatch;
    const last = batches.at(-1) as AppendedBatch;
    const bytes = batches.reduce((n, b) => n + b.size, 0);
    const maxTs = batches.reduce((m, b) => Math.max(m, b.maxTimestamp), -1);
    await this.maybeRoll(first.baseOffset, last.lastOffset, bytes, maxTs);
    const seg = this.active;
    const before = seg.size;
    try {
      await seg.append(buffers, batches);
    } catch (e) {
      try {
        await seg.log.truncate(before);
        seg.size = before;
      } catch (e2) {
        this.offlineReason = `write failed and could not be undone: ${String(e2)}`;
      }
      throw new AppendError(StorageError.KAFKA_STORAGE_ERROR, `write failed: ${String(e)}`);
    }
    this._logEndOffset = last.lastOffset + 1;
  }

  private async maybeRoll(firstOffset: number, lastOffset: number, bytes: number, maxTimestamp: number): Promise<void> {
    const seg = this.active;
    const timeUp = seg.timeWaitedForRoll(this.clock.now(), maxTimestamp) > this.config.segmentMs;
    if (!timeUp && !seg.wouldOverflow(bytes, this.config.segmentBytes, lastOffset)) return;
    await this.roll(firstOffset);
  }

  /** Starts a new active segment at `baseOffset` (Kafka's roll), snapshotting producer state. */
  private async roll(baseOffset: number): Promise<void> {
    const old = this.active;
    if (old.size === 0 && old.baseOffset === baseOffset) return;
    if (old.size === 0) {
      this.segments.pop();
      await old.close();
      await old.deleteFiles();
    } else {
      // Kafka's onBecomeInactiveSegment: the time index ends with the segment's max timestamp.
      if (old.maxTimestamp >= 0) old.timeIndex.maybeAppend(old.maxTimestamp, old.offsetOfMaxTimestamp);
      await old.syncIndexes();
    }
    const seg = await LogSegment.open(this.fs, this.dir, baseOffset, {
      indexIntervalBytes: this.config.indexIntervalBytes,
      maxIndexBytes: this.config.segmentIndexBytes,
      now: this.clock.now(),
    });
    this.segments.push(seg);
    await this.takeSnapshot(baseOffset);
  }

  /**
   * Appends batches at their source offsets (mirror, later followers): offsets and partition
   * leader epochs are kept byte for byte. The first batch must start at or after the log end
   * (gaps are legal: a compacted source has them) and batches must increase. The epoch cache is
   * built from the batches' epochs and producer state is replayed without sequence checks; a
   * MIRROR_PID_RESET control batch (KIP-1279) clears all producer state.
   */
  async appendAsMirror(records: Buffer, opts: MirrorAppendOptions = {}): Promise<AppendResult> {
    let written: { result: AppendResult; sync: boolean };
    try {
      written = await this.serial(() => this.mirrorAppendLocked(records, opts));
    } catch (e) {
      return this.failure(e);
    }
    return this.finishAppend(written);
  }

  private async mirrorAppendLocked(records: Buffer, opts: MirrorAppendOptions): Promise<{ result: AppendResult; sync: boolean }> {
    this.checkOnline();
    const starts = validateBatchHeaders(records, 'replication', false, this.config);
    let expected = this._logEndOffset;
    const batches: AppendedBatch[] = [];
    const staged = this.producers.begin();
    const epochChanges: [number, number][] = [];
    let latest = this.epochs.latestEpoch;
    let messages = 0;
    for (const at of starts) {
      const v = new RecordBatchView(records, at);
      if (v.baseOffset < expected || (opts.requireContiguous === true && at === 0 && v.baseOffset !== expected)) {
        throw new AppendError(StorageError.OFFSET_OUT_OF_RANGE, `batch at offset ${v.baseOffset} does not continue the log end ${expected}`);
      }
      if (opts.verifyCrc === true && !v.isValid()) throw new AppendError(StorageError.CORRUPT_MESSAGE, `CRC mismatch in batch at ${v.baseOffset}`);
      const ctype = v.isControl ? controlTypeOf(v) : -1;
      staged.add(v, 'replication', ctype, -1);
      if (v.partitionLeaderEpoch >= 0 && v.partitionLeaderEpoch !== latest) {
        epochChanges.push([v.partitionLeaderEpoch, v.baseOffset]);
        latest = v.partitionLeaderEpoch;
      }
      batches.push({ baseOffset: v.baseOffset, lastOffset: v.lastOffset, maxTimestamp: v.maxTimestamp, size: v.sizeInBytes });
      messages += v.lastOffsetDelta + 1;
      expected = v.lastOffset + 1;
    }
    const first = batches[0] as AppendedBatch;
    if (this.active.size === 0 && this.active.baseOffset < first.baseOffset && this.segments.length === 1 && this._logEndOffset === this.active.baseOffset) {
      // An empty log adopting the source's start: the segment is renamed by rolling at the first offset.
      await this.roll(first.baseOffset);
      this._logStartOffset = first.baseOffset;
    }
    await this.writeBatches([records], batches);
    for (const [epoch, offset] of epochChanges) this.epochs.assign(epoch, offset);
    if (this.epochs.isDirty) await this.epochs.flush();
    const completed = staged.commit();
    if (completed.length > 0) await this.commitProducerState(completed);
    const result: AppendResult = {
      errorCode: 0,
      baseOffset: first.baseOffset,
      lastOffset: expected - 1,
      logAppendTime: -1,
      logStartOffset: this._logStartOffset,
    };
    return { result, sync: this.afterWrite(messages, opts.requiredAcks === -1) };
  }

  // ---------------------------------------------------------------- durability

  /** fsyncs every segment with unflushed data; the recovery point moves to the log end seen before. */
  async syncNow(): Promise<void> {
    const end = this._logEndOffset;
    const dirty = this.segments.filter((s) => s.unflushed);
    const started = performance.now();
    try {
      for (const s of dirty) await s.sync();
      if (dirty.length > 0 && fsyncChannel.hasSubscribers) fsyncChannel.publish({ durationMs: performance.now() - started });
    } catch (e) {
      this.offlineReason = `fsync failed: ${String(e)}`;
      throw e;
    }
    if (end > this._recoveryPoint) this._recoveryPoint = end;
    this.unflushedMessages = 0;
    this.lastFlushTime = this.clock.now();
  }

  /** Makes everything appended so far durable (group commit) and advances the high watermark. */
  async flush(): Promise<void> {
    const end = this._logEndOffset;
    await this.groupCommit.sync(this);
    this.setHighWatermark(end);
  }

  /** flush.ms: flushes when the oldest unflushed data is older than flush.ms. */
  async maybeFlushByTime(): Promise<void> {
    if (this.unflushedMessages > 0 && this.clock.now() - this.lastFlushTime >= this.config.flushMs) await this.flush();
  }

  // ---------------------------------------------------------------- read

  /**
   * Reads whole batches from `fetchOffset` (the batch containing it first) up to `maxOffset`
   * (exclusive; the HW or LSO) and about `maxBytes`, as file ranges: the fetch path reads them
   * into its own pooled buffer (see FileSlice). One segment per read, as Kafka does. With
   * `minOneMessage` the first batch is returned whole even when larger than maxBytes.
   * Offsets outside [logStartOffset, logEndOffset] are OFFSET_OUT_OF_RANGE.
   */
  async read(opts: ReadOptions): Promise<ReadResult> {
    const base = {
      highWatermark: this._highWatermark,
      lastStableOffset: this.lastStableOffset,
      logStartOffset: this._logStartOffset,
    };
    const empty: ReadResult = { errorCode: 0, records: [], abortedTransactions: [], ...base };
    const { fetchOffset, maxOffset } = opts;
    if (fetchOffset < this._logStartOffset || fetchOffset > this._logEndOffset) {
      return { ...empty, errorCode: StorageError.OFFSET_OUT_OF_RANGE };
    }
    if (fetchOffset >= maxOffset || fetchOffset === this._logEndOffset) return empty;
    // A copy: retention or truncation may change the list while this read awaits.
    const found = await readSegments(this.segments.slice(this.segmentIndexFor(fetchOffset)), opts);
    if (found === null) return empty;
    const abortedTransactions = opts.readCommitted === true ? this.abortedBetween(fetchOffset, found.upperOffset) : [];
    return { errorCode: 0, records: [found.slice], abortedTransactions, ...base };
  }

  /** Like `read`, with the bytes read into one Buffer (coordinators, tools, tests). */
  async readToBuffer(opts: ReadOptions): Promise<ReadResult<Buffer>> {
    const r = await this.read(opts);
    const total = r.records.reduce((n, s) => n + s.length, 0);
    const buf = Buffer.allocUnsafe(total);
    let at = 0;
    for (const s of r.records) at += await s.readInto(buf, at);
    // A truncation racing the read may have shortened the file: keep whole batches only.
    const whole = forEachBatchIn(buf.subarray(0, at), () => undefined);
    return { ...r, records: buf.subarray(0, whole) };
  }

  /** Aborted transactions overlapping [from, upper) (Kafka's collectAbortedTransactions). */
  private abortedBetween(from: number, upper: number): AbortedTransaction[] {
    const out: AbortedTransaction[] = [];
    // Entries are in marker order, so lastOffset increases: start at the first ending at or after
    // `from`. Once an entry's lastStableOffset reaches `upper`, every later transaction started at
    // or after it, so none of them can overlap the range (Kafka's TransactionIndex rule).
    let lo = 0;
    let hi = this.aborted.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((this.aborted[mid] as AbortedTxn).lastOffset < from) lo = mid + 1;
      else hi = mid;
    }
    for (let i = lo; i < this.aborted.length; i++) {
      const t = this.aborted[i] as AbortedTxn;
      if (t.firstOffset < upper) out.push({ producerId: t.producerId, firstOffset: t.firstOffset });
      if (t.lastStableOffset >= upper) break;
    }
    return out;
  }

  // ---------------------------------------------------------------- epochs and timestamps

  /** The OffsetsForLeaderEpoch answer for `epoch`: (-1, -1) when the log knows nothing of it. */
  endOffsetForEpoch(epoch: number): { epoch: number; endOffset: number } {
    const r = this.epochs.endOffsetFor(epoch, this._logEndOffset);
    return { epoch: r.epoch, endOffset: r.endOffset };
  }

  /** Records that `epoch` starts at `offset` (a new leader epoch starts at the log end). */
  async assignEpochStartOffset(epoch: number, offset: number): Promise<void> {
    await this.serial(async () => {
      this.epochs.assign(epoch, offset);
      await this.epochs.flush();
    });
  }

  /**
   * ListOffsets: -2 earliest, -1 latest, -3 the record with the max timestamp; otherwise the first record whose
   * timestamp is ≥ ts (exact inside uncompressed batches, the batch for compressed ones).
   */
  async offsetForTimestamp(ts: number): Promise<TimestampAndOffset | null> {
    if (ts === LIST_OFFSETS_EARLIEST) {
      return { offset: this._logStartOffset, timestamp: -1, leaderEpoch: this.epochs.epochForOffset(this._logStartOffset) };
    }
    if (ts === LIST_OFFSETS_LATEST) return { offset: this._logEndOffset, timestamp: -1, leaderEpoch: this.epochs.latestEpoch };
    if (ts === LIST_OFFSETS_MAX_TIMESTAMP) return findMaxTimestampOffset(this.segments.slice());
    return findOffsetForTimestamp(this.segments.slice(), ts, this._logStartOffset);
  }

  /**
   * The largest timestamp and the last offset of the batch holding it, from memory (no I/O).
   * `offsetForTimestamp(-3)` gives the exact record offset KIP-734 asks for.
   */
  maxTimestampOffset(): TimestampAndOffset | null {
    let best: LogSegment | null = null;
    for (const seg of this.segments) if (seg.size > 0 && (best === null || seg.maxTimestamp > best.maxTimestamp)) best = seg;
    if (best === null || best.maxTimestamp < 0) return null;
    return { offset: best.offsetOfMaxTimestamp, timestamp: best.maxTimestamp, leaderEpoch: this.epochs.epochForOffset(best.offsetOfMaxTimestamp) };
  }

  // ---------------------------------------------------------------- truncation and deletion

  /**
   * Removes every batch at or after `offset` (the batch containing it included): a follower or
   * mirror diverged from its leader. Epoch cache, producer state and transactions follow.
   */
  async truncateTo(offset: number): Promise<void> {
    await this.serial(async () => {
      if (offset >= this._logEndOffset) return;
      if (offset < this._logStartOffset) return this.truncateFullyLocked(offset);
      const keep = this.segmentIndexFor(offset);
      for (const seg of this.segments.splice(keep + 1)) await this.retire(seg);
      const seg = this.active;
      await seg.truncateTo(offset);
      this._logEndOffset = seg.nextOffset;
      this.epochs.truncateFromEnd(this._logEndOffset);
      await this.epochs.flush();
      this.aborted = this.aborted.filter((t) => t.lastOffset < this._logEndOffset);
      await seg.resetTxnIndex();
      for (const t of this.aborted) if (t.lastOffset >= seg.baseOffset) await seg.appendAbortedTxn(t);
      if (this._highWatermark > this._logEndOffset) this._highWatermark = this._logEndOffset;
      if (this._recoveryPoint > this._logEndOffset) this._recoveryPoint = this._logEndOffset;
      await this.rebuildProducerState();
      this.notify();
    });
  }

  /** Empties the log and restarts it at `offset` (a mirror or follower out of range). */
  async truncateFullyAndStartAt(offset: number): Promise<void> {
    await this.serial(() => this.truncateFullyLocked(offset));
  }

  private async truncateFullyLocked(offset: number): Promise<void> {
    for (const seg of this.segments.splice(0)) await this.retire(seg);
    this.segments.push(
      await LogSegment.open(this.fs, this.dir, offset, {
        indexIntervalBytes: this.config.indexIntervalBytes,
        maxIndexBytes: this.config.segmentIndexBytes,
        now: this.clock.now(),
      }),
    );
    this._logStartOffset = offset;
    this._logEndOffset = offset;
    this._highWatermark = offset;
    this._recoveryPoint = offset;
    this.epochs.clear();
    await this.epochs.flush(true);
    this.producers.clear();
    this.aborted = [];
    await deleteSnapshotsOutside(this.fs, this.dir, offset + 1, -1);
    this.notify();
  }

  /** Unlinks a segment's files now and closes its handles after file.delete.delay.ms (open fetches finish). */
  private async retire(seg: LogSegment): Promise<void> {
    await seg.deleteFiles();
    this.closeLater(seg);
  }

  private closeLater(seg: LogSegment): void {
    const entry = {
      seg,
      timer: setTimeout(() => {
        this.pendingCloses.delete(entry);
        void seg.close().catch(() => undefined);
      }, Math.max(0, this.config.fileDeleteDelayMs)),
    };
    entry.timer.unref();
    this.pendingCloses.add(entry);
  }

  /**
   * DeleteRecords: moves the log start to `offset` (≤ high watermark) and deletes the segments
   * entirely below it. Returns the new log start offset, or throws OFFSET_OUT_OF_RANGE.
   */
  async deleteRecordsBefore(offset: number): Promise<number> {
    return this.serial(async () => {
      if (offset > this._highWatermark) {
        throw new AppendError(StorageError.OFFSET_OUT_OF_RANGE, `offset ${offset} is above the high watermark ${this._highWatermark}`);
      }
      if (offset > this._logStartOffset) {
        this._logStartOffset = offset;
        await this.deleteSegmentsBelowStart();
      }
      return this._logStartOffset;
    });
  }

  private async deleteSegmentsBelowStart(): Promise<void> {
    while (this.segments.length > 1 && (this.segments[1] as LogSegment).baseOffset <= this._logStartOffset) {
      await this.retire(this.segments.shift() as LogSegment);
    }
    this.epochs.truncateFromStart(this._logStartOffset);
    await this.epochs.flush();
    this.aborted = this.aborted.filter((t) => t.lastOffset >= this._logStartOffset);
  }

  /**
   * Time and size retention (cleanup.policy containing delete): deletes whole segments below
   * the high watermark whose newest timestamp is older than retention.ms, then oldest segments
   * while the log exceeds retention.bytes. The active segment goes too (after a roll) when all
   * of it is expired. Returns the number of segments deleted.
   */
  async applyRetention(): Promise<number> {
    return this.serial(async () => {
      if (!this.config.cleanupPolicy.includes('delete')) return 0;
      const now = this.clock.now();
      const { retentionMs, retentionBytes } = this.config;
      let total = this.size;
      let n = 0;
      for (const seg of this.segments) {
        if (seg.size === 0 || seg.nextOffset > this._highWatermark) break;
        const expired = retentionMs >= 0 && seg.maxTimestamp >= 0 && now - seg.maxTimestamp > retentionMs;
        const oversize = retentionBytes >= 0 && total - seg.size >= retentionBytes;
        if (!expired && !oversize) break;
        total -= seg.size;
        n++;
      }
      if (n === 0) return 0;
      if (n === this.segments.length) await this.roll(this._logEndOffset);
      for (let i = 0; i < n; i++) await this.retire(this.segments.shift() as LogSegment);
      this._logStartOffset = Math.max(this._logStartOffset, (this.segments[0] as LogSegment).baseOffset);
      await this.deleteSegmentsBelowStart();
      this.notify();
      return n;
    });
  }

  // ---------------------------------------------------------------- producers, lifecycle

  /** DescribeProducers: the active producers of this partition. */
  producerStates(): ProducerStateView[] {
    return this.producers.views();
  }

  /** Aborted transactions known to the log (from the .txnindex files), oldest first. */
  abortedTransactions(): readonly AbortedTxn[] {
    return this.aborted;
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
    return this.serial(() =>
      fn(this.segments.slice(), async (oldSegs, newSeg) => {
        const first = this.segments.indexOf(oldSegs[0] as LogSegment);
        this.segments.splice(first, oldSegs.length, newSeg);
        for (const s of oldSegs) {
          if (s.baseOffset === newSeg.baseOffset) this.closeLater(s);
          else await this.retire(s);
        }
      }),
    );
  }

  /** Compacts the log (cleanup.policy=compact); see log-cleaner.ts. */
  compact(): Promise<CleanStats> {
    return compactLog(this);
  }

  /** Flushes, snapshots producer state at the log end, and closes every file. */
  async close(): Promise<void> {
    await this.serial(async () => {
      if (this.offlineReason === null) {
        await this.syncNow();
        for (const s of this.segments) await s.syncIndexes();
        await this.takeSnapshot(this._logEndOffset);
        await this.epochs.flush();
      }
      for (const s of this.segments) await s.close();
      for (const p of this.pendingCloses) {
        clearTimeout(p.timer);
        await p.seg.close().catch(() => undefined);
      }
      this.pendingCloses.clear();
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
    this.offlineReason ??= 'handlers closed';
    for (const s of this.segments) await s.close().catch(() => undefined);
    for (const p of this.pendingCloses) {
      clearTimeout(p.timer);
      await p.seg.close().catch(() => undefined);
    }
    this.pendingCloses.clear();
  }

  /** Closes the log and removes its directory (topic deletion). */
  async deleteLog(): Promise<void> {
    if (!this.closed) {
      this.offlineReason ??= 'deleted';
      await this.close();
    }
    await this.fs.rmrf(this.dir);
  }
}
