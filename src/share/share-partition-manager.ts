/**
 * The share-partitions led by this node and the share sessions of the members fetching them
 * (Kafka's SharePartitionManager): ShareFetch acquires, ShareAcknowledge and the
 * acknowledgements piggybacked on ShareFetch settle, and a long-polling ShareFetch waits for new
 * records or for records to become available again.
 *
 * A share-partition starts at the group's `share.auto.offset.reset` (latest: the high
 * watermark; earliest: the log start) the first time a member fetches it, and its delivery state
 * lives in memory on the partition leader.
 */
import { ErrorCode } from '../protocol/generated/errors.js';
import type { PartitionLog } from '../storage/partition-log.js';
import { SharePartition, type AckBatch, type AcquiredRange, type PersistedBatch } from './share-partition.js';
import { FINAL_EPOCH, INITIAL_EPOCH, ShareSessionCache, partitionKey, type SessionPartition, type ShareSession } from './share-session-cache.js';

export interface ShareLogs {
  /** The log of a partition this node leads, else the Kafka error code to answer with. */
  resolve(topicId: string, partition: number): Promise<{ errorCode: number; log: PartitionLog | null; leaderId: number; leaderEpoch: number }>;
  /** A share group's effective config (its GROUP override, else the broker's `group.share.*` key). */
  groupConfig(groupId: string, key: 'share.record.lock.duration.ms' | 'share.delivery.count.limit' | 'share.auto.offset.reset' | 'share.isolation.level' | 'share.session.timeout.ms' | 'share.partition.max.record.locks'): string;
}

/** Where share-partition state is kept durably (the share coordinator, share-coordinator.ts). */
export interface SharePersister {
  read(groupId: string, topicId: string, partition: number): Promise<{ startOffset: number; stateBatches: readonly PersistedBatch[] } | null>;
  write(groupId: string, topicId: string, partition: number, state: { startOffset: number; leaderEpoch: number; stateBatches: readonly PersistedBatch[] }): Promise<void>;
  delete(groupId: string, topicId: string, partition: number): Promise<void>;
}

export interface ShareFetchPartition extends SessionPartition {
  readonly acks: readonly AckBatch[];
}

interface ShareFetchInput {
  readonly groupId: string;
  readonly memberId: string;
  readonly epoch: number;
  readonly maxWaitMs: number;
  readonly maxBytes: number;
  readonly maxRecords: number;
  /** ShareAcquireMode record_limit (1): never more than maxRecords, even inside a batch. */
  readonly strict: boolean;
  readonly partitions: readonly ShareFetchPartition[];
  readonly forgotten: readonly SessionPartition[];
  readonly signal: AbortSignal;
}

export interface SharePartitionResult {
  readonly topicId: string;
  readonly partition: number;
  errorCode: number;
  errorMessage: string | null;
  acknowledgeErrorCode: number;
  acknowledgeErrorMessage: string | null;
  records: Buffer;
  acquired: AcquiredRange[];
  leaderId: number;
  leaderEpoch: number;
}

interface ShareFetchResult {
  readonly errorCode: number;
  readonly errorMessage: string | null;
  readonly lockDurationMs: number;
  readonly partitions: SharePartitionResult[];
}

const EMPTY = Buffer.alloc(0);

export class SharePartitionManager {
  private readonly partitions = new Map<string, SharePartition>();
  /** Share-partitions being loaded from the persister: concurrent first fetches share one load. */
  private readonly loading = new Map<string, Promise<SharePartition>>();
  /** Per share-partition: the write in flight and whether another must follow it. */
  private readonly writes = new Map<string, { running: Promise<void>; again: boolean; waiters: Promise<void> | null }>();
  readonly sessions: ShareSessionCache;
  private readonly sweep: ReturnType<typeof setInterval>;

  constructor(
    private readonly logs: ShareLogs,
    maxSessions: number,
    private readonly persister: SharePersister | null = null,
  ) {
    this.sessions = new ShareSessionCache(maxSessions, (s) => this.releaseSession(s));
    // A member that stops fetching without closing its session loses it (and its locks) after
    // the group's share.session.timeout.ms, as its group membership does.
    this.sweep = setInterval(() => this.sessions.expire(Date.now(), (g) => Number(this.logs.groupConfig(g, 'share.session.timeout.ms'))), 1000);
    this.sweep.unref();
  }

  /** The share-partition of `groupId` on a partition, if a member has fetched it. */
  sharePartition(groupId: string, topicId: string, partition: number): SharePartition | undefined {
    return this.partitions.get(`${groupId}\0${partitionKey(topicId, partition)}`);
  }

  /** The SPSO of a share-partition: held here, else as persisted, else -1 (no state). */
  async startOffsetOf(groupId: string, topicId: string, partition: number): Promise<{ startOffset: number; sp: SharePartition | undefined }> {
    const sp = this.sharePartition(groupId, topicId, partition);
    if (sp !== undefined) return { startOffset: sp.startOffset, sp };
    const saved = this.persister === null ? null : await this.persister.read(groupId, topicId, partition).catch(() => null);
    return { startOffset: saved?.startOffset ?? -1, sp: undefined };
  }

  /** Every share-partition of `groupId` held here, by topic id and partition. */
  sharePartitionsOf(groupId: string): { topicId: string; partition: number; sp: SharePartition }[] {
    const out: { topicId: string; partition: number; sp: SharePartition }[] = [];
    const prefix = `${groupId}\0`;
    for (const [k, sp] of this.partitions) {
      if (!k.startsWith(prefix)) continue;
      const rest = k.slice(prefix.length);
      const at = rest.lastIndexOf(':');
      out.push({ topicId: rest.slice(0, at), partition: Number(rest.slice(at + 1)), sp });
    }
    return out;
  }

  /** Drops the delivery state of a group's share-partitions (DeleteGroups, DeleteShareGroupOffsets), durably too. */
  async deleteSharePartition(groupId: string, topicId: string, partition: number): Promise<void> {
    this.dropSharePartition(groupId, topicId, partition);
    await this.persister?.delete(groupId, topicId, partition);
  }

  /**
   * Forgets every group's in-memory share-partition of a partition (its state stays with the
   * share coordinator): called when this node leads the partition at a new leader epoch, so a
   * leadership that comes back loads what the leaders in between persisted.
   */
  dropPartition(topicId: string, partition: number): void {
    const suffix = `\0${partitionKey(topicId, partition)}`;
    for (const [k, sp] of this.partitions) {
      if (!k.endsWith(suffix)) continue;
      sp.close();
      this.partitions.delete(k);
    }
  }

  private dropSharePartition(groupId: string, topicId: string, partition: number): void {
    const key = `${groupId}\0${partitionKey(topicId, partition)}`;
    this.partitions.get(key)?.close();
    this.partitions.delete(key);
  }

  /**
   * Writes the share-partition's state through the persister. Writes of one share-partition run
   * one at a time; a change during a write is written by one more write after it, which every
   * caller meanwhile waits for, so an acknowledgement is answered only once it is durable.
   */
  persist(groupId: string, topicId: string, partition: number, leaderEpoch: number): Promise<void> {
    const persister = this.persister;
    if (persister === null) return Promise.resolve();
    const key = `${groupId}\0${partitionKey(topicId, partition)}`;
    const writeNow = (): Promise<void> => {
      const sp = this.partitions.get(key);
      if (sp === undefined) return Promise.resolve();
      return persister.write(groupId, topicId, partition, { startOffset: sp.startOffset, leaderEpoch, stateBatches: sp.persistedBatches() });
    };
    const w = this.writes.get(key);
    if (w === undefined) {
      const entry = { running: Promise.resolve(), again: false, waiters: null as Promise<void> | null };
      entry.running = writeNow().finally(() => {
        if (this.writes.get(key) === entry && !entry.again) this.writes.delete(key);
      });
      this.writes.set(key, entry);
      return entry.running;
    }
    if (w.waiters === null) {
      w.again = true;
      w.waiters = w.running.catch(() => undefined).then(() => {
        w.again = false;
        w.waiters = null;
        w.running = writeNow().finally(() => {
          if (this.writes.get(key) === w && !w.again) this.writes.delete(key);
        });
        return w.running;
      });
    }
    return w.waiters;
  }

  close(): void {
    clearInterval(this.sweep);
    for (const sp of this.partitions.values()) sp.close();
    this.partitions.clear();
  }

  async shareFetch(req: ShareFetchInput): Promise<ShareFetchResult> {
    const lockDurationMs = Number(this.logs.groupConfig(req.groupId, 'share.record.lock.duration.ms'));
    const fail = (errorCode: number, errorMessage: string | null): ShareFetchResult => ({ errorCode, errorMessage, lockDurationMs, partitions: [] });
    if (!req.groupId || !req.memberId) return fail(ErrorCode.INVALID_REQUEST, 'GroupId and MemberId are required.');
    const outcome = this.sessions.begin(req.groupId, req.memberId, req.epoch, req.epoch === FINAL_EPOCH ? [] : req.partitions, req.forgotten, Date.now());
    if (outcome.kind === 'error') return fail(outcome.errorCode, outcome.message);
    const results = new Map<string, SharePartitionResult>();
    const resultOf = (p: SessionPartition, leaderId = -1, leaderEpoch = -1): SharePartitionResult => {
      const k = partitionKey(p.topicId, p.partition);
      let r = results.get(k);
      if (r === undefined) {
        r = { topicId: p.topicId, partition: p.partition, errorCode: 0, errorMessage: null, acknowledgeErrorCode: 0, acknowledgeErrorMessage: null, records: EMPTY, acquired: [], leaderId, leaderEpoch };
        results.set(k, r);
      }
      return r;
    };
    // Acknowledgements are applied before anything is acquired, so released records can be redelivered at once.
    for (const p of req.partitions) {
      if (p.acks.length === 0) continue;
      const r = resultOf(p);
      const ack = await this.acknowledgeOne(req.groupId, req.memberId, p, outcome.kind === 'ok' && outcome.opened && req.epoch === INITIAL_EPOCH);
      r.acknowledgeErrorCode = ack.errorCode;
      r.acknowledgeErrorMessage = ack.message;
    }
    if (outcome.kind === 'final') {
      if (outcome.session !== null) this.sessions.close(outcome.session);
      return { errorCode: 0, errorMessage: null, lockDurationMs, partitions: [...results.values()] };
    }
    await this.acquireInto(req, outcome.session, resultOf, results);
    return { errorCode: 0, errorMessage: null, lockDurationMs, partitions: [...results.values()] };
  }

  /** ShareAcknowledge: acknowledgements in an open session (epoch > 0), or the final request (-1) that closes it. */
  async shareAcknowledge(groupId: string, memberId: string, epoch: number, partitions: readonly ShareFetchPartition[]): Promise<ShareFetchResult> {
    const lockDurationMs = Number(this.logs.groupConfig(groupId, 'share.record.lock.duration.ms'));
    if (!groupId || !memberId) return { errorCode: ErrorCode.INVALID_REQUEST, errorMessage: 'GroupId and MemberId are required.', lockDurationMs, partitions: [] };
    if (epoch === INITIAL_EPOCH) {
      return { errorCode: ErrorCode.INVALID_SHARE_SESSION_EPOCH, errorMessage: 'Acknowledge requests cannot open a share session.', lockDurationMs, partitions: [] };
    }
    const outcome = this.sessions.begin(groupId, memberId, epoch, [], [], Date.now());
    if (outcome.kind === 'error') return { errorCode: outcome.errorCode, errorMessage: outcome.message, lockDurationMs, partitions: [] };
    const out: SharePartitionResult[] = [];
    for (const p of partitions) {
      const a = await this.acknowledgeOne(groupId, memberId, p, false);
      out.push({ topicId: p.topicId, partition: p.partition, errorCode: a.errorCode, errorMessage: a.message, acknowledgeErrorCode: a.errorCode, acknowledgeErrorMessage: a.message, records: EMPTY, acquired: [], leaderId: a.leaderId, leaderEpoch: a.leaderEpoch });
    }
    if (outcome.kind === 'final' && outcome.session !== null) this.sessions.close(outcome.session);
    return { errorCode: 0, errorMessage: null, lockDurationMs, partitions: out };
  }

  private async acknowledgeOne(groupId: string, memberId: string, p: ShareFetchPartition, fresh: boolean): Promise<{ errorCode: number; message: string | null; leaderId: number; leaderEpoch: number }> {
    const res = await this.logs.resolve(p.topicId, p.partition);
    if (res.errorCode !== 0) return { errorCode: res.errorCode, message: null, leaderId: res.leaderId, leaderEpoch: res.leaderEpoch };
    const sp = this.sharePartition(groupId, p.topicId, p.partition);
    // A new session holds nothing yet: acknowledgements on an initial request are refused.
    if (sp === undefined || fresh) return { errorCode: ErrorCode.INVALID_RECORD_STATE, message: 'No records are acquired here.', leaderId: res.leaderId, leaderEpoch: res.leaderEpoch };
    const r = sp.acknowledge(memberId, p.acks);
    try {
      await this.persist(groupId, p.topicId, p.partition, res.leaderEpoch);
    } catch {
      return { errorCode: ErrorCode.COORDINATOR_NOT_AVAILABLE, message: 'The share-partition state could not be written.', leaderId: res.leaderId, leaderEpoch: res.leaderEpoch };
    }
    return { errorCode: r.errorCode, message: r.message, leaderId: res.leaderId, leaderEpoch: res.leaderEpoch };
  }

  /**
   * The share-partition, loaded from the persister the first time (Kafka's SharePartition
   * initialization by ReadShareGroupState), or started at `share.auto.offset.reset` and written.
   */
  private sharePartitionFor(groupId: string, p: SessionPartition, log: PartitionLog, leaderEpoch: number): Promise<SharePartition> {
    const existing = this.sharePartition(groupId, p.topicId, p.partition);
    if (existing !== undefined) return Promise.resolve(existing);
    const key = `${groupId}\0${partitionKey(p.topicId, p.partition)}`;
    let pending = this.loading.get(key);
    if (pending === undefined) {
      pending = (async () => {
        const saved = this.persister === null ? null : await this.persister.read(groupId, p.topicId, p.partition);
        const already = this.sharePartition(groupId, p.topicId, p.partition);
        if (already !== undefined) return already;
        if (saved !== null) {
          const sp = this.initSharePartition(groupId, p.topicId, p.partition, saved.startOffset, leaderEpoch);
          sp.restore(saved.stateBatches);
          return sp;
        }
        const reset = this.logs.groupConfig(groupId, 'share.auto.offset.reset');
        const sp = this.initSharePartition(groupId, p.topicId, p.partition, reset === 'earliest' ? log.logStartOffset : log.highWatermark, leaderEpoch);
        await this.persist(groupId, p.topicId, p.partition, leaderEpoch);
        return sp;
      })().finally(() => this.loading.delete(key));
      this.loading.set(key, pending);
    }
    return pending;
  }

  /** A share-partition starting afresh at `startOffset` (first fetch, or AlterShareGroupOffsets). */
  initSharePartition(groupId: string, topicId: string, partition: number, startOffset: number, leaderEpoch: number): SharePartition {
    this.dropSharePartition(groupId, topicId, partition);
    const sp = new SharePartition(startOffset, Number(this.logs.groupConfig(groupId, 'share.partition.max.record.locks')), {
      lockDurationMs: () => Number(this.logs.groupConfig(groupId, 'share.record.lock.duration.ms')),
      deliveryCountLimit: () => Number(this.logs.groupConfig(groupId, 'share.delivery.count.limit')),
      onExpired: () => void this.persist(groupId, topicId, partition, leaderEpoch).catch(() => undefined),
    });
    this.partitions.set(`${groupId}\0${partitionKey(topicId, partition)}`, sp);
    return sp;
  }

  /** Reads and acquires across the session's partitions; waits (long poll) while nothing can be acquired. */
  private async acquireInto(req: ShareFetchInput, session: ShareSession, resultOf: (p: SessionPartition, leaderId?: number, leaderEpoch?: number) => SharePartitionResult, results: Map<string, SharePartitionResult>): Promise<void> {
    const deadline = Date.now() + Math.max(0, req.maxWaitMs);
    const targets: { p: SessionPartition; log: PartitionLog; sp: SharePartition; r: SharePartitionResult }[] = [];
    for (const p of session.partitions.values()) {
      const res = await this.logs.resolve(p.topicId, p.partition);
      const r = resultOf(p, res.leaderId, res.leaderEpoch);
      if (res.errorCode !== 0 || res.log === null) {
        r.errorCode = res.errorCode;
        continue;
      }
      targets.push({ p, log: res.log, sp: await this.sharePartitionFor(req.groupId, p, res.log, res.leaderEpoch), r });
    }
    // read_committed (the group's share.isolation.level): acquire only below the last stable offset,
    // and never the records of aborted transactions.
    const readCommitted = this.logs.groupConfig(req.groupId, 'share.isolation.level') === 'read_committed';
    let budgetRecords = Math.max(1, req.maxRecords);
    let budgetBytes = Math.max(1, req.maxBytes);
    let errors = false;
    for (const r of results.values()) if (r.errorCode !== 0) errors = true;
    for (;;) {
      for (const t of targets) {
        if (budgetRecords <= 0 || budgetBytes <= 0) break;
        // One acquisition per partition and request: its records stay one slice of the log read.
        if (t.r.acquired.length > 0) continue;
        const bound = readCommitted ? t.log.lastStableOffset : t.log.highWatermark;
        if (t.sp.startOffset < t.log.logStartOffset) t.sp.resetStart(t.log.logStartOffset);
        if (!t.sp.canAcquire(bound)) continue;
        const from = t.sp.nextFetchOffset();
        const read = await t.log.readToBuffer({ fetchOffset: from, maxOffset: bound, maxBytes: budgetBytes, minOneMessage: true, readCommitted });
        if (read.errorCode === ErrorCode.OFFSET_OUT_OF_RANGE) {
          t.sp.resetStart(t.log.logStartOffset);
          continue;
        }
        if (read.errorCode !== 0) {
          t.r.errorCode = read.errorCode;
          errors = true;
          continue;
        }
        const got = t.sp.acquire(req.memberId, read.records, from, bound, budgetRecords, req.strict, read.abortedTransactions);
        if (got.count === 0) continue;
        t.r.records = got.records;
        t.r.acquired = got.ranges;
        budgetRecords -= got.count;
        budgetBytes -= got.records.length;
      }
      const acquired = targets.some((t) => t.r.acquired.length > 0);
      if (acquired || errors || targets.length === 0 || Date.now() >= deadline || req.signal.aborted) return;
      await this.waitForRecords(targets, deadline, req.signal);
    }
  }

  /** Until a log grows, a record is released, the deadline passes or the connection closes. */
  private waitForRecords(targets: readonly { log: PartitionLog; sp: SharePartition }[], deadline: number, signal: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      const offs: (() => void)[] = [];
      const done = (): void => {
        clearTimeout(timer);
        signal.removeEventListener('abort', done);
        for (const off of offs) off();
        resolve();
      };
      const timer = setTimeout(done, Math.max(0, deadline - Date.now()));
      signal.addEventListener('abort', done);
      for (const t of targets) {
        offs.push(t.log.onAppend(done));
        offs.push(t.sp.onAvailable(done));
      }
    });
  }

  private releaseSession(s: ShareSession): void {
    for (const p of s.partitions.values()) {
      const sp = this.sharePartition(s.groupId, p.topicId, p.partition);
      if (sp === undefined) continue;
      sp.releaseMember(s.memberId);
      this.persist(s.groupId, p.topicId, p.partition, -1).catch(() => undefined);
    }
  }
}
