import type { CoordinatorHost } from './coordinator-host.js';
import { CoordinatorRuntime } from './coordinator-runtime.js';
import type { WriteResult } from './coordinator-runtime.js';
import { CONSUMER_OFFSETS } from './group-coordinator.js';
import type { GroupCoordinator } from './group-coordinator.js';
import { TXN_STATE_NAMES, TxnShard, TxnState, txnRecord } from './txn-shard.js';
import type { TxnMetadata } from './txn-shard.js';
import { ErrorCode } from '../protocol/generated/errors.js';

export const TRANSACTION_STATE = '__transaction_state';

const MAX_EPOCH = 32766;
const tpKey = (topic: string, partition: number): string => `${topic}\0${partition}`;

interface ProducerIdAndEpoch {
  readonly errorCode: number;
  readonly producerId: number;
  readonly producerEpoch: number;
}

/**
 * The transaction coordinator on __transaction_state (Kafka's TransactionCoordinator): producer
 * ids and epochs per transactional id, the partitions of the ongoing transaction, two-phase
 * completion (PrepareCommit/PrepareAbort persisted, markers written to every partition, then
 * CompleteCommit/CompleteAbort), fencing by epoch bumps and aborting transactions that exceed
 * their timeout. A Prepare state found at load is driven to completion again.
 */
export class TxnCoordinator {
  readonly runtime: CoordinatorRuntime<TxnShard>;
  private readonly completing = new Map<string, Promise<number>>();
  private readonly maxTimeoutMs: number;
  private readonly idExpirationMs: number;
  private readonly cleanupIntervalMs: number;

  private constructor(
    private readonly host: CoordinatorHost,
    private readonly groups: GroupCoordinator | null,
  ) {
    const partitions = Number(host.config('transaction.state.log.num.partitions') ?? 50);
    this.maxTimeoutMs = Number(host.config('transaction.max.timeout.ms') ?? 900000);
    this.idExpirationMs = Number(host.config('transactional.id.expiration.ms') ?? 604800000);
    this.cleanupIntervalMs = Number(host.config('transaction.remove.expired.transaction.cleanup.interval.ms') ?? 3600000);
    this.runtime = new CoordinatorRuntime<TxnShard>({
      host,
      topic: TRANSACTION_STATE,
      partitions,
      newShard: (ctx) => new TxnShard(ctx, (shard) => this.resume(shard)),
    });
  }

  static async start(host: CoordinatorHost, groups: GroupCoordinator | null): Promise<TxnCoordinator> {
    const c = new TxnCoordinator(host, groups);
    if (host.partitionCount(TRANSACTION_STATE) !== undefined) await c.runtime.loadAll();
    return c;
  }

  async close(): Promise<void> {
    await Promise.allSettled([...this.completing.values()]);
    await this.runtime.close();
  }

  /** After replay: finish prepared transactions, re-arm timeouts of ongoing ones, start id expiry. */
  private resume(shard: TxnShard): void {
    const now = shard.ctx.now();
    this.scheduleIdExpiry(shard);
    for (const m of shard.txns.values()) {
      if (m.state === TxnState.PREPARE_COMMIT || m.state === TxnState.PREPARE_ABORT) queueMicrotask(() => void this.complete(m.transactionalId));
      else if (m.state === TxnState.ONGOING) this.armTimeout(shard, m, Math.max(0, m.startTimestamp + m.timeoutMs - now));
    }
  }

  /**
   * transactional.id.expiration.ms: an id idle that long with no transaction in flight is
   * forgotten (tombstoned), as Kafka's removeExpiredTransactionalIds does.
   */
  private scheduleIdExpiry(shard: TxnShard): void {
    shard.ctx.scheduleTimer('expire-ids', this.cleanupIntervalMs, (s): WriteResult<void> => {
      this.scheduleIdExpiry(s);
      const now = s.ctx.now();
      const idle = [...s.txns.values()].filter(
        (m) => (m.state === TxnState.EMPTY || m.state === TxnState.COMPLETE_COMMIT || m.state === TxnState.COMPLETE_ABORT) && now - m.lastUpdateTimestamp >= this.idExpirationMs,
      );
      return { records: idle.map((m) => txnRecord(m.transactionalId)), response: undefined, onAppendFailed: () => undefined };
    });
  }

  private armTimeout(shard: TxnShard, m: TxnMetadata, delayMs: number): void {
    const id = m.transactionalId;
    const started = m.startTimestamp;
    shard.ctx.scheduleTimer(`timeout/${id}`, delayMs, (s): WriteResult<void> => {
      const cur = s.txns.get(id);
      if (!cur || cur.state !== TxnState.ONGOING || cur.startTimestamp !== started) return s.none(undefined);
      // Fence the producer (epoch bump) and abort, as Kafka's abortTimedOutTransactions does.
      const next: TxnMetadata = { ...cur, producerEpoch: cur.producerEpoch + 1, state: TxnState.PREPARE_ABORT, lastUpdateTimestamp: s.ctx.now() };
      return { records: [txnRecord(next)], response: undefined, onCommitted: () => queueMicrotask(() => void this.complete(id)) };
    });
  }

  private async allocate(): Promise<number | null> {
    if (!this.host.allocateProducerId) return null;
    return this.host.allocateProducerId();
  }

  async initProducerId(transactionalId: string | null, timeoutMs: number, producerId: number, producerEpoch: number, version: number): Promise<ProducerIdAndEpoch> {
    const fail = (errorCode: number): ProducerIdAndEpoch => ({ errorCode, producerId: -1, producerEpoch: -1 });
    // An empty id is neither idempotent-only (null) nor a transaction: Kafka's
    // TransactionCoordinator answers INVALID_REQUEST.
    if (transactionalId === '') return fail(ErrorCode.INVALID_REQUEST);
    if (transactionalId === null) {
      const id = await this.allocate();
      return id === null ? fail(ErrorCode.COORDINATOR_NOT_AVAILABLE) : { errorCode: 0, producerId: id, producerEpoch: 0 };
    }
    if (timeoutMs <= 0 || timeoutMs > this.maxTimeoutMs) return fail(ErrorCode.INVALID_TRANSACTION_TIMEOUT);
    const fenced = version >= 4 ? ErrorCode.PRODUCER_FENCED : ErrorCode.INVALID_PRODUCER_EPOCH;
    for (let attempt = 0; attempt < 3; attempt++) {
      const existing = await this.runtime.read(transactionalId, (s) => s.txns.get(transactionalId));
      const fresh = !existing || existing.producerEpoch >= MAX_EPOCH ? await this.allocate() : null;
      if ((!existing || existing.producerEpoch >= MAX_EPOCH) && fresh === null) return fail(ErrorCode.COORDINATOR_NOT_AVAILABLE);
      type Step = ProducerIdAndEpoch | 'retry' | 'aborting';
      const step = await this.runtime.write<Step>(transactionalId, (s) => {
        const now = s.ctx.now();
        const m = s.txns.get(transactionalId);
        if (!m) {
          if (fresh === null) return s.none<Step>('retry');
          const next: TxnMetadata = { transactionalId, producerId: fresh, producerEpoch: 0, lastProducerId: -1, lastProducerEpoch: -1, timeoutMs, state: TxnState.EMPTY, partitions: new Set(), startTimestamp: -1, lastUpdateTimestamp: now };
          return s.put<Step>(next, { errorCode: 0, producerId: fresh, producerEpoch: 0 });
        }
        switch (m.state) {
          case TxnState.PREPARE_COMMIT:
          case TxnState.PREPARE_ABORT:
          case TxnState.PREPARE_EPOCH_FENCE:
            return s.none<Step>(fail(ErrorCode.CONCURRENT_TRANSACTIONS));
          case TxnState.ONGOING: {
            const next: TxnMetadata = { ...m, producerEpoch: m.producerEpoch + 1, state: TxnState.PREPARE_ABORT, lastUpdateTimestamp: now };
            return s.put<Step>(next, 'aborting');
          }
          default:
            break;
        }
        if (producerId >= 0) {
          // KIP-360: a producer that knows its id may bump its own epoch, or retry a lost answer.
          if (producerId === m.lastProducerId && producerEpoch === m.lastProducerEpoch) return s.none<Step>({ errorCode: 0, producerId: m.producerId, producerEpoch: m.producerEpoch });
          if (producerId !== m.producerId || producerEpoch !== m.producerEpoch) return s.none<Step>(fail(fenced));
        }
        const roll = m.producerEpoch >= MAX_EPOCH;
        if (roll && fresh === null) return s.none<Step>('retry');
        const next: TxnMetadata = {
          ...m,
          producerId: roll ? fresh! : m.producerId,
          producerEpoch: roll ? 0 : m.producerEpoch + 1,
          timeoutMs,
          state: TxnState.EMPTY,
          partitions: new Set(),
          startTimestamp: -1,
          lastUpdateTimestamp: now,
        };
        return s.put<Step>(next, { errorCode: 0, producerId: next.producerId, producerEpoch: next.producerEpoch });
      });
      if (step === 'retry') continue;
      if (step === 'aborting') {
        // The ongoing transaction is aborted under a bumped epoch; the client retries.
        await this.complete(transactionalId);
        return fail(ErrorCode.CONCURRENT_TRANSACTIONS);
      }
      return step;
    }
    return fail(ErrorCode.CONCURRENT_TRANSACTIONS);
  }

  /** AddPartitionsToTxn / AddOffsetsToTxn: per partition error codes. */
  async addPartitions(transactionalId: string, producerId: number, producerEpoch: number, partitions: readonly { topic: string; partition: number }[], version: number, clientTransactionVersion = 0): Promise<Map<string, number>> {
    const fenced = version >= 2 ? ErrorCode.PRODUCER_FENCED : ErrorCode.INVALID_PRODUCER_EPOCH;
    const all = (code: number): Map<string, number> => new Map(partitions.map((p) => [tpKey(p.topic, p.partition), code]));
    const unknown = partitions.filter((p) => p.topic !== CONSUMER_OFFSETS && !(p.partition >= 0 && p.partition < (this.host.partitionCount(p.topic) ?? 0)));
    return this.runtime.write(transactionalId, (s) => {
      const m = s.txns.get(transactionalId);
      if (!m || m.producerId !== producerId) return s.none(all(ErrorCode.INVALID_PRODUCER_ID_MAPPING));
      if (m.producerEpoch !== producerEpoch) return s.none(all(fenced));
      if (m.state === TxnState.PREPARE_COMMIT || m.state === TxnState.PREPARE_ABORT || m.state === TxnState.PREPARE_EPOCH_FENCE) return s.none(all(ErrorCode.CONCURRENT_TRANSACTIONS));
      if (unknown.length > 0) {
        const out = all(ErrorCode.OPERATION_NOT_ATTEMPTED);
        for (const p of unknown) out.set(tpKey(p.topic, p.partition), ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
        return s.none(out);
      }
      const merged = new Set(m.partitions);
      for (const p of partitions) merged.add(tpKey(p.topic, p.partition));
      if (m.state === TxnState.ONGOING && merged.size === m.partitions.size) return s.none(all(0));
      const now = s.ctx.now();
      const tv = Math.max(m.clientTransactionVersion ?? 0, clientTransactionVersion);
      const next: TxnMetadata = { ...m, state: TxnState.ONGOING, partitions: merged, startTimestamp: m.state === TxnState.ONGOING ? m.startTimestamp : now, lastUpdateTimestamp: now, clientTransactionVersion: tv };
      if (m.state !== TxnState.ONGOING) this.armTimeout(s, next, next.timeoutMs);
      return s.put(next, all(0), (code) => all(code));
    });
  }

  /**
   * AddPartitionsToTxn v4+ with VerifyOnly (KIP-890 part 1): are these partitions in the producer's
   * ongoing transaction? Kafka's TransactionCoordinator.handleVerifyPartitionsInTransaction: an
   * unknown id or producer id is INVALID_PRODUCER_ID_MAPPING, another epoch PRODUCER_FENCED, a
   * transaction being completed CONCURRENT_TRANSACTIONS (all for every partition); otherwise each
   * partition is NONE when it was added and TRANSACTION_ABORTABLE when it was not. Nothing is written.
   */
  async verifyPartitions(transactionalId: string, producerId: number, producerEpoch: number, partitions: readonly { topic: string; partition: number }[]): Promise<Map<string, number>> {
    const all = (code: number): Map<string, number> => new Map(partitions.map((p) => [tpKey(p.topic, p.partition), code]));
    if (transactionalId === '') return all(ErrorCode.INVALID_REQUEST);
    const m = await this.runtime.read(transactionalId, (s) => s.txns.get(transactionalId));
    if (!m || m.producerId !== producerId) return all(ErrorCode.INVALID_PRODUCER_ID_MAPPING);
    if (m.producerEpoch !== producerEpoch) return all(ErrorCode.PRODUCER_FENCED);
    if (m.state === TxnState.PREPARE_COMMIT || m.state === TxnState.PREPARE_ABORT) return all(ErrorCode.CONCURRENT_TRANSACTIONS);
    return new Map(partitions.map((p) => {
      const key = tpKey(p.topic, p.partition);
      return [key, m.partitions.has(key) ? ErrorCode.NONE : ErrorCode.TRANSACTION_ABORTABLE];
    }));
  }

  async addOffsets(transactionalId: string, producerId: number, producerEpoch: number, groupId: string, version: number, clientTransactionVersion = 0): Promise<number> {
    if (!this.groups) return ErrorCode.COORDINATOR_NOT_AVAILABLE;
    const partition = this.groups.partitionFor(groupId);
    const r = await this.addPartitions(transactionalId, producerId, producerEpoch, [{ topic: CONSUMER_OFFSETS, partition }], version, clientTransactionVersion);
    return r.values().next().value ?? 0;
  }

  /**
   * EndTxn. Before v5 (transactions V1) the transaction ends under the producer's epoch. From v5
   * (transactions V2, KIP-890 part 2) every commit or abort bumps the epoch, as Kafka's
   * TransactionMetadata.prepareAbortOrCommit does: the Prepare record carries the bumped epoch,
   * the markers are written with it (so a late write of the old epoch is fenced on every
   * partition), and the answer hands it to the producer for its next transaction. An epoch that
   * would pass 32767 moves the producer to a fresh id (epoch 0) once the markers are written. A
   * V2 retry with the epoch the transaction was ended with is answered with the current id and
   * epoch; a V2 abort with nothing in the transaction still bumps the epoch.
   */
  async endTxn(transactionalId: string, producerId: number, producerEpoch: number, commit: boolean, version: number): Promise<ProducerIdAndEpoch> {
    if (version < 5) return this.endTxnV1(transactionalId, producerId, producerEpoch, commit, version);
    const fail = (errorCode: number): ProducerIdAndEpoch => ({ errorCode, producerId: -1, producerEpoch: -1 });
    const before = await this.runtime.read(transactionalId, (s) => s.txns.get(transactionalId));
    const exhausted = before !== undefined && before.producerId === producerId && before.producerEpoch === producerEpoch && producerEpoch >= MAX_EPOCH;
    const fresh = exhausted ? await this.allocate() : null;
    if (exhausted && fresh === null) return fail(ErrorCode.COORDINATOR_NOT_AVAILABLE);
    type Step = ProducerIdAndEpoch | 'go';
    const step = await this.runtime.write<Step>(transactionalId, (s) => {
      const m = s.txns.get(transactionalId);
      if (!m) return s.none<Step>(fail(ErrorCode.INVALID_PRODUCER_ID_MAPPING));
      const current = (errorCode: number): ProducerIdAndEpoch => (errorCode === 0 ? { errorCode, producerId: m.producerId, producerEpoch: m.producerEpoch } : fail(errorCode));
      const retry = m.endedBy !== undefined && m.endedBy.producerId === producerId && m.endedBy.producerEpoch === producerEpoch;
      if (retry) {
        switch (m.state) {
          case TxnState.PREPARE_COMMIT:
            return s.none<Step>(current(commit ? ErrorCode.CONCURRENT_TRANSACTIONS : ErrorCode.INVALID_TXN_STATE));
          case TxnState.PREPARE_ABORT:
            return s.none<Step>(current(commit ? ErrorCode.INVALID_TXN_STATE : ErrorCode.CONCURRENT_TRANSACTIONS));
          case TxnState.COMPLETE_COMMIT:
            return s.none<Step>(current(commit ? 0 : ErrorCode.INVALID_TXN_STATE));
          case TxnState.COMPLETE_ABORT:
            return s.none<Step>(current(commit ? ErrorCode.INVALID_TXN_STATE : 0));
          default:
            break;
        }
      }
      if (m.producerId !== producerId) return s.none<Step>(fail(ErrorCode.INVALID_PRODUCER_ID_MAPPING));
      if (m.producerEpoch !== producerEpoch) return s.none<Step>(fail(ErrorCode.PRODUCER_FENCED));
      const empty = m.state === TxnState.EMPTY || m.state === TxnState.COMPLETE_COMMIT || m.state === TxnState.COMPLETE_ABORT;
      if (m.state === TxnState.PREPARE_COMMIT || m.state === TxnState.PREPARE_ABORT || m.state === TxnState.PREPARE_EPOCH_FENCE) return s.none<Step>(fail(ErrorCode.CONCURRENT_TRANSACTIONS));
      if (m.state !== TxnState.ONGOING && !(empty && !commit)) return s.none<Step>(fail(ErrorCode.INVALID_TXN_STATE));
      if (m.producerEpoch >= MAX_EPOCH && fresh === null) return s.none<Step>(fail(ErrorCode.CONCURRENT_TRANSACTIONS));
      const next: TxnMetadata = {
        ...m,
        producerEpoch: m.producerEpoch + 1,
        nextProducerId: m.producerEpoch >= MAX_EPOCH ? fresh! : -1,
        clientTransactionVersion: 2,
        state: commit ? TxnState.PREPARE_COMMIT : TxnState.PREPARE_ABORT,
        ...(m.state === TxnState.ONGOING ? {} : { partitions: new Set<string>() }),
        lastUpdateTimestamp: s.ctx.now(),
      };
      s.ctx.cancelTimer(`timeout/${transactionalId}`);
      return s.put<Step>(next, 'go');
    });
    if (step !== 'go') return step;
    const errorCode = await this.complete(transactionalId);
    if (errorCode !== 0) return fail(errorCode);
    const after = await this.runtime.read(transactionalId, (s) => s.txns.get(transactionalId));
    return after ? { errorCode: 0, producerId: after.producerId, producerEpoch: after.producerEpoch } : fail(ErrorCode.INVALID_PRODUCER_ID_MAPPING);
  }

  private async endTxnV1(transactionalId: string, producerId: number, producerEpoch: number, commit: boolean, version: number): Promise<ProducerIdAndEpoch> {
    const fenced = version >= 2 ? ErrorCode.PRODUCER_FENCED : ErrorCode.INVALID_PRODUCER_EPOCH;
    const code = await this.runtime.write<number | 'go'>(transactionalId, (s) => {
      const m = s.txns.get(transactionalId);
      if (!m || m.producerId !== producerId) return s.none<number | 'go'>(ErrorCode.INVALID_PRODUCER_ID_MAPPING);
      if (m.producerEpoch !== producerEpoch) return s.none<number | 'go'>(fenced);
      switch (m.state) {
        case TxnState.ONGOING: {
          const next: TxnMetadata = { ...m, state: commit ? TxnState.PREPARE_COMMIT : TxnState.PREPARE_ABORT, lastUpdateTimestamp: s.ctx.now() };
          s.ctx.cancelTimer(`timeout/${transactionalId}`);
          return s.put<number | 'go'>(next, 'go');
        }
        case TxnState.COMPLETE_COMMIT:
          return s.none<number | 'go'>(commit ? 0 : ErrorCode.INVALID_TXN_STATE);
        case TxnState.COMPLETE_ABORT:
          return s.none<number | 'go'>(commit ? ErrorCode.INVALID_TXN_STATE : 0);
        case TxnState.PREPARE_COMMIT:
          return s.none<number | 'go'>(commit ? ErrorCode.CONCURRENT_TRANSACTIONS : ErrorCode.INVALID_TXN_STATE);
        case TxnState.PREPARE_ABORT:
          return s.none<number | 'go'>(commit ? ErrorCode.INVALID_TXN_STATE : ErrorCode.CONCURRENT_TRANSACTIONS);
        default:
          return s.none<number | 'go'>(ErrorCode.INVALID_TXN_STATE);
      }
    });
    const errorCode = code === 'go' ? await this.complete(transactionalId) : code;
    return { errorCode, producerId, producerEpoch };
  }

  /** Writes the markers of a prepared transaction to all its partitions, then completes it. */
  private complete(transactionalId: string): Promise<number> {
    let p = this.completing.get(transactionalId);
    if (!p) {
      p = this.writeMarkersAndComplete(transactionalId).finally(() => this.completing.delete(transactionalId));
      this.completing.set(transactionalId, p);
    }
    return p;
  }

  private async writeMarkersAndComplete(transactionalId: string): Promise<number> {
    const m = await this.runtime.read(transactionalId, (s) => s.txns.get(transactionalId));
    if (!m || (m.state !== TxnState.PREPARE_COMMIT && m.state !== TxnState.PREPARE_ABORT)) return 0;
    const commit = m.state === TxnState.PREPARE_COMMIT;
    // Kafka's coordinator epoch is the leader epoch of the coordinator's partition: a marker from
    // a coordinator deposed since is refused (TRANSACTION_COORDINATOR_FENCED) by the data partition.
    const coordinatorEpoch = Math.max(0, this.host.leadership?.leaderEpoch(TRANSACTION_STATE, this.runtime.partitionFor(transactionalId)) ?? 0);
    const marker = { producerId: m.producerId, producerEpoch: m.producerEpoch, coordinatorEpoch, commit, transactionVersion: m.clientTransactionVersion ?? 0 };
    const writeOne = async (tp: string): Promise<number> => {
      const [topic, p] = tp.split('\0') as [string, string];
      const partition = Number(p);
      if (topic === CONSUMER_OFFSETS) {
        // The group coordinator applies its own markers; one on another node gets WriteTxnMarkers.
        const leader = this.host.leadership?.leaderEndpoint(CONSUMER_OFFSETS, partition);
        if (leader !== undefined && leader !== null && leader.nodeId !== this.host.nodeId && this.host.writeTxnMarker) return this.host.writeTxnMarker(topic, partition, marker);
        return this.groups ? this.groups.completeTransaction(partition, m.producerId, m.producerEpoch, commit) : 0;
      }
      if (!this.host.writeTxnMarker) return ErrorCode.COORDINATOR_NOT_AVAILABLE;
      const code = await this.host.writeTxnMarker(topic, partition, marker);
      // A deleted partition has nothing left to mark; nor has a mirrored one, whose log holds
      // the source's records only (a client's records never landed there).
      return code === ErrorCode.UNKNOWN_TOPIC_OR_PARTITION || code === ErrorCode.READ_ONLY_TOPIC ? 0 : code;
    };
    let pending = [...m.partitions];
    for (let attempt = 0; pending.length > 0; attempt++) {
      const codes = await Promise.all(pending.map((tp) => writeOne(tp).catch(() => ErrorCode.COORDINATOR_NOT_AVAILABLE)));
      pending = pending.filter((_, i) => codes[i] !== 0);
      if (pending.length === 0) break;
      if (attempt >= 20) return ErrorCode.COORDINATOR_NOT_AVAILABLE;
      await new Promise((r) => setTimeout(r, Math.min(1000, 50 * 2 ** attempt)));
    }
    return this.runtime.write(transactionalId, (s) => {
      const cur = s.txns.get(transactionalId);
      if (!cur || cur.state !== m.state || cur.producerEpoch !== m.producerEpoch) return s.none(0);
      // A V2 epoch that reached 32767 continues under the id chosen at Prepare, from epoch 0.
      const rotate = (cur.nextProducerId ?? -1) >= 0 ? { producerId: cur.nextProducerId!, producerEpoch: 0, nextProducerId: -1 } : {};
      const next: TxnMetadata = { ...cur, ...rotate, state: commit ? TxnState.COMPLETE_COMMIT : TxnState.COMPLETE_ABORT, partitions: new Set(), lastUpdateTimestamp: s.ctx.now() };
      return s.put(next, 0);
    });
  }

  async listTransactions(states: readonly string[], producerIds: readonly number[], minDurationMs: number): Promise<{ transactionalId: string; producerId: number; state: string }[]> {
    if (this.host.partitionCount(TRANSACTION_STATE) !== undefined) await this.runtime.loadAll();
    const now = this.host.clock.now();
    const wantStates = new Set(states);
    const wantIds = new Set(producerIds);
    const out: { transactionalId: string; producerId: number; state: string }[] = [];
    for (const txns of await this.runtime.readAll((shard) => [...shard.txns.values()])) {
      for (const m of txns) {
        const state = TXN_STATE_NAMES[m.state] ?? 'Unknown';
        if (wantStates.size > 0 && !wantStates.has(state)) continue;
        if (wantIds.size > 0 && !wantIds.has(m.producerId)) continue;
        if (minDurationMs >= 0 && !(m.state === TxnState.ONGOING && now - m.startTimestamp >= minDurationMs)) continue;
        out.push({ transactionalId: m.transactionalId, producerId: m.producerId, state });
      }
    }
    return out.sort((a, b) => (a.transactionalId < b.transactionalId ? -1 : 1));
  }

  async describe(transactionalId: string): Promise<TxnMetadata | undefined> {
    return this.runtime.read(transactionalId, (s) => s.txns.get(transactionalId));
  }
}
