import type { FileSystem, LogFile } from './file-system.js';

/**
 * Kafka's sparse segment indexes, kept whole in memory and appended to their files.
 *
 * `.index`: entries of (int32 offset relative to the segment base, int32 file position).
 * `.timeindex`: entries of (int64 timestamp, int32 relative offset), timestamps increasing.
 * Kafka preallocates and memory-maps these; here the file holds exactly the valid entries, which
 * Kafka's tools read the same way. Index files are not fsynced per append: after an unclean
 * shutdown the segments past the recovery point are rebuilt from the log.
 *
 * Concurrency: owned by one LogSegment; callers serialise mutations.
 */
abstract class FixedIndex {
  protected data: Buffer;
  protected count = 0;
  /** Entries appended in memory but not yet written to the file. */
  private writtenCount = 0;
  /**
   * Set between open/load and close. The file itself is opened only for the moment it is read,
   * written or fsynced, as Kafka closes an index's file once it is mapped: a segment then holds
   * one descriptor (its .log) rather than three, so a node with many idle partitions stays
   * within a common open-files limit (20,000 holds 10,000 one-segment partitions this way, not
   * the 30,000 descriptors three per segment would need).
   */
  private fs: FileSystem | null = null;

  constructor(
    readonly path: string,
    readonly baseOffset: number,
    readonly entrySize: number,
    readonly maxEntries: number,
  ) {
    this.data = Buffer.alloc(entrySize * 64);
  }

  get entries(): number {
    return this.count;
  }
  get isFull(): boolean {
    return this.count >= this.maxEntries;
  }

  protected grow(): void {
    if ((this.count + 1) * this.entrySize <= this.data.length) return;
    const next = Buffer.alloc(this.data.length * 2);
    this.data.copy(next, 0, 0, this.count * this.entrySize);
    this.data = next;
  }

  private async withFile<T>(fs: FileSystem, fn: (file: LogFile) => Promise<T>): Promise<T> {
    const file = await fs.open(this.path, 'write');
    try {
      return await fn(file);
    } finally {
      await file.close();
    }
  }

  /** Creates the file if missing (an empty index). */
  async open(fs: FileSystem): Promise<void> {
    await this.withFile(fs, () => Promise.resolve());
    this.fs = fs;
  }

  /** Loads the entries from the file; false when the file is missing or malformed. */
  async load(fs: FileSystem): Promise<boolean> {
    this.fs = fs;
    return this.withFile(fs, async (file) => {
      const size = await file.size();
      if (size % this.entrySize !== 0 || size / this.entrySize > this.maxEntries) return false;
      const n = size / this.entrySize;
      this.data = Buffer.alloc(Math.max(size, this.entrySize * 64));
      const read = await file.read(this.data, 0, size, 0);
      if (read !== size) return false;
      this.count = n;
      this.writtenCount = n;
      return this.sane();
    });
  }

  protected abstract sane(): boolean;

  private async writePending(file: LogFile): Promise<void> {
    if (this.writtenCount === this.count) return;
    const from = this.writtenCount;
    const to = this.count;
    await file.writeAll([Buffer.from(this.data.subarray(from * this.entrySize, to * this.entrySize))], from * this.entrySize);
    this.writtenCount = Math.max(this.writtenCount, to);
  }

  /** Writes appended entries to the file. */
  async persist(): Promise<void> {
    if (this.fs === null || this.writtenCount === this.count) return;
    await this.withFile(this.fs, (file) => this.writePending(file));
  }

  protected async truncateEntries(n: number): Promise<void> {
    if (n >= this.count) return;
    this.count = n;
    if (this.writtenCount > n) {
      this.writtenCount = n;
      if (this.fs !== null) await this.withFile(this.fs, (file) => file.truncate(n * this.entrySize));
    }
  }

  async reset(): Promise<void> {
    await this.truncateEntries(0);
    if (this.fs !== null) await this.withFile(this.fs, (file) => file.truncate(0));
  }

  async sync(): Promise<void> {
    if (this.fs === null) return;
    await this.withFile(this.fs, async (file) => {
      await this.writePending(file);
      await file.sync();
    });
  }

  async close(): Promise<void> {
    if (this.fs === null) return;
    await this.persist();
    this.fs = null;
  }
}

export class OffsetIndex extends FixedIndex {
  constructor(path: string, baseOffset: number, maxIndexBytes: number) {
    super(path, baseOffset, 8, Math.max(1, Math.floor(maxIndexBytes / 8)));
  }

  offsetAt(i: number): number {
    return this.baseOffset + this.data.readInt32BE(i * 8);
  }
  positionAt(i: number): number {
    return this.data.readInt32BE(i * 8 + 4);
  }
  get lastOffset(): number {
    return this.count === 0 ? this.baseOffset : this.offsetAt(this.count - 1);
  }

  append(offset: number, position: number): void {
    if (this.count > 0 && offset <= this.lastOffset) return;
    this.grow();
    this.data.writeInt32BE(offset - this.baseOffset, this.count * 8);
    this.data.writeInt32BE(position, this.count * 8 + 4);
    this.count++;
  }

  /** The last entry with offset ≤ target as a start position for a scan (0 when none). */
  lookup(target: number): { offset: number; position: number } {
    let lo = 0;
    let hi = this.count - 1;
    let found = -1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      if (this.offsetAt(mid) <= target) {
        found = mid;
        lo = mid + 1;
      } else hi = mid - 1;
    }
    return found < 0 ? { offset: this.baseOffset, position: 0 } : { offset: this.offsetAt(found), position: this.positionAt(found) };
  }

  /** The last entry with position ≤ pos (0 when none): a batch boundary at or before pos. */
  floorPosition(pos: number): number {
    let lo = 0;
    let hi = this.count - 1;
    let found = 0;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      const p = this.positionAt(mid);
      if (p <= pos) {
        found = p;
        lo = mid + 1;
      } else hi = mid - 1;
    }
    return found;
  }

  /** Drops entries for offsets ≥ offset. */
  async truncateToOffset(offset: number): Promise<void> {
    let n = this.count;
    while (n > 0 && this.offsetAt(n - 1) >= offset) n--;
    await this.truncateEntries(n);
  }

  protected sane(): boolean {
    for (let i = 1; i < this.count; i++) {
      if (this.offsetAt(i) <= this.offsetAt(i - 1) || this.positionAt(i) <= this.positionAt(i - 1)) return false;
    }
    return true;
  }

  /** The largest position referenced, for checks against the log size. */
  get lastPosition(): number {
    return this.count === 0 ? 0 : this.positionAt(this.count - 1);
  }
}

export class TimeIndex extends FixedIndex {
  constructor(path: string, baseOffset: number, maxIndexBytes: number) {
    super(path, baseOffset, 12, Math.max(1, Math.floor(maxIndexBytes / 12)));
  }

  timestampAt(i: number): number {
    return Number(this.data.readBigInt64BE(i * 12));
  }
  offsetAt(i: number): number {
    return this.baseOffset + this.data.readInt32BE(i * 12 + 8);
  }
  get lastTimestamp(): number {
    return this.count === 0 ? -1 : this.timestampAt(this.count - 1);
  }

  /** Adds (timestamp, offset) when the timestamp is larger than the last entry's. */
  maybeAppend(timestamp: number, offset: number): void {
    if (timestamp <= this.lastTimestamp) return;
    if (this.count > 0 && offset < this.offsetAt(this.count - 1)) return;
    this.grow();
    this.data.writeBigInt64BE(BigInt(timestamp), this.count * 12);
    this.data.writeInt32BE(offset - this.baseOffset, this.count * 12 + 8);
    this.count++;
  }

  /** The offset of the last entry with timestamp < ts: where a search for ts can start. */
  lookup(ts: number): number {
    let lo = 0;
    let hi = this.count - 1;
    let found = -1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      if (this.timestampAt(mid) < ts) {
        found = mid;
        lo = mid + 1;
      } else hi = mid - 1;
    }
    return found < 0 ? this.baseOffset : this.offsetAt(found);
  }

  async truncateToOffset(offset: number): Promise<void> {
    let n = this.count;
    while (n > 0 && this.offsetAt(n - 1) >= offset) n--;
    await this.truncateEntries(n);
  }

  protected sane(): boolean {
    for (let i = 1; i < this.count; i++) {
      if (this.timestampAt(i) <= this.timestampAt(i - 1) || this.offsetAt(i) < this.offsetAt(i - 1)) return false;
    }
    return true;
  }
}

/** An aborted transaction as Kafka's `.txnindex` stores it (34 bytes, version 0). */
export interface AbortedTxn {
  readonly producerId: number;
  readonly firstOffset: number;
  readonly lastOffset: number;
  readonly lastStableOffset: number;
}

const TXN_ENTRY_SIZE = 34;

export function encodeAbortedTxn(t: AbortedTxn): Buffer {
  const b = Buffer.alloc(TXN_ENTRY_SIZE);
  b.writeInt16BE(0, 0);
  b.writeBigInt64BE(BigInt(t.producerId), 2);
  b.writeBigInt64BE(BigInt(t.firstOffset), 10);
  b.writeBigInt64BE(BigInt(t.lastOffset), 18);
  b.writeBigInt64BE(BigInt(t.lastStableOffset), 26);
  return b;
}

export function decodeAbortedTxns(buf: Buffer): AbortedTxn[] {
  const out: AbortedTxn[] = [];
  for (let at = 0; at + TXN_ENTRY_SIZE <= buf.length; at += TXN_ENTRY_SIZE) {
    if (buf.readInt16BE(at) !== 0) break;
    out.push({
      producerId: Number(buf.readBigInt64BE(at + 2)),
      firstOffset: Number(buf.readBigInt64BE(at + 10)),
      lastOffset: Number(buf.readBigInt64BE(at + 18)),
      lastStableOffset: Number(buf.readBigInt64BE(at + 26)),
    });
  }
  return out;
}
