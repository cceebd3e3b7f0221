/**
 * Simulated partition logs: whole record batches in memory, with the offsets and partition
 * leader epochs they carry and Kafka's leader-epoch cache, so the real state actions (which read
 * the last batch, look up `endOffsetForEpoch`, truncate and append markers) see what a real log
 * would show. Each batch remembers whether it was mirrored from the source or written here.
 *
 * `SimInternalLog` is one `__mirror_state` partition: the coordinator's batches with offsets
 * assigned, replayed on load.
 */
import type { CoordinatorAppendResult, CoordinatorLog } from '../../../src/coordinator/coordinator-host.js';
import type { MirrorAppendResult, MirrorLog } from '../../../src/fetcher/mirror-log.js';
import { ErrorCode } from '../../../src/protocol/generated/errors.js';
import { controlTypeOf } from '../../../src/protocol/control-records.js';
import { iterateBatches, type RecordBatchView } from '../../../src/protocol/record-batch.js';
import { openProducers } from './transactions.js';

export interface StoredBatch {
  readonly baseOffset: number;
  readonly lastOffset: number;
  readonly epoch: number;
  readonly control: boolean;
  readonly bytes: Buffer;
  /** 'source': appended by the mirror; 'local': a client's write or a coordinator marker. */
  readonly origin: 'source' | 'local';
  readonly producerId: number;
  readonly producerEpoch: number;
  readonly transactional: boolean;
  /** The control record type of a control batch, -1 for a data batch. */
  readonly controlType: number;
}

function stored(v: RecordBatchView, bytes: Buffer, epoch: number, origin: 'source' | 'local'): StoredBatch {
  return {
    baseOffset: v.baseOffset,
    lastOffset: v.lastOffset,
    epoch,
    control: v.isControl,
    bytes,
    origin,
    producerId: v.producerId,
    producerEpoch: v.producerEpoch,
    transactional: v.isTransactional,
    controlType: controlTypeOf(v),
  };
}

/** Sets baseOffset and partitionLeaderEpoch in place (both outside the CRC). */
function stamp(bytes: Buffer, baseOffset: number, epoch: number | null): Buffer {
  const b = Buffer.from(bytes);
  b.writeBigInt64BE(BigInt(baseOffset), 0);
  if (epoch !== null) b.writeInt32BE(epoch, 12);
  return b;
}

export class SimLog implements MirrorLog {
  batches: StoredBatch[] = [];
  epochs: { epoch: number; startOffset: number }[] = [];
  /** Every append, in order, for the invariants (never truncated). */
  readonly appended: StoredBatch[] = [];
  /** Whether an append wrote the last batch since the last truncation (a real log forgets it then). */
  private lastBatchKnown = false;

  get logStartOffset(): number {
    return 0;
  }
  get logEndOffset(): number {
    const last = this.batches.at(-1);
    return last === undefined ? 0 : last.lastOffset + 1;
  }
  get highWatermark(): number {
    return this.logEndOffset;
  }
  get latestEpoch(): number {
    return this.epochs.at(-1)?.epoch ?? -1;
  }
  get epochEntries(): readonly { epoch: number; startOffset: number }[] {
    return this.epochs;
  }

  get lastBatch(): { partitionLeaderEpoch: number; controlType: number } | undefined {
    const last = this.batches.at(-1);
    return last === undefined || !this.lastBatchKnown ? undefined : { partitionLeaderEpoch: last.epoch, controlType: last.controlType };
  }

  private push(b: StoredBatch): void {
    this.lastBatchKnown = true;
    this.batches.push(b);
    this.appended.push(b);
    if (b.epoch > this.latestEpoch) this.epochs.push({ epoch: b.epoch, startOffset: b.baseOffset });
  }

  async appendAsMirror(records: Buffer): Promise<MirrorAppendResult> {
    const base = this.logEndOffset;
    let first = -1;
    let last = -1;
    for (const v of iterateBatches(records)) {
      if (v.baseOffset !== this.logEndOffset) return { errorCode: 1, baseOffset: -1, lastOffset: -1, errorMessage: `batch at ${v.baseOffset}, log end ${this.logEndOffset}` };
      this.push(stored(v, Buffer.from(v.bytes), v.partitionLeaderEpoch, 'source'));
      if (first < 0) first = v.baseOffset;
      last = v.lastOffset;
    }
    return { errorCode: 0, baseOffset: first < 0 ? base : first, lastOffset: last };
  }

  /** A leader's append (a client's batch or a coordinator marker) at `epoch`. */
  appendAsLeader(batch: Buffer, epoch: number): MirrorAppendResult {
    const base = this.logEndOffset;
    const bytes = stamp(batch, base, epoch);
    let v;
    for (const x of iterateBatches(bytes)) v = x;
    if (v === undefined) return { errorCode: 2, baseOffset: -1, lastOffset: -1 };
    this.push(stored(v, bytes, epoch, 'local'));
    return { errorCode: 0, baseOffset: base, lastOffset: v.lastOffset };
  }

  /** The transactions open at the log end (a coordinator marker or a MIRROR_PID_RESET closes them). */
  openTransactions(): { producerId: number; producerEpoch: number; coordinatorEpoch: number }[] {
    return [...openProducers(this.batches)].map(([producerId, producerEpoch]) => ({ producerId, producerEpoch, coordinatorEpoch: 0 }));
  }

  /** A leader-epoch bump of a partition no longer mirrored starts the epoch at the log end. */
  assignEpoch(epoch: number): void {
    if (epoch > this.latestEpoch) this.epochs.push({ epoch, startOffset: this.logEndOffset });
  }

  async truncateTo(offset: number): Promise<void> {
    if (offset < this.logEndOffset) this.lastBatchKnown = false;
    this.batches = this.batches.filter((b) => b.baseOffset < offset);
    const end = this.logEndOffset;
    this.epochs = this.epochs.filter((e) => e.startOffset < end);
  }

  async truncateFullyAndStartAt(): Promise<void> {
    this.lastBatchKnown = false;
    this.batches = [];
    this.epochs = [];
  }

  async deleteRecordsBefore(): Promise<number> {
    return 0;
  }

  endOffsetForEpoch(epoch: number): { epoch: number; endOffset: number } {
    let found = -1;
    for (let i = 0; i < this.epochs.length; i++) if (this.epochs[i]!.epoch <= epoch) found = i;
    if (found < 0) return { epoch: -1, endOffset: -1 };
    const next = this.epochs[found + 1];
    return { epoch: this.epochs[found]!.epoch, endOffset: next === undefined ? this.logEndOffset : next.startOffset };
  }

  async readToBuffer(opts: { fetchOffset: number; maxOffset: number; maxBytes: number; minOneMessage: boolean }): Promise<{ errorCode: number; records: Buffer }> {
    const out = this.batches.filter((b) => b.lastOffset >= opts.fetchOffset && b.baseOffset < opts.maxOffset).map((b) => b.bytes);
    return { errorCode: 0, records: Buffer.concat(out) };
  }
}

/** One `__mirror_state` partition, shared by whichever node leads it (its replicas never diverge here). */
export class SimInternalLog implements CoordinatorLog {
  readonly batches: { baseOffset: number; lastOffset: number; bytes: Buffer }[] = [];
  /** Told of every committed batch (the simulation's view of what is persisted). */
  onAppend: (bytes: Buffer) => void = () => undefined;

  constructor(private readonly appendStep: (fn: () => CoordinatorAppendResult) => Promise<CoordinatorAppendResult>) {}

  get logStartOffset(): number {
    return 0;
  }
  get logEndOffset(): number {
    const last = this.batches.at(-1);
    return last === undefined ? 0 : last.lastOffset + 1;
  }

  /** The last append asked for: each lands after the one before it, as a partition log's do. */
  private tail: Promise<unknown> = Promise.resolve();

  /**
   * `leads`: whether the appending node still leads the partition when the append lands. Appends
   * land in the order they were asked for (a coordinator's appends go through one partition log,
   * first asked, first placed), each as a step of its own.
   */
  append(batch: Buffer, leads: () => boolean = () => true): Promise<CoordinatorAppendResult> {
    const landed = this.tail.then(() => this.land(batch, leads));
    this.tail = landed.catch(() => undefined);
    return landed;
  }

  private land(batch: Buffer, leads: () => boolean): Promise<CoordinatorAppendResult> {
    return this.appendStep(() => {
      if (!leads()) return { errorCode: ErrorCode.NOT_LEADER_OR_FOLLOWER, baseOffset: -1, lastOffset: -1 };
      const base = this.logEndOffset;
      const bytes = stamp(batch, base, null);
      let last = base;
      for (const v of iterateBatches(bytes)) last = v.lastOffset;
      this.batches.push({ baseOffset: base, lastOffset: last, bytes });
      this.onAppend(bytes);
      return { errorCode: 0, baseOffset: base, lastOffset: last };
    });
  }

  async readFrom(fetchOffset: number): Promise<Buffer> {
    return Buffer.concat(this.batches.filter((b) => b.lastOffset >= fetchOffset).map((b) => b.bytes));
  }
}
