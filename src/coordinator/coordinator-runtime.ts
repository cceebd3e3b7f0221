import type { CancelTimer, CoordinatorHost, CoordinatorLog } from './coordinator-host.js';
import { buildCoordinatorBatch, readCoordinatorBatches } from './coordinator-batch.js';
import type { BatchProducer, CoordinatorRecord, ReplayedBatch, ReplayedRecord } from './coordinator-batch.js';
import { buildEndTxnMarkerBatch, controlRecordKey, ControlRecordType, endTxnMarkerValue } from '../protocol/control-records.js';

/**
 * A coordinator whose state lives in an internal compacted topic, shaped after Kafka's
 * `CoordinatorRuntime` (coordinator-common): one shard per partition of the topic; a write
 * operation runs against the shard and yields records plus a response; the records go to the
 * log as one batch, are applied (replayed) into the shard once the append is committed, and the
 * response is released then. A failed append applies nothing and the operation's failure
 * response (or a mapped error) is returned, so in-memory state always equals the replay of the
 * log. Loading a shard replays its partition from the log start.
 *
 * Concurrency contract: per shard, write operations run strictly one after another (the next
 * one starts once the previous batch is committed and applied), so an operation always sees all
 * earlier writes of its shard. Reads run immediately against committed state. Shards are
 * independent of each other.
 */

/** Coordinator error codes the runtime itself answers with (Kafka's numbers). */
export const RuntimeError = {
  UNKNOWN_SERVER_ERROR: -1,
  COORDINATOR_LOAD_IN_PROGRESS: 14,
  COORDINATOR_NOT_AVAILABLE: 15,
  NOT_COORDINATOR: 16,
} as const;

/** An operation failed with a Kafka error code (append failure, shard closed, ...). */
export class CoordinatorError extends Error {
  override readonly name = 'CoordinatorError';
  constructor(
    readonly errorCode: number,
    message: string,
  ) {
    super(message);
  }
}

export interface WriteResult<T> {
  readonly records: readonly CoordinatorRecord[];
  readonly response: T;
  /**
   * Called when the append fails, before the caller sees anything; undoes any in-memory-only
   * effects of the operation and returns the response to send instead. Without it the write
   * rejects with a CoordinatorError.
   */
  readonly onAppendFailed?: (errorCode: number) => T;
  /** Runs once the records are committed and replayed, before the response is released. */
  readonly onCommitted?: () => void;
  /** Writes the records as a transactional batch of this producer. */
  readonly transactional?: BatchProducer;
  /** Instead of records: an end-transaction marker (control batch) for this producer. */
  readonly marker?: BatchProducer & { readonly commit: boolean; readonly coordinatorEpoch: number };
}

export type WriteOp<S, T> = (shard: S) => WriteResult<T>;

/** What a shard may use of its runtime: time and its own timers (which schedule write ops). */
export interface ShardContext<S> {
  readonly partition: number;
  now(): number;
  /** (Re)schedules the timer `key`; when it fires, `op` runs as a write operation. */
  scheduleTimer(key: string, delayMs: number, op: WriteOp<S, unknown>): void;
  cancelTimer(key: string): void;
  /** Runs `op` as a write operation on this shard later (after the current one). */
  scheduleWrite<T>(op: WriteOp<S, T>): Promise<T>;
}

export interface CoordinatorShard {
  /** Applies one committed record (during load and after each committed write). */
  replay(record: ReplayedRecord, batch: ReplayedBatch): void;
  /** Called once the partition has been replayed; timers (session, expiry) start here. */
  onLoaded?(): void;
  /** Called when the shard is closed; pending waiters should be answered here. */
  onUnloaded?(): void;
}

export interface RuntimeOptions<S extends CoordinatorShard> {
  readonly host: CoordinatorHost;
  readonly topic: string;
  readonly partitions: number;
  readonly newShard: (ctx: ShardContext<S>) => S;
  /** Bytes read per step while replaying. */
  readonly loadBufferBytes?: number;
}

/** Kafka's `Utils.abs(key.hashCode()) % partitions`, with Java's String.hashCode over UTF-16 units. */
export function partitionForKey(key: string, partitions: number): number {
  let h = 0;
  for (let i = 0; i < key.length; i++) h = (Math.imul(h, 31) + key.charCodeAt(i)) | 0;
  const abs = h === -2147483648 ? 0 : Math.abs(h);
  return abs % partitions;
}

/** Maps a log append error to what a coordinator client understands (Kafka's CoordinatorRuntime mapping). */
function mapAppendError(code: number): number {
  switch (code) {
    case 3: // UNKNOWN_TOPIC_OR_PARTITION
    case 19: // NOT_ENOUGH_REPLICAS
    case 20: // NOT_ENOUGH_REPLICAS_AFTER_APPEND
    case 7: // REQUEST_TIMED_OUT
      return RuntimeError.COORDINATOR_NOT_AVAILABLE;
    case 6: // NOT_LEADER_OR_FOLLOWER
    case 56: // KAFKA_STORAGE_ERROR
      return RuntimeError.NOT_COORDINATOR;
    default:
      return RuntimeError.UNKNOWN_SERVER_ERROR;
  }
}

class ShardHolder<S extends CoordinatorShard> {
  shard!: S;
  log!: CoordinatorLog;
  loaded = false;
  closed = false;
  /** The tail of the write queue. */
  tail: Promise<void> = Promise.resolve();
  readonly timers = new Map<string, CancelTimer>();
  loading: Promise<void> | null = null;
  constructor(readonly partition: number) {}
}

export class CoordinatorRuntime<S extends CoordinatorShard> {
  private readonly shards = new Map<number, ShardHolder<S>>();
  private closed = false;

  constructor(private readonly opts: RuntimeOptions<S>) {}

  get partitions(): number {
    return this.opts.partitions;
  }

  get topic(): string {
    return this.opts.topic;
  }

  partitionFor(key: string): number {
    return partitionForKey(key, this.opts.partitions);
  }

  /** Loads the shard of `partition` (replaying its log) if it is not loaded yet. */
  async load(partition: number): Promise<S> {
    if (this.closed) throw new CoordinatorError(RuntimeError.NOT_COORDINATOR, 'coordinator closed');
    let holder = this.shards.get(partition);
    if (!holder) {
      holder = new ShardHolder<S>(partition);
      this.shards.set(partition, holder);
    }
    if (!holder.loaded) {
      holder.loading ??= this.replayInto(holder).catch((e: unknown) => {
        this.shards.delete(partition);
        throw e;
      });
      await holder.loading;
    }
    return holder.shard;
  }

  /** Loads every shard (used at start so timers such as offset expiry run everywhere). */
  async loadAll(): Promise<void> {
    for (let p = 0; p < this.opts.partitions; p++) await this.load(p);
  }

  /** Shards loaded so far, by partition. */
  loadedShards(): ReadonlyMap<number, S> {
    const out = new Map<number, S>();
    for (const [p, h] of this.shards) if (h.loaded) out.set(p, h.shard);
    return out;
  }

  private async replayInto(holder: ShardHolder<S>): Promise<void> {
    const log = await this.opts.host.openInternalPartition(this.opts.topic, holder.partition, this.opts.partitions);
    holder.log = log;
    holder.shard = this.opts.newShard(this.contextFor(holder));
    const step = this.opts.loadBufferBytes ?? 1 << 20;
    let next = log.logStartOffset;
    while (next < log.logEndOffset) {
      const buf = await log.readFrom(next, step);
      let progressed = false;
      for (const batch of readCoordinatorBatches(buf)) {
        if (batch.lastOffset < next) continue;
        for (const rec of batch.records) if (rec.offset >= next) holder.shard.replay(rec, batch);
        next = batch.lastOffset + 1;
        progressed = true;
      }
      if (!progressed) {
        if (buf.length === 0) break;
        throw new CoordinatorError(RuntimeError.UNKNOWN_SERVER_ERROR, `no whole batch at offset ${next} of ${this.opts.topic}-${holder.partition}`);
      }
    }
    holder.loaded = true;
    holder.shard.onLoaded?.();
  }

  private contextFor(holder: ShardHolder<S>): ShardContext<S> {
    const host = this.opts.host;
    return {
      partition: holder.partition,
      now: () => host.clock.now(),
      scheduleTimer: (key, delayMs, op) => {
        holder.timers.get(key)?.();
        const cancel = host.timers.schedule(delayMs, () => {
          if (holder.timers.get(key) !== cancel) return;
          holder.timers.delete(key);
          if (holder.closed) return;
          this.enqueue(holder, op).catch(() => undefined);
        });
        holder.timers.set(key, cancel);
      },
      cancelTimer: (key) => {
        holder.timers.get(key)?.();
        holder.timers.delete(key);
      },
      scheduleWrite: (op) => this.enqueue(holder, op),
    };
  }

  /** Runs a write operation on the shard that owns `key`. */
  async write<T>(key: string, op: WriteOp<S, T>): Promise<T> {
    return this.writeTo(this.partitionFor(key), op);
  }

  async writeTo<T>(partition: number, op: WriteOp<S, T>): Promise<T> {
    await this.load(partition);
    const holder = this.shards.get(partition);
    if (!holder) throw new CoordinatorError(RuntimeError.NOT_COORDINATOR, 'shard unloaded');
    return this.enqueue(holder, op);
  }

  /** Runs `op` against the committed state of the shard that owns `key`. */
  async read<T>(key: string, op: (shard: S) => T): Promise<T> {
    return op(await this.load(this.partitionFor(key)));
  }

  async readFrom<T>(partition: number, op: (shard: S) => T): Promise<T> {
    return op(await this.load(partition));
  }

  private enqueue<T>(holder: ShardHolder<S>, op: WriteOp<S, T>): Promise<T> {
    let deliver!: (v: T | PromiseLike<T>) => void;
    let fail!: (e: unknown) => void;
    const result = new Promise<T>((res, rej) => {
      deliver = res;
      fail = rej;
    });
    holder.tail = holder.tail.then(async () => {
      if (holder.closed) {
        fail(new CoordinatorError(RuntimeError.NOT_COORDINATOR, 'coordinator shard closed'));
        return;
      }
      let out: WriteResult<T>;
      try {
        out = op(holder.shard);
      } catch (e) {
        fail(e);
        return;
      }
      if (out.records.length === 0 && !out.marker) {
        deliver(out.response);
        return;
      }
      let errorCode: number;
      let baseOffset = -1;
      let batch: Buffer;
      try {
        const now = this.opts.host.clock.now();
        batch = out.marker ? buildEndTxnMarkerBatch({ ...out.marker, timestamp: now }) : buildCoordinatorBatch(out.records, now, out.transactional);
        const appended = await holder.log.append(batch);
        errorCode = appended.errorCode;
        baseOffset = appended.baseOffset;
      } catch {
        errorCode = RuntimeError.UNKNOWN_SERVER_ERROR;
      }
      if (errorCode !== 0) {
        const mapped = errorCode === RuntimeError.UNKNOWN_SERVER_ERROR ? errorCode : mapAppendError(errorCode);
        if (out.onAppendFailed) {
          try {
            deliver(out.onAppendFailed(mapped));
          } catch (e) {
            fail(e);
          }
        } else fail(new CoordinatorError(mapped, `append to ${this.opts.topic}-${holder.partition} failed with ${errorCode}`));
        return;
      }
      const written = out.marker
        ? [{ key: controlRecordKey(out.marker.commit ? ControlRecordType.COMMIT : ControlRecordType.ABORT), value: endTxnMarkerValue(out.marker.coordinatorEpoch) }]
        : out.records;
      const records = written.map((r, i) => ({ key: r.key, value: r.value, offset: baseOffset + i }));
      const producer = out.marker ?? out.transactional;
      const replayed: ReplayedBatch = {
        baseOffset,
        lastOffset: baseOffset + records.length - 1,
        isControl: out.marker !== undefined,
        isTransactional: producer !== undefined,
        producerId: producer?.producerId ?? -1,
        records,
      };
      try {
        for (const r of records) holder.shard.replay(r, replayed);
        out.onCommitted?.();
        deliver(out.response);
      } catch (e) {
        fail(e);
      }
    });
    return result;
  }

  /** Resolves once every write queued so far (timers included) has finished. */
  async idle(): Promise<void> {
    for (const h of this.shards.values()) await h.tail;
  }

  /** Stops timers and answers pending operations; the logs stay open (the node owns them). */
  async close(): Promise<void> {
    this.closed = true;
    for (const holder of this.shards.values()) {
      holder.closed = true;
      for (const cancel of holder.timers.values()) cancel();
      holder.timers.clear();
      await holder.tail;
      if (holder.loaded) holder.shard.onUnloaded?.();
    }
    this.shards.clear();
  }
}
