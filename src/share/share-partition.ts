/**
 * One share-partition: the delivery state of one topic partition for one share group (KIP-932,
 * Kafka's SharePartition). Records between the share-partition start offset (SPSO) and end
 * offset (SPEO, exclusive) are "in flight"; each is AVAILABLE, ACQUIRED by one member,
 * ACKNOWLEDGED or ARCHIVED. The SPSO moves past every record in a terminal state.
 *
 * The state lives in fixed typed arrays indexed by offset modulo `group.share.partition.max.record.locks`
 * (the most records ever in flight), so acquiring and acknowledging allocate nothing per record.
 * Record batches are never decoded: acquisition walks batch headers only (base offset, last
 * offset delta, control bit), and the fetch returns the stored batches as they are, with
 * AcquiredRecords ranges telling the client which of their records it now holds.
 *
 * Concurrency contract: every method runs to completion on the event loop; the only await is the
 * log read in ShareFetch (share-fetch-reader.ts), after which `acquire` re-checks every state, so
 * two members reading the same range never acquire the same record.
 */
import { ATTR, BATCH } from '../protocol/record-batch.js';

/** Kafka's RecordState ids (also what ShareSnapshot/ShareUpdate records store). */
export const RecordState = { AVAILABLE: 0, ACQUIRED: 1, ACKNOWLEDGED: 2, ARCHIVED: 4 } as const;

/** ShareFetch/ShareAcknowledge AcknowledgeTypes (Kafka's AcknowledgeType; RENEW is KIP-1222, v2). */
const AcknowledgeType = { GAP: 0, ACCEPT: 1, RELEASE: 2, REJECT: 3, RENEW: 4 } as const;

export interface AcquiredRange {
  firstOffset: bigint;
  lastOffset: bigint;
  deliveryCount: number;
}

interface SharePartitionLimits {
  /** group.share.record.lock.duration.ms (or the group's share.record.lock.duration.ms). */
  lockDurationMs(): number;
  /** group.share.delivery.count.limit (or the group's share.delivery.count.limit). */
  deliveryCountLimit(): number;
  /** Called after a lock expiry changed the state (acknowledgements are persisted by their caller). */
  onExpired?(): void;
}

/** A run of in-flight offsets with one state and delivery count (ShareSnapshot's StateBatch). */
export interface PersistedBatch {
  readonly firstOffset: number;
  readonly lastOffset: number;
  readonly deliveryState: number;
  readonly deliveryCount: number;
}

interface AcquireResult {
  readonly ranges: AcquiredRange[];
  /** The byte range of `records` holding every batch with an acquired record. */
  readonly records: Buffer;
  readonly count: number;
}

/** An aborted transaction overlapping a read (the log's aborted-transaction index): its producer and first offset. */
interface AbortedTxnRef {
  readonly producerId: number;
  readonly firstOffset: number;
}

export interface AckBatch {
  readonly firstOffset: bigint;
  readonly lastOffset: bigint;
  readonly acknowledgeTypes: readonly number[];
}

export class SharePartition {
  private start: number;
  private end: number;
  private readonly state: Uint8Array;
  private readonly deliveries: Uint16Array;
  /** Which acquisition holds the record (its lock timer), and which member. */
  private readonly acquisition: Int32Array;
  private readonly owner: Int32Array;
  private nextAcquisition = 1;
  private readonly memberIndex = new Map<string, number>();
  private readonly timers = new Map<number, ReturnType<typeof setTimeout>>();
  private readonly listeners = new Set<() => void>();

  constructor(
    startOffset: number,
    readonly maxInFlight: number,
    private readonly limits: SharePartitionLimits,
  ) {
    this.start = startOffset;
    this.end = startOffset;
    this.state = new Uint8Array(maxInFlight);
    this.deliveries = new Uint16Array(maxInFlight);
    this.acquisition = new Int32Array(maxInFlight);
    this.owner = new Int32Array(maxInFlight);
  }

  /** SPSO: every record below it is acknowledged or archived. */
  get startOffset(): number {
    return this.start;
  }

  /** SPEO (exclusive): the first offset never acquired. */
  get endOffset(): number {
    return this.end;
  }

  /** The offset a fetch should read from: the first AVAILABLE in-flight record, else the SPEO. */
  nextFetchOffset(): number {
    for (let o = this.start; o < this.end; o++) if (this.state[this.slot(o)] === RecordState.AVAILABLE) return o;
    return this.end;
  }

  /** Whether a fetch could acquire anything below `highWatermark`. */
  canAcquire(highWatermark: number): boolean {
    return this.nextFetchOffset() < this.end || (this.end < highWatermark && this.end - this.start < this.maxInFlight);
  }

  /** Records between the SPSO and `highWatermark` still to be delivered or settled (DescribeShareGroupOffsets v1 Lag). */
  lag(highWatermark: number): number {
    let settled = 0;
    for (let o = this.start; o < this.end; o++) {
      const st = this.state[this.slot(o)];
      if (st === RecordState.ACKNOWLEDGED || st === RecordState.ARCHIVED) settled++;
    }
    return Math.max(0, highWatermark - this.start - settled);
  }

  stateOf(offset: number): { state: number; deliveryCount: number } | null {
    if (offset < this.start || offset >= this.end) return null;
    const s = this.slot(offset);
    return { state: this.state[s]!, deliveryCount: this.deliveries[s]! };
  }

  /**
   * The in-flight state as runs of equal (state, delivery count), for the share coordinator.
   * An ACQUIRED record is stored as AVAILABLE: its lock does not outlive this node (Kafka's
   * SharePartition persists acquisitions the same way).
   */
  persistedBatches(): PersistedBatch[] {
    const out: { firstOffset: number; lastOffset: number; deliveryState: number; deliveryCount: number }[] = [];
    for (let o = this.start; o < this.end; o++) {
      const s = this.slot(o);
      const st = this.state[s] === RecordState.ACQUIRED ? RecordState.AVAILABLE : this.state[s]!;
      const dc = this.deliveries[s]!;
      const last = out[out.length - 1];
      if (last !== undefined && last.lastOffset === o - 1 && last.deliveryState === st && last.deliveryCount === dc) last.lastOffset = o;
      else out.push({ firstOffset: o, lastOffset: o, deliveryState: st, deliveryCount: dc });
    }
    return out;
  }

  /** Loads persisted batches (from the share coordinator) into a partition created at their start offset. */
  restore(batches: readonly PersistedBatch[]): void {
    for (const b of batches) {
      for (let o = Math.max(b.firstOffset, this.start); o <= b.lastOffset; o++) {
        if (!this.extendTo(o)) return;
        const s = this.slot(o);
        this.state[s] = b.deliveryState === RecordState.ACQUIRED ? RecordState.AVAILABLE : b.deliveryState;
        this.deliveries[s] = b.deliveryCount;
        this.end = o + 1;
      }
    }
    this.advanceStart();
  }

  /** Called when records become AVAILABLE again (released, lock expired): long polls look again. */
  onAvailable(cb: () => void): () => void {
    this.listeners.add(cb);
    return () => this.listeners.delete(cb);
  }

  /**
   * Moves the SPSO to `offset` (the log start moved past it, or an offset reset): records below
   * it leave flight. With nothing in flight beyond it, the window simply restarts there.
   */
  resetStart(offset: number): void {
    if (offset <= this.start) return;
    if (offset >= this.end) {
      this.start = offset;
      this.end = offset;
      return;
    }
    this.start = offset;
    this.advanceStart();
  }

  /**
   * Acquires for `memberId` the acquirable records of `records` (whole batches read from the log
   * at `fromOffset`, below `highWatermark`, or below the last stable offset for read_committed):
   * AVAILABLE in-flight records, then new ones while the window has room. At most `maxRecords`:
   * whole batches unless `strict` (ShareAcquireMode record_limit), as Kafka's
   * SharePartition.acquire does in batch_optimized mode.
   *
   * `aborted` (read_committed) names the aborted transactions overlapping the read: the data
   * batches of those transactions are archived, never acquired (Kafka's
   * SharePartition.filterAbortedTransactionalAcquiredRecords). As a read_committed consumer does,
   * a producer's batches count as aborted from the transaction's first offset to its next control
   * batch, which is that transaction's abort marker: batch headers only, no record is decoded.
   */
  acquire(memberId: string, records: Buffer, fromOffset: number, highWatermark: number, maxRecords: number, strict: boolean, aborted: readonly AbortedTxnRef[] = []): AcquireResult {
    const ranges: AcquiredRange[] = [];
    const member = this.member(memberId);
    const acq = this.nextAcquisition++;
    let count = 0;
    let firstByte = -1;
    let lastByte = -1;
    let cur: AcquiredRange | null = null;
    const take = (o: number, deliveryCount: number): void => {
      const last = BigInt(o);
      if (cur !== null && cur.lastOffset === last - 1n && cur.deliveryCount === deliveryCount) cur.lastOffset = last;
      else {
        cur = { firstOffset: last, lastOffset: last, deliveryCount };
        ranges.push(cur);
      }
      count++;
    };
    const pendingAborts = aborted.length === 0 ? aborted : [...aborted].sort((a, b) => a.firstOffset - b.firstOffset);
    let nextAbort = 0;
    const abortedProducers = new Set<number>();
    let pos = 0;
    // Set when the window or the record limit ends acquisition inside a batch: that batch still
    // goes out with the records acquired from it, then the walk stops.
    let full = false;
    while (!full && pos + BATCH.HEADER_SIZE <= records.length) {
      const size = BATCH.LOG_OVERHEAD + records.readInt32BE(pos + BATCH.BATCH_LENGTH);
      if (pos + size > records.length) break;
      const base = Number(records.readBigInt64BE(pos + BATCH.BASE_OFFSET));
      const last = base + records.readInt32BE(pos + BATCH.LAST_OFFSET_DELTA);
      const attributes = records.readInt16BE(pos + BATCH.ATTRIBUTES);
      const control = (attributes & ATTR.CONTROL) !== 0;
      if (last >= highWatermark) break;
      if (count >= maxRecords) break;
      // Control batches, and the data batches of aborted transactions, are never delivered.
      let skip = control;
      if (pendingAborts.length > 0) {
        while (nextAbort < pendingAborts.length && pendingAborts[nextAbort]!.firstOffset <= last) abortedProducers.add(pendingAborts[nextAbort++]!.producerId);
        const producerId = Number(records.readBigInt64BE(pos + BATCH.PRODUCER_ID));
        if (control) abortedProducers.delete(producerId);
        else if ((attributes & ATTR.TRANSACTIONAL) !== 0 && abortedProducers.has(producerId)) skip = true;
      }
      let took = false;
      for (let o = Math.max(base, fromOffset, this.start); o <= last; o++) {
        if (o >= this.end) {
          if (!this.extendTo(o)) {
            full = true;
            break;
          }
          const s = this.slot(o);
          this.end = o + 1;
          this.deliveries[s] = 0;
          // A control batch (or an aborted one) holds no record to deliver: it leaves flight at once.
          this.state[s] = skip ? RecordState.ARCHIVED : RecordState.AVAILABLE;
        }
        const s = this.slot(o);
        if (skip) {
          // Records of an aborted transaction already in flight (read before the group turned read_committed).
          if (this.state[s] === RecordState.AVAILABLE) this.state[s] = RecordState.ARCHIVED;
          continue;
        }
        if (this.state[s] !== RecordState.AVAILABLE) continue;
        if (strict && count >= maxRecords) {
          full = true;
          break;
        }
        this.state[s] = RecordState.ACQUIRED;
        this.deliveries[s] = this.deliveries[s]! + 1;
        this.acquisition[s] = acq;
        this.owner[s] = member;
        take(o, this.deliveries[s]!);
        took = true;
      }
      if (took) {
        if (firstByte < 0) firstByte = pos;
        lastByte = pos + size;
      }
      pos += size;
    }
    this.advanceStart();
    if (count > 0) this.armLock(acq, ranges);
    return { ranges, records: firstByte < 0 ? records.subarray(0, 0) : records.subarray(firstByte, lastByte), count };
  }

  /**
   * Applies `memberId`'s acknowledgements: every record of a batch must be ACQUIRED by that
   * member (else INVALID_RECORD_STATE and nothing of the batch applies, Kafka's
   * SharePartition.acknowledge). Returns a Kafka error code; the first failing batch's wins.
   */
  acknowledge(memberId: string, batches: readonly AckBatch[]): { errorCode: number; message: string | null } {
    const member = this.memberIndex.get(memberId);
    let result: { errorCode: number; message: string | null } = { errorCode: 0, message: null };
    let released = false;
    for (const b of batches) {
      const first = Number(b.firstOffset);
      const last = Number(b.lastOffset);
      const types = b.acknowledgeTypes;
      if (last < first || (types.length !== 1 && types.length !== last - first + 1) || types.some((t) => t < 0 || t > 4)) {
        result = { errorCode: 42 /* INVALID_REQUEST */, message: `Invalid acknowledgement batch ${first}-${last}` };
        continue;
      }
      let ok = member !== undefined;
      for (let o = first; ok && o <= last; o++) {
        const s = this.slot(o);
        if (o < this.start || o >= this.end || this.state[s] !== RecordState.ACQUIRED || this.owner[s] !== member) ok = false;
      }
      if (!ok) {
        if (result.errorCode === 0) result = { errorCode: 121 /* INVALID_RECORD_STATE */, message: `Records ${first}-${last} are not acquired by member ${memberId}` };
        continue;
      }
      let renewed: AcquiredRange[] | null = null;
      const renewAcq = this.nextAcquisition++;
      for (let o = first; o <= last; o++) {
        const s = this.slot(o);
        const t = types.length === 1 ? types[0]! : types[o - first]!;
        if (t === AcknowledgeType.ACCEPT) this.state[s] = RecordState.ACKNOWLEDGED;
        else if (t === AcknowledgeType.RELEASE) released = this.release(s) || released;
        else if (t === AcknowledgeType.RENEW) {
          this.acquisition[s] = renewAcq;
          renewed ??= [];
          renewed.push({ firstOffset: BigInt(o), lastOffset: BigInt(o), deliveryCount: this.deliveries[s]! });
        } else this.state[s] = RecordState.ARCHIVED; // REJECT, GAP
      }
      if (renewed !== null) this.armLock(renewAcq, renewed);
    }
    this.advanceStart();
    if (released) this.notify();
    return result;
  }

  /** Releases every record `memberId` holds (its share session closed, or it left the group). */
  releaseMember(memberId: string): void {
    const member = this.memberIndex.get(memberId);
    if (member === undefined) return;
    let released = false;
    for (let o = this.start; o < this.end; o++) {
      const s = this.slot(o);
      if (this.state[s] === RecordState.ACQUIRED && this.owner[s] === member) released = this.release(s) || released;
    }
    this.advanceStart();
    if (released) this.notify();
  }

  /** Stops the lock timers (the partition is no longer led here, or the node stops). */
  close(): void {
    for (const t of this.timers.values()) clearTimeout(t);
    this.timers.clear();
    this.listeners.clear();
  }

  private slot(offset: number): number {
    return offset % this.maxInFlight;
  }

  /** Makes `offset` part of the window: offsets skipped before it (no record there) are archived. */
  private extendTo(offset: number): boolean {
    if (this.start === this.end && offset > this.end) {
      this.start = offset;
      this.end = offset;
    }
    if (offset - this.start >= this.maxInFlight) return false;
    for (let o = this.end; o < offset; o++) {
      const s = this.slot(o);
      this.state[s] = RecordState.ARCHIVED;
      this.deliveries[s] = 0;
    }
    return true;
  }

  /** A released record goes back to AVAILABLE, or to ARCHIVED once its deliveries reach the limit. */
  private release(s: number): boolean {
    if (this.deliveries[s]! >= this.limits.deliveryCountLimit()) {
      this.state[s] = RecordState.ARCHIVED;
      return false;
    }
    this.state[s] = RecordState.AVAILABLE;
    return true;
  }

  private advanceStart(): void {
    while (this.start < this.end) {
      const st = this.state[this.slot(this.start)];
      if (st !== RecordState.ACKNOWLEDGED && st !== RecordState.ARCHIVED) break;
      this.start++;
    }
  }

  /** The acquisition lock (Kafka's AcquisitionLockTimerTask): records still held when it fires are released. */
  private armLock(acq: number, ranges: readonly AcquiredRange[]): void {
    const first = Number(ranges[0]!.firstOffset);
    const last = Number(ranges[ranges.length - 1]!.lastOffset);
    const timer = setTimeout(() => {
      this.timers.delete(acq);
      let released = false;
      for (let o = Math.max(first, this.start); o <= last && o < this.end; o++) {
        const s = this.slot(o);
        if (this.state[s] === RecordState.ACQUIRED && this.acquisition[s] === acq) released = this.release(s) || released;
      }
      this.advanceStart();
      if (released) this.notify();
      this.limits.onExpired?.();
    }, this.limits.lockDurationMs());
    timer.unref();
    this.timers.set(acq, timer);
  }

  private member(memberId: string): number {
    let i = this.memberIndex.get(memberId);
    if (i === undefined) {
      i = this.memberIndex.size + 1;
      this.memberIndex.set(memberId, i);
    }
    return i;
  }

  private notify(): void {
    for (const cb of [...this.listeners]) cb();
  }
}
