import type { FileSystem } from './file-system.js';

export interface EpochEntry {
  readonly epoch: number;
  readonly startOffset: number;
}

const UNDEFINED_EPOCH = -1;
const UNDEFINED_EPOCH_OFFSET = -1;

/**
 * The leader epoch → start offset cache behind OffsetsForLeaderEpoch, persisted as Kafka's
 * `leader-epoch-checkpoint` ("0\n<count>\n<epoch> <offset>\n..."). Matches Kafka's
 * LeaderEpochFileCache: assign removes conflicting entries, truncation from either end.
 *
 * When the file is written: an append that starts an epoch, and a new leader's epoch, only change
 * the cache in memory, and the log's next fsync writes the file before it moves the recovery
 * point (PartitionLog.syncNow) when recovery could not rebuild the change, as does a clean close.
 * Recovery re-reads every segment from the one holding the recovery point and assigns the epochs
 * their batches carry, so the file need only hold the epochs that start in older segments: an
 * fsync whose new recovery point lies in the segment where every unwritten entry starts leaves
 * the file as it is (`mustWriteBefore`). What a crash can lose is a new leader's epoch with no
 * batch in it yet, which the leader assigns again when it takes the partition on after the
 * restart, and which changes the OffsetsForLeaderEpoch answer of no epoch a batch carries (the
 * epoch before it ends at the log end either way). Truncations, which recovery cannot redo, write the file at once.
 * An append or a leader change thus pays no file replacement (two fsyncs and a rename): a mirror
 * starting thousands of partitions, each of whose first append starts an epoch, or stopping
 * them, each with a new leader epoch and one barrier batch in it, would pay thousands.
 *
 * Concurrency: mutated only inside the owning PartitionLog's serial queue; `flush` may also be
 * called from the log's fsync outside it, so flushes run one after another, each writing the
 * entries as they are when its write begins.
 */
export class LeaderEpochCache {
  private entries: EpochEntry[] = [];
  private dirty = false;
  /** The lowest start offset of an entry added or removed by `assign` since the file was written. */
  private unwrittenFrom = Number.POSITIVE_INFINITY;
  /** A change since the file was written that recovery does not redo (a truncation, a clear). */
  private rewrite = false;
  /** The flush running now (resolved when none): the next one starts after it. */
  private flushing: Promise<void> = Promise.resolve();

  constructor(
    private readonly fs: FileSystem,
    private readonly path: string,
  ) {}

  static async load(fs: FileSystem, path: string): Promise<LeaderEpochCache> {
    const cache = new LeaderEpochCache(fs, path);
    if (await fs.exists(path)) {
      const lines = (await fs.readFile(path)).toString('utf8').split('\n');
      const n = Number(lines[1]);
      if (lines[0] === '0' && Number.isInteger(n)) {
        for (let i = 0; i < n; i++) {
          const parts = (lines[2 + i] ?? '').trim().split(/\s+/);
          const epoch = Number(parts[0]);
          const startOffset = Number(parts[1]);
          if (!Number.isInteger(epoch) || !Number.isInteger(startOffset)) break;
          cache.entries.push({ epoch, startOffset });
        }
      }
    }
    return cache;
  }

  get isDirty(): boolean {
    return this.dirty;
  }

  /**
   * Whether the file must be written before the recovery point moves into the segment starting at
   * `recoveryFrom`: a recovery from there would not rebuild every change made since it was last
   * written (an entry of an older segment, or a truncation).
   */
  mustWriteBefore(recoveryFrom: number): boolean {
    return this.dirty && (this.rewrite || this.unwrittenFrom < recoveryFrom);
  }

  get all(): readonly EpochEntry[] {
    return this.entries;
  }

  get latestEpoch(): number {
    return this.entries.at(-1)?.epoch ?? UNDEFINED_EPOCH;
  }

  latestEntry(): EpochEntry | undefined {
    return this.entries.at(-1);
  }

  /** Kafka's assign: a new (epoch, startOffset) replaces entries it conflicts with. */
  assign(epoch: number, startOffset: number): boolean {
    if (epoch < 0) return false;
    const last = this.entries.at(-1);
    if (last !== undefined && !(epoch !== last.epoch || startOffset < last.startOffset)) return false;
    let from = startOffset;
    while (this.entries.length > 0) {
      const e = this.entries.at(-1) as EpochEntry;
      if (e.epoch >= epoch || e.startOffset >= startOffset) {
        this.entries.pop();
        from = Math.min(from, e.startOffset);
      } else break;
    }
    this.entries.push({ epoch, startOffset });
    this.unwrittenFrom = Math.min(this.unwrittenFrom, from);
    this.dirty = true;
    return true;
  }

  /** The epoch that covers `offset` (-1 when none). */
  epochForOffset(offset: number): number {
    let epoch = UNDEFINED_EPOCH;
    for (const e of this.entries) {
      if (e.startOffset <= offset) epoch = e.epoch;
      else break;
    }
    return epoch;
  }

  /**
   * The OffsetsForLeaderEpoch answer: the largest epoch ≤ requested and the start offset of the
   * next higher epoch (the log end offset for the latest epoch); (-1, -1) when unknown.
   */
  endOffsetFor(requested: number, logEndOffset: number): EpochEntry & { endOffset: number } {
    const undefinedAnswer = { epoch: UNDEFINED_EPOCH, startOffset: UNDEFINED_EPOCH_OFFSET, endOffset: UNDEFINED_EPOCH_OFFSET };
    if (requested === UNDEFINED_EPOCH || this.entries.length === 0) return undefinedAnswer;
    if (requested === this.latestEpoch) {
      const last = this.entries.at(-1) as EpochEntry;
      return { epoch: requested, startOffset: last.startOffset, endOffset: logEndOffset };
    }
    const higher = this.entries.find((e) => e.epoch > requested);
    if (higher === undefined) return undefinedAnswer;
    let floor: EpochEntry | undefined;
    for (const e of this.entries) if (e.epoch <= requested) floor = e;
    if (floor === undefined) return { epoch: requested, startOffset: UNDEFINED_EPOCH_OFFSET, endOffset: higher.startOffset };
    return { epoch: floor.epoch, startOffset: floor.startOffset, endOffset: higher.startOffset };
  }

  /** Removes entries starting at or after `endOffset` (log truncation). */
  truncateFromEnd(endOffset: number): void {
    const before = this.entries.length;
    this.entries = this.entries.filter((e) => e.startOffset < endOffset);
    if (this.entries.length !== before) this.markRewrite();
  }

  /** Drops entries below the new log start; the one covering it moves up to start there. */
  truncateFromStart(startOffset: number): void {
    let keepFrom = 0;
    for (let i = 0; i < this.entries.length; i++) {
      if ((this.entries[i] as EpochEntry).startOffset <= startOffset) keepFrom = i;
    }
    const first = this.entries[keepFrom];
    if (first === undefined || first.startOffset >= startOffset) return;
    this.entries = [{ epoch: first.epoch, startOffset }, ...this.entries.slice(keepFrom + 1)];
    this.markRewrite();
  }

  clear(): void {
    if (this.entries.length > 0) this.markRewrite();
    this.entries = [];
  }

  private markRewrite(): void {
    this.dirty = true;
    this.rewrite = true;
  }

  /** Replaces the file, durably, with the entries as they are when the write begins (if changed, or `force`). */
  flush(force = false): Promise<void> {
    const run = this.flushing.then(() => this.write(force));
    // A failed flush fails its caller; the next one still runs (the cache stays dirty).
    this.flushing = run.catch(() => undefined);
    return run;
  }

  private async write(force: boolean): Promise<void> {
    if (!this.dirty && !force) return;
    const { unwrittenFrom, rewrite } = this;
    this.dirty = false;
    this.rewrite = false;
    this.unwrittenFrom = Number.POSITIVE_INFINITY;
    const body = `0\n${this.entries.length}\n${this.entries.map((e) => `${e.epoch} ${e.startOffset}\n`).join('')}`;
    try {
      await this.fs.writeFileAtomic(this.path, body);
    } catch (e) {
      this.dirty = true;
      this.rewrite ||= rewrite;
      this.unwrittenFrom = Math.min(this.unwrittenFrom, unwrittenFrom);
      throw e;
    }
  }
}
