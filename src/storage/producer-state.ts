import { crc32c } from '../protocol/crc32c.js';
import type { BatchOrigin, RecordBatchView } from '../protocol/record-batch.js';
import { ErrorCode } from '../protocol/generated/errors.js';
import { KafkaError } from '../protocol/kafka-error.js';
import type { AbortedTxn } from './indexes.js';
import { ControlRecordType } from '../protocol/control-records.js';

/** Kafka keeps the metadata of the last 5 batches per producer for duplicate detection. */
const NUM_BATCHES_TO_RETAIN = 5;
const INT32_MAX = 0x7fffffff;

interface BatchMetadata {
  readonly firstSeq: number;
  readonly lastSeq: number;
  readonly firstOffset: number;
  readonly lastOffset: number;
  readonly timestamp: number;
}

interface ProducerEntry {
  producerId: number;
  producerEpoch: number;
  batches: BatchMetadata[];
  coordinatorEpoch: number;
  /** First offset of the producer's ongoing transaction, -1 when none. */
  currentTxnFirstOffset: number;
  lastTimestamp: number;
}

/** What DescribeProducers reports per producer. */
export interface ProducerStateView {
  readonly producerId: number;
  readonly producerEpoch: number;
  readonly lastSequence: number;
  readonly lastTimestamp: number;
  readonly coordinatorEpoch: number;
  readonly currentTxnStartOffset: number;
}

export interface CompletedTxn {
  readonly producerId: number;
  readonly firstOffset: number;
  /** Offset of the marker. */
  readonly lastOffset: number;
  readonly isAborted: boolean;
}

/** Kafka's AppendOrigin, as the batch validator names it. */
export type AppendOrigin = BatchOrigin;

function cloneEntry(e: ProducerEntry): ProducerEntry {
  return { ...e, batches: e.batches.slice() };
}

function inSequence(lastSeq: number, nextSeq: number): boolean {
  return nextSeq === lastSeq + 1 || (nextSeq === 0 && lastSeq === INT32_MAX);
}

function lastSeqOf(view: RecordBatchView): number {
  const s = view.baseSequence + view.lastOffsetDelta;
  return s > INT32_MAX ? s - INT32_MAX - 1 : s;
}

/**
 * Staged producer-state changes of one append: validated batch by batch against the committed
 * state plus the earlier batches of the same append, applied by `commit` only after the bytes
 * are written (Kafka's ProducerAppendInfo).
 */
class ProducerAppend {
  readonly updates = new Map<number, ProducerEntry>();
  readonly completed: CompletedTxn[] = [];
  resetAll = false;

  constructor(private readonly mgr: ProducerStateManager) {}

  private entryFor(pid: number): ProducerEntry | undefined {
    const staged = this.updates.get(pid);
    if (staged !== undefined) return staged;
    if (this.resetAll) return undefined;
    return this.mgr.entry(pid);
  }

  /**
   * Validates (for client and coordinator origins) and stages one batch already placed at its
   * final offsets. Throws KafkaError with Kafka's code on a sequence or epoch violation.
   */
  add(view: RecordBatchView, origin: AppendOrigin, controlType: number, coordinatorEpoch: number): void {
    const pid = view.producerId;
    if (view.isControl && controlType === ControlRecordType.MIRROR_PID_RESET) {
      this.resetAll = true;
      this.updates.clear();
      return;
    }
    if (pid < 0) return;
    const epoch = view.producerEpoch;
    const current = this.entryFor(pid);
    const next: ProducerEntry =
      current !== undefined
        ? cloneEntry(current)
        : { producerId: pid, producerEpoch: -1, batches: [], coordinatorEpoch: -1, currentTxnFirstOffset: -1, lastTimestamp: -1 };

    if (view.isControl) {
      if (controlType !== ControlRecordType.ABORT && controlType !== ControlRecordType.COMMIT) return;
      if (origin !== 'replication') {
        if (current !== undefined && epoch < current.producerEpoch) {
          throw new KafkaError(ErrorCode.INVALID_PRODUCER_EPOCH, `marker epoch ${epoch} is older than ${current.producerEpoch}`);
        }
        if (current !== undefined && coordinatorEpoch < current.coordinatorEpoch) {
          throw new KafkaError(ErrorCode.TRANSACTION_COORDINATOR_FENCED, `coordinator epoch ${coordinatorEpoch} is fenced`);
        }
      }
      if (epoch !== next.producerEpoch) next.batches = [];
      next.producerEpoch = epoch;
      const firstOffset = next.currentTxnFirstOffset >= 0 ? next.currentTxnFirstOffset : view.baseOffset;
      this.completed.push({ producerId: pid, firstOffset, lastOffset: view.baseOffset, isAborted: controlType === ControlRecordType.ABORT });
      next.currentTxnFirstOffset = -1;
      if (coordinatorEpoch >= 0) next.coordinatorEpoch = coordinatorEpoch;
      next.lastTimestamp = view.maxTimestamp;
      this.updates.set(pid, next);
      return;
    }

    const firstSeq = view.baseSequence;
    if (origin === 'client') {
      if (current !== undefined && epoch < current.producerEpoch) {
        throw new KafkaError(ErrorCode.INVALID_PRODUCER_EPOCH, `producer ${pid} epoch ${epoch} is older than ${current.producerEpoch}`);
      }
      if (current === undefined || epoch !== current.producerEpoch) {
        if (firstSeq !== 0 && current !== undefined && current.producerEpoch !== -1) {
          throw new KafkaError(ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER, `new epoch ${epoch} for producer ${pid} must start at sequence 0, got ${firstSeq}`);
        }
      } else {
        const last = current.batches.at(-1);
        if (last !== undefined && !inSequence(last.lastSeq, firstSeq)) {
          throw new KafkaError(ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER, `producer ${pid}: expected sequence ${last.lastSeq + 1}, got ${firstSeq}`);
        }
      }
      if (!view.isTransactional && next.currentTxnFirstOffset >= 0) {
        throw new KafkaError(ErrorCode.INVALID_TXN_STATE, `producer ${pid} has an ongoing transaction; non-transactional write refused`);
      }
    }
    if (epoch !== next.producerEpoch) {
      next.batches = [];
      next.producerEpoch = epoch;
    }
    if (firstSeq >= 0) {
      next.batches.push({ firstSeq, lastSeq: lastSeqOf(view), firstOffset: view.baseOffset, lastOffset: view.lastOffset, timestamp: view.maxTimestamp });
      if (next.batches.length > NUM_BATCHES_TO_RETAIN) next.batches.shift();
    }
    if (view.isTransactional && next.currentTxnFirstOffset < 0) next.currentTxnFirstOffset = view.baseOffset;
    next.lastTimestamp = view.maxTimestamp;
    this.updates.set(pid, next);
  }

  commit(): CompletedTxn[] {
    this.mgr.apply(this);
    return this.completed;
  }
}

/**
 * Per-partition producer state: idempotent sequence tracking, ongoing transactions and the
 * first unstable offset (Kafka's ProducerStateManager), with Kafka's snapshot file format.
 *
 * Concurrency: mutated only inside the owning PartitionLog's serial queue.
 */
export class ProducerStateManager {
  private readonly producers = new Map<number, ProducerEntry>();
  /** Producers with an open transaction → its first offset (kept apart: the LSO is read per fetch). */
  private readonly ongoing = new Map<number, number>();
  /** Transactions completed by a marker that is not yet below the high watermark. */
  private unreplicated: CompletedTxn[] = [];

  entry(pid: number): ProducerEntry | undefined {
    return this.producers.get(pid);
  }

  begin(): ProducerAppend {
    return new ProducerAppend(this);
  }

  /** The original batch when `view` repeats one of the producer's last 5 (same epoch and sequences). */
  findDuplicate(view: RecordBatchView): BatchMetadata | undefined {
    if (view.producerId < 0 || view.baseSequence < 0) return undefined;
    const e = this.producers.get(view.producerId);
    if (e === undefined || e.producerEpoch !== view.producerEpoch) return undefined;
    const first = view.baseSequence;
    const last = lastSeqOf(view);
    return e.batches.find((b) => b.firstSeq === first && b.lastSeq === last);
  }

  apply(a: ProducerAppend): void {
    if (a.resetAll) {
      this.producers.clear();
      this.ongoing.clear();
    }
    for (const [pid, e] of a.updates) {
      this.producers.set(pid, e);
      if (e.currentTxnFirstOffset >= 0) this.ongoing.set(pid, e.currentTxnFirstOffset);
      else this.ongoing.delete(pid);
    }
    for (const t of a.completed) this.unreplicated.push(t);
  }

  /** Applies one batch without validation (log rebuild and replication). */
  replay(view: RecordBatchView, controlType: number): CompletedTxn[] {
    const a = this.begin();
    a.add(view, 'replication', controlType, -1);
    return a.commit();
  }

  /** Lowest offset of a transaction that is ongoing or whose marker is above the high watermark. */
  firstUnstableOffset(): number {
    let min = this.ongoingFirstOffset();
    for (const t of this.unreplicated) if (t.firstOffset < min) min = t.firstOffset;
    return min;
  }

  /** Lowest first offset of a still-open transaction (Infinity when none). */
  /** The aborted-transaction index entry of a completed abort (its last stable offset from the open ones). */
  abortedEntry(t: CompletedTxn): AbortedTxn {
    const lso = Math.min(this.ongoingFirstOffset(), t.lastOffset + 1);
    return { producerId: t.producerId, firstOffset: t.firstOffset, lastOffset: t.lastOffset, lastStableOffset: lso };
  }

  ongoingFirstOffset(): number {
    let min = Number.POSITIVE_INFINITY;
    for (const first of this.ongoing.values()) if (first < min) min = first;
    return min;
  }

  onHighWatermark(hw: number): void {
    if (this.unreplicated.length > 0) this.unreplicated = this.unreplicated.filter((t) => t.lastOffset >= hw);
  }

  /** Transactions still open (producer id → first offset). */
  ongoingTransactions(): { producerId: number; firstOffset: number }[] {
    return [...this.ongoing].map(([producerId, firstOffset]) => ({ producerId, firstOffset }));
  }

  views(): ProducerStateView[] {
    return [...this.producers.values()].map((e) => ({
      producerId: e.producerId,
      producerEpoch: e.producerEpoch,
      lastSequence: e.batches.at(-1)?.lastSeq ?? -1,
      lastTimestamp: e.lastTimestamp,
      coordinatorEpoch: e.coordinatorEpoch,
      currentTxnStartOffset: e.currentTxnFirstOffset,
    }));
  }

  clear(): void {
    this.producers.clear();
    this.ongoing.clear();
    this.unreplicated = [];
  }

  /** Drops producers idle longer than `expirationMs` without an open transaction. */
  removeExpired(now: number, expirationMs: number): void {
    for (const [pid, e] of this.producers) {
      if (e.currentTxnFirstOffset < 0 && e.lastTimestamp >= 0 && now - e.lastTimestamp > expirationMs) this.producers.delete(pid);
    }
  }

  /**
   * Kafka's producer snapshot (version 1): int16 version, uint32 CRC-32C of what follows, then an
   * array of (producerId int64, epoch int16, lastSequence int32, lastOffset int64, offsetDelta
   * int32, timestamp int64, coordinatorEpoch int32, currentTxnFirstOffset int64).
   */
  encodeSnapshot(): Buffer {
    const entries = [...this.producers.values()];
    const ENTRY = 8 + 2 + 4 + 8 + 4 + 8 + 4 + 8;
    const buf = Buffer.alloc(2 + 4 + 4 + entries.length * ENTRY);
    buf.writeInt16BE(1, 0);
    buf.writeInt32BE(entries.length, 6);
    let at = 10;
    for (const e of entries) {
      const last = e.batches.at(-1);
      buf.writeBigInt64BE(BigInt(e.producerId), at);
      buf.writeInt16BE(e.producerEpoch, at + 8);
      buf.writeInt32BE(last?.lastSeq ?? -1, at + 10);
      buf.writeBigInt64BE(BigInt(last?.lastOffset ?? -1), at + 14);
      buf.writeInt32BE(last !== undefined ? last.lastOffset - last.firstOffset : 0, at + 22);
      buf.writeBigInt64BE(BigInt(e.lastTimestamp), at + 26);
      buf.writeInt32BE(e.coordinatorEpoch, at + 34);
      buf.writeBigInt64BE(BigInt(e.currentTxnFirstOffset), at + 38);
      at += ENTRY;
    }
    buf.writeUInt32BE(crc32c(buf.subarray(6)), 2);
    return buf;
  }

  /** Loads a snapshot; false (state left empty) when it is truncated or its CRC does not match. */
  loadSnapshot(buf: Buffer): boolean {
    this.clear();
    if (buf.length < 10 || buf.readInt16BE(0) !== 1 || crc32c(buf.subarray(6)) !== buf.readUInt32BE(2)) return false;
    const n = buf.readInt32BE(6);
    const ENTRY = 46;
    if (n < 0 || 10 + n * ENTRY > buf.length) return false;
    let at = 10;
    for (let i = 0; i < n; i++) {
      const producerId = Number(buf.readBigInt64BE(at));
      const lastSeq = buf.readInt32BE(at + 10);
      const lastOffset = Number(buf.readBigInt64BE(at + 14));
      const offsetDelta = buf.readInt32BE(at + 22);
      const timestamp = Number(buf.readBigInt64BE(at + 26));
      const batches: BatchMetadata[] =
        lastSeq >= 0 && lastOffset >= 0
          ? [{ firstSeq: Math.max(0, lastSeq - offsetDelta), lastSeq, firstOffset: lastOffset - offsetDelta, lastOffset, timestamp }]
          : [];
      const currentTxnFirstOffset = Number(buf.readBigInt64BE(at + 38));
      if (currentTxnFirstOffset >= 0) this.ongoing.set(producerId, currentTxnFirstOffset);
      this.producers.set(producerId, {
        producerId,
        producerEpoch: buf.readInt16BE(at + 8),
        batches,
        coordinatorEpoch: buf.readInt32BE(at + 34),
        currentTxnFirstOffset,
        lastTimestamp: timestamp,
      });
      at += ENTRY;
    }
    return true;
  }
}
