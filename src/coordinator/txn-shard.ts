import { Reader } from '../protocol/reader.js';
import { Writer } from '../protocol/writer.js';
import { encodeTransactionLogKey, decodeTransactionLogKey } from '../protocol/generated/messages/transaction-log-key.js';
import { encodeTransactionLogValue, decodeTransactionLogValue } from '../protocol/generated/messages/transaction-log-value.js';
import type { CoordinatorRecord, ReplayedRecord } from './coordinator-batch.js';
import type { CoordinatorShard, ShardContext, WriteResult } from './coordinator-runtime.js';
import { SnapshotMap, SnapshotRegistry } from './snapshot-registry.js';

/**
 * One __transaction_state partition's transactional ids (Kafka's TransactionMetadata), kept as
 * the replay of TransactionLogValue records: every state change is a record, applied once
 * committed.
 */
export const TxnState = {
  EMPTY: 0,
  ONGOING: 1,
  PREPARE_COMMIT: 2,
  PREPARE_ABORT: 3,
  COMPLETE_COMMIT: 4,
  COMPLETE_ABORT: 5,
  DEAD: 6,
  PREPARE_EPOCH_FENCE: 7,
} as const;
export type TxnState = (typeof TxnState)[keyof typeof TxnState];

export const TXN_STATE_NAMES: readonly string[] = ['Empty', 'Ongoing', 'PrepareCommit', 'PrepareAbort', 'CompleteCommit', 'CompleteAbort', 'Dead', 'PrepareEpochFence'];

export interface TxnMetadata {
  readonly transactionalId: string;
  readonly producerId: number;
  readonly producerEpoch: number;
  /** The id/epoch handed out before the last bump, for InitProducerId retries (KIP-360). */
  readonly lastProducerId: number;
  readonly lastProducerEpoch: number;
  readonly timeoutMs: number;
  readonly state: TxnState;
  /** "topic\0partition" of every partition in the ongoing transaction. */
  readonly partitions: ReadonlySet<string>;
  readonly startTimestamp: number;
  readonly lastUpdateTimestamp: number;
  /**
   * 2 when the transaction is run by a transactions V2 client (KIP-890 part 2: EndTxn v5+, which
   * bumps the epoch on every commit or abort); 0 or absent for V1.
   */
  readonly clientTransactionVersion?: number;
  /**
   * The id a V2 producer continues with after a Prepare state whose bumped epoch reached 32767
   * (Kafka's TransactionMetadata nextProducerId); -1 or absent otherwise.
   */
  readonly nextProducerId?: number;
  /**
   * In memory only (rebuilt by replay): the id and epoch the EndTxn that prepared the current or
   * last completion was sent with, so a V2 retry of it is answered instead of fenced.
   */
  readonly endedBy?: { readonly producerId: number; readonly producerEpoch: number };
}

const isPrepare = (s: number): boolean => s === TxnState.PREPARE_COMMIT || s === TxnState.PREPARE_ABORT;
const isComplete = (s: number): boolean => s === TxnState.COMPLETE_COMMIT || s === TxnState.COMPLETE_ABORT;

export function txnRecord(m: TxnMetadata | string): CoordinatorRecord {
  const id = typeof m === 'string' ? m : m.transactionalId;
  const k = new Writer(64).int16(0);
  encodeTransactionLogKey(k, { transactionalId: id }, 0);
  if (typeof m === 'string') return { key: k.toBuffer(), value: null };
  const byTopic = new Map<string, number[]>();
  for (const tp of m.partitions) {
    const [topic, p] = tp.split('\0') as [string, string];
    byTopic.set(topic, [...(byTopic.get(topic) ?? []), Number(p)]);
  }
  // Kafka writes value v1 (flexible, with the tagged V2 fields) once a client uses transactions V2.
  const tv = m.clientTransactionVersion ?? 0;
  const nextProducerId = m.nextProducerId ?? -1;
  const version = tv >= 2 || nextProducerId >= 0 ? 1 : 0;
  const v = new Writer(256).int16(version);
  encodeTransactionLogValue(
    v,
    {
      ...(version >= 1 ? { nextProducerId: BigInt(nextProducerId), clientTransactionVersion: tv } : {}),
      producerId: BigInt(m.producerId),
      producerEpoch: m.producerEpoch,
      transactionTimeoutMs: m.timeoutMs,
      transactionStatus: m.state,
      transactionPartitions: [...byTopic].map(([topic, partitionIds]) => ({ topic, partitionIds })),
      transactionLastUpdateTimestampMs: BigInt(m.lastUpdateTimestamp),
      transactionStartTimestampMs: BigInt(m.startTimestamp),
    },
    version,
  );
  return { key: k.toBuffer(), value: v.toBuffer() };
}

export class TxnShard implements CoordinatorShard {
  readonly snapshots = new SnapshotRegistry();
  /** Values are replaced, never changed in place. */
  readonly txns = new SnapshotMap<string, TxnMetadata>(this.snapshots);
  /** The id/epoch before the last bump is not in the v0 record; kept in memory for retries. */
  private loaded = false;

  constructor(
    readonly ctx: ShardContext<TxnShard>,
    private readonly onLoadedCb: (shard: TxnShard) => void,
  ) {}

  replay(record: ReplayedRecord): void {
    const r = new Reader(record.key);
    if (r.int16() !== 0) return;
    const { transactionalId } = decodeTransactionLogKey(r, 0);
    if (record.value === null) {
      this.txns.delete(transactionalId);
      return;
    }
    const vr = new Reader(record.value);
    const v = decodeTransactionLogValue(vr, vr.int16());
    const prev = this.txns.get(transactionalId);
    const partitions = new Set<string>();
    for (const t of v.transactionPartitions ?? []) for (const p of t.partitionIds) partitions.add(`${t.topic}\0${p}`);
    const producerId = Number(v.producerId);
    const bumped = prev !== undefined && (prev.producerId !== producerId || prev.producerEpoch !== v.producerEpoch);
    const state = v.transactionStatus as TxnState;
    let endedBy: TxnMetadata['endedBy'];
    if (prev !== undefined && isPrepare(state) && !isPrepare(prev.state)) endedBy = { producerId: prev.producerId, producerEpoch: prev.producerEpoch };
    else if (prev !== undefined && (isPrepare(state) || isComplete(state))) endedBy = prev.endedBy;
    this.txns.set(transactionalId, {
      transactionalId,
      producerId,
      producerEpoch: v.producerEpoch,
      lastProducerId: bumped ? prev.producerId : (prev?.lastProducerId ?? -1),
      lastProducerEpoch: bumped ? prev.producerEpoch : (prev?.lastProducerEpoch ?? -1),
      timeoutMs: v.transactionTimeoutMs,
      state,
      partitions,
      startTimestamp: Number(v.transactionStartTimestampMs),
      lastUpdateTimestamp: Number(v.transactionLastUpdateTimestampMs),
      clientTransactionVersion: v.clientTransactionVersion,
      nextProducerId: Number(v.nextProducerId),
      ...(endedBy !== undefined ? { endedBy } : {}),
    });
  }

  onLoaded(): void {
    this.loaded = true;
    this.onLoadedCb(this);
  }

  get isLoaded(): boolean {
    return this.loaded;
  }

  /** A write that persists `next` (the new metadata) and answers `response`. */
  put<T>(next: TxnMetadata, response: T, onAppendFailed?: (code: number) => T): WriteResult<T> {
    return onAppendFailed ? { records: [txnRecord(next)], response, onAppendFailed } : { records: [txnRecord(next)], response };
  }

  none<T>(response: T): WriteResult<T> {
    return { records: [], response };
  }
}
