import { join } from 'node:path';
import type { RecordBatchView } from '../protocol/record-batch.js';
import { locationOf, scanBatches, type BatchLocation, type ScanResult } from './batch-scan.js';
import type { FileSystem, LogFile } from './file-system.js';
import { OffsetIndex, TimeIndex, decodeAbortedTxns, encodeAbortedTxn, type AbortedTxn } from './indexes.js';

export function segmentFileName(baseOffset: number, suffix: string): string {
  return `${String(baseOffset).padStart(20, '0')}${suffix}`;
}

/** One batch as appended: its place in the segment and what the indexes need. */
export interface AppendedBatch {
  readonly baseOffset: number;
  readonly lastOffset: number;
  readonly maxTimestamp: number;
  readonly size: number;
}

/**
 * One segment: `<base>.log` with its `.index`, `.timeindex` and `.txnindex` (Kafka's LogSegment).
 * `size` counts only bytes whose write completed, so readers never see a half-written batch.
 *
 * Concurrency: appends, truncation and recovery are serialised by the owning PartitionLog;
 * reads may run at any time against `size` as it was when they started.
 */
export class LogSegment {
  size = 0;
  /** Offset after the last batch (baseOffset when empty). */
  nextOffset: number;
  maxTimestamp = -1;
  offsetOfMaxTimestamp = -1;
  /** Timestamp of the first batch (or creation time): segment.ms rolls count from it. */
  rollBaseTimestamp: number;
  /** True when rollBaseTimestamp is the first batch's timestamp rather than the creation time. */
  rollBaseFromBatch = false;
  private bytesSinceLastIndexEntry = 0;
  unflushed = false;
  /** Whether both index files were there when the segment was opened (else they are rebuilt). */
  private indexesExisted = true;
  readonly index: OffsetIndex;
  readonly timeIndex: TimeIndex;
  private txnFile: LogFile | null = null;
  private txnSize = 0;

  private constructor(
    private readonly fs: FileSystem,
    readonly dir: string,
    readonly baseOffset: number,
    readonly log: LogFile,
    private readonly indexIntervalBytes: number,
    maxIndexBytes: number,
    createdAt: number,
  ) {
    this.nextOffset = baseOffset;
    this.rollBaseTimestamp = createdAt;
    this.index = new OffsetIndex(join(dir, segmentFileName(baseOffset, '.index')), baseOffset, maxIndexBytes);
    this.timeIndex = new TimeIndex(join(dir, segmentFileName(baseOffset, '.timeindex')), baseOffset, maxIndexBytes);
  }

  get logPath(): string {
    return join(this.dir, segmentFileName(this.baseOffset, '.log'));
  }
  get txnIndexPath(): string {
    return join(this.dir, segmentFileName(this.baseOffset, '.txnindex'));
  }
  get isEmpty(): boolean {
    return this.size === 0;
  }

  static async open(
    fs: FileSystem,
    dir: string,
    baseOffset: number,
    opts: { indexIntervalBytes: number; maxIndexBytes: number; now: number },
  ): Promise<LogSegment> {
    const log = await fs.open(join(dir, segmentFileName(baseOffset, '.log')), 'write');
    const seg = new LogSegment(fs, dir, baseOffset, log, opts.indexIntervalBytes, opts.maxIndexBytes, opts.now);
    seg.size = await log.size();
    seg.indexesExisted = (await fs.exists(seg.index.path)) && (await fs.exists(seg.timeIndex.path));
    await seg.index.open(fs);
    await seg.timeIndex.open(fs);
    return seg;
  }

  /** Records an appended batch in memory and in the indexes (Kafka's LogSegment.append). */
  private track(b: AppendedBatch, position: number): void {
    if (position === 0 && b.maxTimestamp >= 0) {
      this.rollBaseTimestamp = b.maxTimestamp;
      this.rollBaseFromBatch = true;
    }
    if (b.maxTimestamp > this.maxTimestamp) {
      this.maxTimestamp = b.maxTimestamp;
      this.offsetOfMaxTimestamp = b.lastOffset;
    }
    if (this.bytesSinceLastIndexEntry > this.indexIntervalBytes) {
      this.index.append(b.lastOffset, position);
      if (this.maxTimestamp >= 0) this.timeIndex.maybeAppend(this.maxTimestamp, this.offsetOfMaxTimestamp);
      this.bytesSinceLastIndexEntry = 0;
    }
    this.bytesSinceLastIndexEntry += b.size;
    this.nextOffset = b.lastOffset + 1;
  }

  /** Writes the batches' bytes at the end of the segment, then indexes them. */
  async append(buffers: readonly Buffer[], batches: readonly AppendedBatch[]): Promise<void> {
    const start = this.size;
    this.unflushed = true;
    await this.log.writeAll(buffers, start);
    // Again once the write is done: an fsync that cleared the flag while this write was in
    // flight need not cover it, so the next sync must not be skipped.
    this.unflushed = true;
    let pos = start;
    for (const b of batches) {
      this.track(b, pos);
      pos += b.size;
    }
    this.size = pos;
    // Index entries reach their files at roll, flush and close, not per append: an unclean
    // shutdown rebuilds the indexes of the segments past the recovery point anyway.
  }

  /**
   * segment.ms (Kafka's timeWaitedForRoll): measured from the first batch's timestamp to the
   * incoming batch's when both exist (so mirrored old data does not roll on every append),
   * otherwise from the segment's creation to now.
   */
  timeWaitedForRoll(now: number, incomingMaxTimestamp: number): number {
    if (this.size === 0) return 0;
    if (this.rollBaseFromBatch && incomingMaxTimestamp >= 0) return incomingMaxTimestamp - this.rollBaseTimestamp;
    return now - this.rollBaseTimestamp;
  }

  wouldOverflow(bytes: number, segmentBytes: number, lastOffset: number): boolean {
    return (
      (this.size > 0 && this.size + bytes > segmentBytes) ||
      this.index.isFull ||
      this.timeIndex.isFull ||
      lastOffset - this.baseOffset > 0x7fffffff
    );
  }

  async appendAbortedTxn(t: AbortedTxn): Promise<void> {
    if (this.txnFile === null) {
      this.txnFile = await this.fs.open(this.txnIndexPath, 'write');
      this.txnSize = await this.txnFile.size();
    }
    const b = encodeAbortedTxn(t);
    await this.txnFile.writeAll([b], this.txnSize);
    this.txnSize += b.length;
  }

  async readAbortedTxns(): Promise<AbortedTxn[]> {
    if (!(await this.fs.exists(this.txnIndexPath))) return [];
    return decodeAbortedTxns(await this.fs.readFile(this.txnIndexPath));
  }

  async resetTxnIndex(): Promise<void> {
    if (this.txnFile !== null) {
      await this.txnFile.close();
      this.txnFile = null;
    }
    if (await this.fs.exists(this.txnIndexPath)) await this.fs.unlink(this.txnIndexPath);
    this.txnSize = 0;
  }

  /**
   * Loads the indexes and the segment's end state without reading the whole log (clean start).
   * Returns false when an index is missing or inconsistent; the caller then rebuilds it.
   */
  async loadClean(): Promise<boolean> {
    if (!this.indexesExisted && this.size > 0) return false;
    try {
      return await this.loadCleanUnchecked();
    } catch {
      return false;
    }
  }

  private async loadCleanUnchecked(): Promise<boolean> {
    const ok = (await this.index.load(this.fs)) && (await this.timeIndex.load(this.fs));
    if (!ok || this.index.lastPosition > this.size) return false;
    const from = this.index.lastPosition;
    let last: BatchLocation | null = null;
    const r = await scanBatches(this.log, from, this.size, { full: false }, (v, p) => {
      last = locationOf(v, p);
    });
    if (r.reason !== 'end') return false;
    const l = last as BatchLocation | null;
    this.nextOffset = l !== null ? l.lastOffset + 1 : this.entriesEndOffset();
    if (this.timeIndex.entries > 0) {
      this.maxTimestamp = this.timeIndex.lastTimestamp;
      this.offsetOfMaxTimestamp = this.timeIndex.offsetAt(this.timeIndex.entries - 1);
    }
    if (l !== null && l.maxTimestamp > this.maxTimestamp) {
      this.maxTimestamp = l.maxTimestamp;
      this.offsetOfMaxTimestamp = l.lastOffset;
    }
    this.bytesSinceLastIndexEntry = this.size - from;
    await this.readFirstTimestamp();
    return true;
  }

  private entriesEndOffset(): number {
    return this.index.entries > 0 ? this.index.lastOffset + 1 : this.baseOffset;
  }

  private async readFirstTimestamp(): Promise<void> {
    await scanBatches(this.log, 0, Math.min(this.size, 1 << 30), { full: false }, (v) => {
      if (v.maxTimestamp >= 0) {
        this.rollBaseTimestamp = v.maxTimestamp;
        this.rollBaseFromBatch = true;
      }
      return false;
    });
  }

  /**
   * Scans the whole segment (Kafka's LogSegment.recover): every batch's CRC is checked, the
   * indexes are rebuilt, and a torn or corrupt tail is truncated. `visit` sees each valid
   * batch in order (for the epoch cache and producer state). Returns the bytes truncated.
   */
  async recover(maxBatchBytes: number, visit: (view: RecordBatchView, position: number) => void, keepTxnIndex = false): Promise<number> {
    await this.index.reset();
    await this.timeIndex.reset();
    if (!keepTxnIndex) await this.resetTxnIndex();
    this.nextOffset = this.baseOffset;
    this.maxTimestamp = -1;
    this.offsetOfMaxTimestamp = -1;
    this.bytesSinceLastIndexEntry = 0;
    const fileSize = this.size;
    this.size = 0;
    let prevNext = this.baseOffset;
    const r: ScanResult = await scanBatches(this.log, 0, fileSize, { full: true, maxBatchBytes }, (v, p) => {
      if (v.sizeInBytes > maxBatchBytes || !v.isValid() || v.lastOffsetDelta < 0) return false;
      try {
        // header fields beyond 2^53 throw: such a batch is as corrupt as a bad CRC
        if (v.baseOffset < prevNext || v.maxTimestamp < -1 || v.producerId < -1) return false;
      } catch {
        return false;
      }
      prevNext = v.lastOffset + 1;
      visit(v, p);
      this.track({ baseOffset: v.baseOffset, lastOffset: v.lastOffset, maxTimestamp: v.maxTimestamp, size: v.sizeInBytes }, p);
      this.size = p + v.sizeInBytes;
    });
    const validEnd = r.position;
    this.size = validEnd;
    if (validEnd < fileSize) await this.log.truncate(validEnd);
    await this.index.persist();
    await this.timeIndex.persist();
    return fileSize - validEnd;
  }

  /**
   * Finds the first batch whose last offset is ≥ target, scanning from the index's floor entry
   * (Kafka's translateOffset). Null when every batch in the segment ends before target.
   */
  async translateOffset(target: number, endPosition = this.size): Promise<BatchLocation | null> {
    const start = this.index.lookup(target).position;
    let found: BatchLocation | null = null;
    await scanBatches(this.log, start, endPosition, { full: false, chunkSize: 8192 }, (v, p) => {
      if (v.lastOffset >= target) {
        found = locationOf(v, p);
        return false;
      }
      return true;
    });
    return found;
  }

  /**
   * The last batch boundary at or before `limit` (≥ from), found from the index's floor entry:
   * whole batches only, so a fetch never ends in a partial batch. Also returns the base offset
   * of the batch that starts there (nextOffset when it is the end).
   */
  async boundaryAtOrBefore(from: number, limit: number): Promise<{ position: number; offset: number }> {
    if (limit >= this.size) return { position: this.size, offset: this.nextOffset };
    const start = Math.max(from, this.index.floorPosition(limit));
    let best = { position: start, offset: -1 };
    await scanBatches(this.log, start, this.size, { full: false, chunkSize: 8192 }, (v, p) => {
      if (p + v.sizeInBytes > limit) {
        best = { position: p, offset: v.baseOffset };
        return false;
      }
      return true;
    });
    return best;
  }

  /** Removes every batch whose last offset is ≥ offset; returns the bytes removed. */
  async truncateTo(offset: number): Promise<number> {
    const loc = await this.translateOffset(offset);
    if (loc === null) return 0;
    const removed = this.size - loc.position;
    this.size = loc.position;
    await this.log.truncate(loc.position);
    await this.index.truncateToOffset(offset);
    await this.timeIndex.truncateToOffset(offset);
    this.nextOffset = loc.baseOffset;
    this.bytesSinceLastIndexEntry = this.size - this.index.lastPosition;
    if (this.size === 0) this.nextOffset = this.baseOffset;
    // The max timestamp may have been truncated away: recompute from what remains.
    this.maxTimestamp = -1;
    this.offsetOfMaxTimestamp = -1;
    const from = this.timeIndex.entries > 0 ? this.index.lookup(this.timeIndex.offsetAt(this.timeIndex.entries - 1)).position : 0;
    if (this.timeIndex.entries > 0) {
      this.maxTimestamp = this.timeIndex.lastTimestamp;
      this.offsetOfMaxTimestamp = this.timeIndex.offsetAt(this.timeIndex.entries - 1);
    }
    await scanBatches(this.log, from, this.size, { full: false }, (v) => {
      if (v.maxTimestamp > this.maxTimestamp) {
        this.maxTimestamp = v.maxTimestamp;
        this.offsetOfMaxTimestamp = v.lastOffset;
      }
    });
    return removed;
  }

  async sync(): Promise<void> {
    if (!this.unflushed) return;
    this.unflushed = false;
    try {
      await this.log.sync();
    } catch (e) {
      this.unflushed = true;
      throw e;
    }
  }

  async syncIndexes(): Promise<void> {
    await this.index.sync();
    await this.timeIndex.sync();
    if (this.txnFile !== null) await this.txnFile.sync();
  }

  async close(): Promise<void> {
    await this.index.close();
    await this.timeIndex.close();
    if (this.txnFile !== null) {
      await this.txnFile.close();
      this.txnFile = null;
    }
    await this.log.close();
  }

  /** Removes the offset and time index files (before the log file is replaced under them). */
  async deleteIndexFiles(): Promise<void> {
    for (const p of [this.index.path, this.timeIndex.path]) if (await this.fs.exists(p)) await this.fs.unlink(p);
  }

  /** Deletes the segment's files (the caller has closed it or delays the close for readers). */
  async deleteFiles(): Promise<void> {
    for (const suffix of ['.log', '.index', '.timeindex', '.txnindex']) {
      const p = join(this.dir, segmentFileName(this.baseOffset, suffix));
      if (await this.fs.exists(p)) await this.fs.unlink(p);
    }
  }
}
