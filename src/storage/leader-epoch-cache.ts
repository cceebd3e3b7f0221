import type { FileSystem } from './file-system.js';

export interface EpochEntry {
  readonly epoch: number;
  readonly startOffset: number;
}

export const UNDEFINED_EPOCH = -1;
export const UNDEFINED_EPOCH_OFFSET = -1;

/**
 * The leader epoch → start offset cache behind OffsetsForLeaderEpoch, persisted as Kafka's
 * `leader-epoch-checkpoint` ("0\n<count>\n<epoch> <offset>\n..."). Matches Kafka's
 * LeaderEpochFileCache: assign removes conflicting entries, truncation from either end.
 *
 * When the file is written: an append that starts an epoch only changes the cache in memory
 * (`isDirty`), and the log's next fsync writes the file before it moves the recovery point
 * (PartitionLog.syncNow), as does a clean close. A crash in between loses nothing: recovery
 * re-reads every segment from the one holding the recovery point and assigns the epochs their
 * batches carry, so the file need only hold the epochs that start in older segments, and it does
 * from the fsync that let the recovery point pass them. Truncations and a new leader's epoch
 * write it at once. An append thus pays no file replacement (two fsyncs) per new epoch, which
 * a mirror starting hundreds of partitions, each of whose first append starts an epoch, would.
 *
 * Concurrency: mutated only inside the owning PartitionLog's serial queue; `flush` may also be
 * called from the log's fsync outside it, so flushes run one after another, each writing the
 * entries as they are when its write begins.
 */
export class LeaderEpochCache {
  private entries: EpochEntry[] = [];
  private dirty = false;
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
    while (this.entries.length > 0) {
      const e = this.entries.at(-1) as EpochEntry;
      if (e.epoch >= epoch || e.startOffset >= startOffset) this.entries.pop();
      else break;
    }
    this.entries.push({ epoch, startOffset });
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
    if (this.entries.length !== before) this.dirty = true;
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
    this.dirty = true;
  }

  clear(): void {
    if (this.entries.length > 0) this.dirty = true;
    this.entries = [];
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
    this.dirty = false;
    const body = `0\n${this.entries.length}\n${this.entries.map((e) => `${e.epoch} ${e.startOffset}\n`).join('')}`;
    try {
      await this.fs.writeFileAtomic(this.path, body);
    } catch (e) {
      this.dirty = true;
      throw e;
    }
  }
}
