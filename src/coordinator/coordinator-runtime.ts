import type { CancelTimer } from '../common/time.js';
import { readCoordinatorBatches } from './coordinator-batch.js';
import type { CoordinatorShard, RuntimeOptions, ShardContext, WriteOp } from './coordinator-shard.js';
import { ShardHolder, type ShardTimer } from './shard-holder.js';
import { DEFAULT_MAX_BATCH_BYTES, runShardBatch } from './shard-batch.js';
import { ErrorCode } from '../protocol/generated/errors.js';
import { KafkaError } from '../protocol/kafka-error.js';

/** How long a request waits for its shard's replay before COORDINATOR_LOAD_IN_PROGRESS. */
const LOAD_WAIT_MS = 2000;

/**
 * A coordinator whose state lives in an internal compacted topic, shaped after Kafka's
 * `CoordinatorRuntime` (coordinator-common): one shard per partition of the topic; a write
 * operation runs against the shard and yields records plus a response. The runtime applies the
 * records at once (replays them into the shard, exactly as a load does, under a snapshot of the
 * shard's SnapshotRegistry), appends them to the log as one batch, and releases the response
 * once the batch is committed. When the append fails, the shard is reverted to the snapshot, so
 * in-memory state is always the replay of what the log holds, and the operation's failure
 * response (or a mapped error) is returned. Loading a shard replays its partition from the log
 * start.
 *
 * Concurrency contract: per shard, writes are applied strictly one after another, each seeing
 * every earlier write of its shard; while a batch is out to the log the next writes wait, so a
 * write never builds on state that may still be reverted, and are then applied together and
 * appended as the next batch (one append, one fsync for all of them). Reads see committed state only: one
 * that arrives while a batch is out runs once that batch is committed or reverted. Shards are
 * independent of each other.
 */

export type { CoordinatorShard, RuntimeOptions, ShardContext, WriteOp, WriteResult } from './coordinator-shard.js';

/** Kafka's `Utils.abs(key.hashCode()) % partitions`, with Java's String.hashCode over UTF-16 units. */
export function partitionForKey(key: string, partitions: number): number {
  let h = 0;
  for (let i = 0; i < key.length; i++) h = (Math.imul(h, 31) + key.charCodeAt(i)) | 0;
  const abs = h === -2147483648 ? 0 : Math.abs(h);
  return abs % partitions;
}

export class CoordinatorRuntime<S extends CoordinatorShard> {
  private readonly shards = new Map<number, ShardHolder<S>>();
  private closed = false;
  private readonly offLeadership: (() => void) | null = null;
  private electionRetry: CancelTimer | null = null;

  constructor(private readonly opts: RuntimeOptions<S>) {
    const leadership = opts.host.leadership;
    if (leadership) this.offLeadership = leadership.onChange(() => this.onLeadershipChange());
  }

  get partitions(): number {
    return this.opts.partitions;
  }

  get topic(): string {
    return this.opts.topic;
  }

  partitionFor(key: string): number {
    return partitionForKey(key, this.opts.partitions);
  }

  /** True when this node serves the shard of `partition` (always, on a node alone). */
  serves(partition: number): boolean {
    const leadership = this.opts.host.leadership;
    return leadership === undefined || leadership.leads(this.opts.topic, partition);
  }

  /**
   * The shard of `partition`, replaying its log first if it is not loaded yet. On a cluster a
   * shard this node does not lead is NOT_COORDINATOR, and one still loading is
   * COORDINATOR_LOAD_IN_PROGRESS unless `wait` (Kafka's CoordinatorRuntime answers the same).
   */
  async load(partition: number, wait = this.opts.host.leadership === undefined): Promise<S> {
    if (this.closed) throw new KafkaError(ErrorCode.NOT_COORDINATOR, 'coordinator closed');
    if (!this.serves(partition)) {
      this.opts.host.leadership?.ensureTopic(this.opts.topic, this.opts.partitions);
      throw new KafkaError(ErrorCode.NOT_COORDINATOR, `this node does not lead ${this.opts.topic}-${partition}`);
    }
    let holder = this.shards.get(partition);
    if (!holder) {
      holder = new ShardHolder<S>(partition);
      this.shards.set(partition, holder);
    }
    if (!holder.loaded) {
      const h = holder;
      h.loading ??= this.replayInto(h).catch((e: unknown) => {
        if (this.shards.get(partition) === h) this.shards.delete(partition);
        throw e;
      });
      if (!wait) {
        h.loading.catch(() => undefined);
        // A replay is local and short: the request that started it (often the first one after a
        // failover) waits for it a little before answering COORDINATOR_LOAD_IN_PROGRESS, because
        // some clients (kafkajs's EndTxn, for one) give up on that error instead of retrying.
        let timer: NodeJS.Timeout | undefined;
        const loaded = await Promise.race([
          h.loading.then(() => true, () => false),
          new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), LOAD_WAIT_MS))),
        ]);
        clearTimeout(timer);
        if (!loaded) throw new KafkaError(ErrorCode.COORDINATOR_LOAD_IN_PROGRESS, `${this.opts.topic}-${partition} is loading`);
      }
      await h.loading;
      if (h.closed) throw new KafkaError(ErrorCode.NOT_COORDINATOR, `${this.opts.topic}-${partition} moved away while loading`);
    }
    return holder.shard;
  }

  /** Loads every shard this node serves (used at start so timers such as offset expiry run everywhere). */
  async loadAll(): Promise<void> {
    for (let p = 0; p < this.opts.partitions; p++) if (this.serves(p)) await this.load(p, true).catch((e: unknown) => {
      if (this.opts.host.leadership === undefined) throw e;
    });
  }

  /**
   * Kafka's onElection / onResignation: shards of partitions no longer led here are unloaded
   * (state dropped, timers cancelled, queued writes answered NOT_COORDINATOR; a batch out to the
   * log fails as the partition's leader resigned), partitions now led here are loaded from their
   * log, which holds all the ISR acknowledged. The image names a new leader before replication
   * has taken the role, so such partitions are looked at again shortly.
   */
  private onLeadershipChange(): void {
    const leadership = this.opts.host.leadership;
    if (this.closed || leadership === undefined) return;
    for (const holder of [...this.shards.values()]) if (!this.serves(holder.partition)) this.unload(holder);
    let electedNotYetLeading = false;
    for (let p = 0; p < this.opts.partitions; p++) {
      if (this.serves(p)) {
        if (!this.shards.has(p)) this.load(p, true).catch(() => undefined);
      } else if (leadership.leaderEndpoint(this.opts.topic, p)?.nodeId === this.opts.host.nodeId) electedNotYetLeading = true;
    }
    if (electedNotYetLeading && this.electionRetry === null) {
      this.electionRetry = this.opts.host.timers.schedule(100, () => {
        this.electionRetry = null;
        this.onLeadershipChange();
      });
    }
  }

  private unload(holder: ShardHolder<S>): void {
    if (this.shards.get(holder.partition) === holder) this.shards.delete(holder.partition);
    holder.closed = true;
    for (const t of holder.timers.values()) t.cancel();
    holder.timers.clear();
    for (const w of holder.queue.splice(0)) w.fail(new KafkaError(ErrorCode.NOT_COORDINATOR, `${this.opts.topic}-${holder.partition} moved to another node`));
    if (holder.loaded) holder.shard.onUnloaded?.();
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
        throw new KafkaError(ErrorCode.UNKNOWN_SERVER_ERROR, `no whole batch at offset ${next} of ${this.opts.topic}-${holder.partition}`);
      }
    }
    // Unloaded while replaying (leadership moved on): the state is dropped unseen.
    if (holder.closed) return;
    holder.loaded = true;
    holder.shard.onLoaded?.();
  }

  private contextFor(holder: ShardHolder<S>): ShardContext<S> {
    const host = this.opts.host;
    return {
      partition: holder.partition,
      now: () => host.clock.now(),
      scheduleTimer: (key, delayMs, op) => {
        holder.timers.get(key)?.cancel();
        const dueAt = this.timerNow() + Math.max(0, delayMs);
        const timer = {
          op,
          dueAt,
          cancel: host.timers.schedule(delayMs, () => {
            if (holder.timers.get(key) !== timer || holder.closed) return;
            this.queueDueTimers(holder, key);
          }),
        };
        // Map order is the tie-break among timers due at the same time: a rescheduled key goes last.
        holder.timers.delete(key);
        holder.timers.set(key, timer);
        if (dueAt < holder.timersDueFrom) holder.timersDueFrom = dueAt;
      },
      cancelTimer: (key) => {
        holder.timers.get(key)?.cancel();
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
    if (!holder) throw new KafkaError(ErrorCode.NOT_COORDINATOR, 'shard unloaded');
    return this.enqueue(holder, op);
  }

  /** Runs `op` against the committed state of the shard that owns `key`. */
  async read<T>(key: string, op: (shard: S) => T): Promise<T> {
    return this.readFrom(this.partitionFor(key), op);
  }

  async readFrom<T>(partition: number, op: (shard: S) => T): Promise<T> {
    await this.load(partition);
    const holder = this.shards.get(partition);
    if (!holder) throw new KafkaError(ErrorCode.NOT_COORDINATOR, 'shard unloaded');
    return this.readCommitted(holder, op);
  }

  /** Runs `op` against the committed state of every loaded shard, in partition order. */
  async readAll<T>(op: (shard: S, partition: number) => T): Promise<T[]> {
    const holders = [...this.shards.values()].filter((h) => h.loaded).sort((a, b) => a.partition - b.partition);
    return Promise.all(holders.map((h) => this.readCommitted(h, (shard) => op(shard, h.partition))));
  }

  /** Now on the timeline the timers count on. */
  private timerNow(): number {
    const { timers, clock } = this.opts.host;
    return timers.monotonicNow ? timers.monotonicNow() : clock.now();
  }

  /**
   * Queues the write ops of the shard's timers that are due, earliest first, together with
   * `firing` (the timer whose callback runs now, which may be a little early on this timeline).
   * Every write and read of the shard calls this before it takes its place, so an operation that
   * arrives after a deadline comes after what the deadline does, as with Kafka's coordinator
   * timer, which expires a session on its own thread at the deadline. A timer callback here runs
   * late when the event loop was busy or the process was not scheduled, and libuv polls sockets
   * before it runs due timers: without this, a DeleteGroups read after a member's session ended
   * found the member still there (NON_EMPTY_GROUP), as librdkafka's 0081 did on a loaded machine.
   */
  private queueDueTimers(holder: ShardHolder<S>, firing?: string): void {
    const now = this.timerNow();
    if (now < holder.timersDueFrom) {
      const t = firing === undefined ? undefined : holder.timers.get(firing);
      if (t === undefined) return;
      holder.timers.delete(firing!);
      this.push(holder, t.op).catch(() => undefined);
      return;
    }
    const due: [string, ShardTimer<S>][] = [];
    let next = Infinity;
    for (const e of holder.timers) {
      if (e[1].dueAt <= now || e[0] === firing) due.push(e);
      else if (e[1].dueAt < next) next = e[1].dueAt;
    }
    holder.timersDueFrom = next;
    due.sort((a, b) => a[1].dueAt - b[1].dueAt);
    for (const [key, t] of due) {
      holder.timers.delete(key);
      t.cancel();
      this.push(holder, t.op).catch(() => undefined);
    }
  }

  /** A read sees no write that is applied but not yet committed: while a batch is out, it waits for it. */
  private readCommitted<T>(holder: ShardHolder<S>, op: (shard: S) => T): Promise<T> {
    this.queueDueTimers(holder);
    if (!holder.busy) {
      try {
        return Promise.resolve(op(holder.shard));
      } catch (e) {
        return Promise.reject(e);
      }
    }
    return new Promise<T>((resolve, reject) => {
      holder.reads.push(() => {
        try {
          resolve(op(holder.shard));
        } catch (e) {
          reject(e);
        }
      });
    });
  }

  private enqueue<T>(holder: ShardHolder<S>, op: WriteOp<S, T>): Promise<T> {
    this.queueDueTimers(holder);
    return this.push(holder, op);
  }

  private push<T>(holder: ShardHolder<S>, op: WriteOp<S, T>): Promise<T> {
    return new Promise<T>((deliver, fail) => {
      holder.queue.push({ op, deliver: deliver as (v: unknown) => void, fail });
      if (!holder.busy) holder.drained = this.drain(holder);
    });
  }

  /** Applies and appends batches until the queue is empty; reads waiting on a batch run after it. */
  private async drain(holder: ShardHolder<S>): Promise<void> {
    holder.busy = true;
    try {
      while (holder.queue.length > 0) {
        if (holder.closed) {
          for (const w of holder.queue.splice(0)) w.fail(new KafkaError(ErrorCode.NOT_COORDINATOR, 'coordinator shard closed'));
          break;
        }
        await runShardBatch(holder, { now: this.opts.host.clock.now(), maxBytes: this.opts.maxBatchBytes ?? DEFAULT_MAX_BATCH_BYTES, topic: this.opts.topic });
        for (const r of holder.reads.splice(0)) r();
      }
    } finally {
      holder.busy = false;
      for (const r of holder.reads.splice(0)) r();
    }
  }

  /** Resolves once every write queued so far (timers included) has finished. */
  async idle(): Promise<void> {
    for (const h of this.shards.values()) await h.drained;
  }

  /** Stops timers and answers pending operations; the logs stay open (the node owns them). */
  async close(): Promise<void> {
    this.closed = true;
    this.offLeadership?.();
    this.electionRetry?.();
    for (const holder of this.shards.values()) {
      holder.closed = true;
      for (const t of holder.timers.values()) t.cancel();
      holder.timers.clear();
      await holder.drained;
      if (holder.loaded) holder.shard.onUnloaded?.();
    }
    this.shards.clear();
  }
}
