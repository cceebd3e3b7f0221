/**
 * The segments of one partition directory (Kafka's LocalLog): the ordered LogSegments, the log
 * end offset and the recovery point, rolling, writing at the end, fsync, reading ranges,
 * truncation, deleting old segments (retention, DeleteRecords) and swapping cleaned ones in.
 * It knows nothing of epochs, producers, transactions or the high watermark: PartitionLog
 * keeps those in step with what is done here.
 *
 * Concurrency contract: every mutating method is called from inside PartitionLog's per-partition
 * queue, so exactly one runs at a time. `read` and `sync` may run alongside a mutation: a read
 * works on a copy of the segment list and sees only batches whose write completed, and a
 * deleted segment's files stay open for file.delete.delay.ms so reads already holding it finish.
 */
import type { Clock } from '../common/time.js';
import { join } from 'node:path';
import { ErrorCode } from '../protocol/generated/errors.js';
import { KafkaError } from '../protocol/kafka-error.js';
import type { FileSystem } from './file-system.js';
import type { LogConfig } from './log-config.js';
import { deletePartitionDir } from './log-dir-deletion.js';
import { LogSegment, type AppendedBatch } from './log-segment.js';
import type { ReadOptions } from './partition-log-options.js';
import { findMaxTimestampOffset, findOffsetForTimestamp, readSegments, type TimestampAndOffset } from './segment-read.js';
import type { LeaderEpochCache } from './leader-epoch-cache.js';
import { channel } from 'node:diagnostics_channel';

/** Log flush latency, observed by src/metrics (the channel names are in src/metrics/channels.ts). */
const fsyncChannel = channel('fjord:fsync');

/** ListOffsets' special timestamps (Kafka's ListOffsetsRequest.EARLIEST/LATEST/MAX_TIMESTAMP). */
const LIST_OFFSETS_EARLIEST = -2;
const LIST_OFFSETS_LATEST = -1;
const LIST_OFFSETS_MAX_TIMESTAMP = -3;

export class LocalLog {
  /** Oldest first; the last one is the active segment. Never empty once loaded. */
  segments: LogSegment[] = [];
  logEndOffset = 0;
  /** Offset below which everything is fsynced (Kafka's recovery point). */
  recoveryPoint = 0;
  /** Bytes whose write completed since the log was opened (only grows; truncation does not lower it). */
  bytesAppended = 0;
  /**
   * Truncations since the log was opened. A sync that began before one must not move the
   * recovery point to the end it saw: the bytes past the cut may have been written again since,
   * and its fsync did not cover them.
   */
  truncations = 0;
  /** Why the files can no longer be trusted (a failed write or fsync), or null. */
  offlineReason: string | null = null;
  private readonly pendingCloses = new Set<{ seg: LogSegment; timer: NodeJS.Timeout }>();

  constructor(
    readonly dir: string,
    readonly fs: FileSystem,
    readonly clock: Clock,
    private readonly configOf: () => LogConfig,
    /** Told once when a failed write or fsync takes the log offline (Kafka's LogDirFailureChannel). */
    private readonly onOffline?: (reason: string) => void,
  ) {}

  private fail(reason: string): void {
    if (this.offlineReason !== null) return;
    this.offlineReason = reason;
    this.onOffline?.(reason);
  }

  get active(): LogSegment {
    return this.segments.at(-1) as LogSegment;
  }

  /** Total bytes of all segment files. */
  get size(): number {
    return this.segments.reduce((n, s) => n + s.size, 0);
  }

  /** Index of the last segment whose base offset ≤ offset (0 when offset precedes all). */
  segmentIndexFor(offset: number): number {
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

  openSegment(baseOffset: number): Promise<LogSegment> {
    const config = this.configOf();
    return LogSegment.open(this.fs, this.dir, baseOffset, {
      indexIntervalBytes: config.indexIntervalBytes,
      maxIndexBytes: config.segmentIndexBytes,
      now: this.clock.now(),
    });
  }

  /** segment.ms has passed for the active segment, or the batches would overflow it (segment.bytes, index, offsets). */
  shouldRoll(lastOffset: number, bytes: number, maxTimestamp: number): boolean {
    const seg = this.active;
    const config = this.configOf();
    return seg.timeWaitedForRoll(this.clock.now(), maxTimestamp) > config.segmentMs || seg.wouldOverflow(bytes, config.segmentBytes, lastOffset);
  }

  /**
   * Starts a new active segment at `baseOffset` (Kafka's LocalLog.roll). An empty active segment
   * is replaced rather than kept. Returns false when the active segment already is that one.
   */
  async roll(baseOffset: number): Promise<boolean> {
    const old = this.active;
    if (old.size === 0 && old.baseOffset === baseOffset) return false;
    if (old.size === 0) {
      this.segments.pop();
      await old.close();
      await old.deleteFiles();
    } else {
      // Kafka's onBecomeInactiveSegment: the time index ends with the segment's max timestamp.
      if (old.maxTimestamp >= 0) old.timeIndex.maybeAppend(old.maxTimestamp, old.offsetOfMaxTimestamp);
      await old.syncIndexes();
    }
    this.segments.push(await this.openSegment(baseOffset));
    return true;
  }

  /**
   * Writes the batches at the end of the active segment; on failure the tail is cut back (the
   * log goes offline when even that fails) and the append is KAFKA_STORAGE_ERROR.
   */
  async append(buffers: Buffer[], batches: AppendedBatch[]): Promise<void> {
    const seg = this.active;
    const before = seg.size;
    try {
      await seg.append(buffers, batches);
    } catch (e) {
      try {
        await seg.log.truncate(before);
        seg.size = before;
      } catch (e2) {
        this.fail(`write failed and could not be undone: ${String(e2)}`);
      }
      throw new KafkaError(ErrorCode.KAFKA_STORAGE_ERROR, `write failed: ${String(e)}`);
    }
    this.logEndOffset = (batches.at(-1) as AppendedBatch).lastOffset + 1;
    this.bytesAppended += seg.size - before;
  }

  /**
   * fsyncs every segment with unflushed data; the recovery point moves to `end` (the log end seen
   * before by default), unless the log was truncated since `truncations` was read with it.
   */
  async sync(end = this.logEndOffset, truncations = this.truncations): Promise<void> {
    const dirty = this.segments.filter((s) => s.unflushed);
    const started = performance.now();
    try {
      for (const s of dirty) await s.sync();
      if (dirty.length > 0 && fsyncChannel.hasSubscribers) fsyncChannel.publish({ durationMs: performance.now() - started });
    } catch (e) {
      this.fail(`fsync failed: ${String(e)}`);
      throw e;
    }
    if (truncations === this.truncations && end > this.recoveryPoint) this.recoveryPoint = end;
  }

  /** The file range of whole batches from `fetchOffset`, in one segment (see PartitionLog.read). */
  read(opts: ReadOptions): ReturnType<typeof readSegments> {
    // A copy: retention or truncation may change the list while this read awaits.
    return readSegments(this.segments.slice(this.segmentIndexFor(opts.fetchOffset)), opts);
  }

  /** ListOffsets by timestamp: -2 earliest, -1 latest, -3 the max timestamp, else the first record at or after `ts`. */
  offsetForTimestamp(ts: number, logStartOffset: number, epochs: LeaderEpochCache): Promise<TimestampAndOffset | null> {
    if (ts === LIST_OFFSETS_EARLIEST) return Promise.resolve({ offset: logStartOffset, timestamp: -1, leaderEpoch: epochs.epochForOffset(logStartOffset) });
    if (ts === LIST_OFFSETS_LATEST) return Promise.resolve({ offset: this.logEndOffset, timestamp: -1, leaderEpoch: epochs.latestEpoch });
    if (ts === LIST_OFFSETS_MAX_TIMESTAMP) return findMaxTimestampOffset(this.segments.slice());
    return findOffsetForTimestamp(this.segments.slice(), ts, logStartOffset);
  }

  /** The largest timestamp and the last offset of the batch holding it, from the segments' memory (no I/O). */
  maxTimestampOffset(epochs: LeaderEpochCache): TimestampAndOffset | null {
    let best: LogSegment | null = null;
    for (const seg of this.segments) if (seg.size > 0 && (best === null || seg.maxTimestamp > best.maxTimestamp)) best = seg;
    if (best === null || best.maxTimestamp < 0) return null;
    return { offset: best.offsetOfMaxTimestamp, timestamp: best.maxTimestamp, leaderEpoch: epochs.epochForOffset(best.offsetOfMaxTimestamp) };
  }

  /** Removes every batch at or after `offset`; returns the segment that is now active. */
  async truncateTo(offset: number): Promise<LogSegment> {
    this.truncations++;
    const keep = this.segmentIndexFor(offset);
    for (const seg of this.segments.splice(keep + 1)) await this.retire(seg);
    const seg = this.active;
    await seg.truncateTo(offset);
    this.logEndOffset = seg.nextOffset;
    if (this.recoveryPoint > this.logEndOffset) this.recoveryPoint = this.logEndOffset;
    return seg;
  }

  /** Deletes every segment and starts one empty segment at `offset`. */
  async truncateFully(offset: number): Promise<void> {
    this.truncations++;
    for (const seg of this.segments.splice(0)) await this.retire(seg);
    this.segments.push(await this.openSegment(offset));
    this.logEndOffset = offset;
    this.recoveryPoint = offset;
  }

  /** Deletes the segments lying entirely below `logStartOffset` (the one holding it stays). */
  async deleteSegmentsBelow(logStartOffset: number): Promise<void> {
    while (this.segments.length > 1 && (this.segments[1] as LogSegment).baseOffset <= logStartOffset) {
      await this.retire(this.segments.shift() as LogSegment);
    }
  }

  /**
   * How many of the oldest segments retention may delete: whole segments below `highWatermark`
   * whose newest timestamp is older than retention.ms, then the oldest while the log exceeds
   * retention.bytes (Kafka's deleteRetentionMsBreachedSegments / deleteRetentionSizeBreachedSegments).
   */
  retainableSegments(highWatermark: number): number {
    const now = this.clock.now();
    const { retentionMs, retentionBytes } = this.configOf();
    let total = this.size;
    let n = 0;
    for (const seg of this.segments) {
      if (seg.size === 0 || seg.nextOffset > highWatermark) break;
      const expired = retentionMs >= 0 && seg.maxTimestamp >= 0 && now - seg.maxTimestamp > retentionMs;
      const oversize = retentionBytes >= 0 && total - seg.size >= retentionBytes;
      if (!expired && !oversize) break;
      total -= seg.size;
      n++;
    }
    return n;
  }

  /** Deletes the `n` oldest segments (after a roll when that is all of them). */
  async deleteOldest(n: number): Promise<void> {
    for (let i = 0; i < n; i++) await this.retire(this.segments.shift() as LogSegment);
  }

  /** Puts a cleaned segment in place of the segments it was built from (the log cleaner's swap). */
  async replaceSegments(oldSegs: LogSegment[], newSeg: LogSegment): Promise<void> {
    const first = this.segments.indexOf(oldSegs[0] as LogSegment);
    this.segments.splice(first, oldSegs.length, newSeg);
    for (const s of oldSegs) {
      if (s.baseOffset === newSeg.baseOffset) this.closeLater(s);
      else await this.retire(s);
    }
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
      }, Math.max(0, this.configOf().fileDeleteDelayMs)),
    };
    entry.timer.unref();
    this.pendingCloses.add(entry);
  }

  /** Closes every file handle, the retired segments' included; `swallow` ignores close failures (an offline log). */
  async closeFiles(swallow: boolean): Promise<void> {
    for (const s of this.segments) {
      if (swallow) await s.close().catch(() => undefined);
      else await s.close();
    }
    for (const p of this.pendingCloses) {
      clearTimeout(p.timer);
      await p.seg.close().catch(() => undefined);
    }
    this.pendingCloses.clear();
  }

  /** Removes the partition directory (topic deletion, replica removed), renamed `-delete` first. */
  deleteDir(): Promise<void> {
    return deletePartitionDir(this.fs, this.dir);
  }

  /** The path of a file in the partition directory. */
  path(name: string): string {
    return join(this.dir, name);
  }
}
