/**
 * How a partition leader checks a transactional write with the producer's transaction
 * coordinator before appending it, as Kafka's AddPartitionsToTxnManager does (KIP-890):
 *
 * - transactions V1 (Produce v11 and older, TxnOffsetCommit v4 and older), part 1: the coordinator
 *   is asked whether the partition is in the ongoing transaction (AddPartitionsToTxn v4+ with
 *   VerifyOnly); a partition the producer never added is refused, so a late or stray write
 *   cannot open a transaction nobody will ever end;
 * - transactions V2 (Produce v12+, TxnOffsetCommit v5+), part 2: the coordinator adds the partition
 *   to the transaction (VerifyOnly=false), which the producer no longer does itself.
 *
 * When this node serves the coordinator's `__transaction_state` partition (always, on a node
 * alone) the coordinator is called in process. Otherwise the check goes over the node's
 * inter-broker connection to the partition's leader, batched per coordinator node: at most one
 * AddPartitionsToTxn in flight per node, and whatever arrives meanwhile waits for the next one
 * (one entry per transactional id; Kafka's rules for a second entry of the same id apply).
 *
 * The coordinator's answer is mapped as Kafka maps it: PRODUCER_FENCED → INVALID_PRODUCER_EPOCH,
 * TRANSACTION_ABORTABLE → INVALID_TXN_STATE for clients that predate it (Produce v10 and older,
 * TxnOffsetCommit v4 and older), a refused inter-broker request (CLUSTER_AUTHORIZATION_FAILED) →
 * INVALID_TXN_STATE, a lost connection → NETWORK_EXCEPTION. `forProduce` then turns the result
 * into the produce answer as Kafka's ReplicaManager does.
 *
 * Concurrency contract: event loop only; the pending batches and in-flight flags are touched
 * synchronously between awaits.
 */
import { BrokerClients } from '../client/broker-clients.js';
import type { ApiSpec } from '../client/apis.js';
import type { TxnCoordinator } from '../coordinator/txn-coordinator.js';
import { TRANSACTION_STATE } from '../coordinator/txn-coordinator.js';
import { ApiKey } from '../protocol/generated/api-table.js';
import { ERRORS, ErrorCode } from '../protocol/generated/errors.js';
import { encodeAddPartitionsToTxnRequest, type AddPartitionsToTxnRequestInput } from '../protocol/generated/messages/add-partitions-to-txn-request.js';
import { decodeAddPartitionsToTxnResponse, type AddPartitionsToTxnResponse } from '../protocol/generated/messages/add-partitions-to-txn-response.js';
import { errorCodeOf } from '../protocol/kafka-error.js';
import type { BrokerContext } from './broker-context.js';

const ADD_PARTITIONS_TO_TXN: ApiSpec<AddPartitionsToTxnRequestInput, AddPartitionsToTxnResponse> = {
  apiKey: ApiKey.AddPartitionsToTxn,
  versions: [4, 5],
  encode: encodeAddPartitionsToTxnRequest,
  decode: decodeAddPartitionsToTxnResponse,
};

/**
 * What the client's request version supports (Kafka's TransactionSupportedOperation):
 * DEFAULT_ERROR verifies and answers INVALID_TXN_STATE for a partition not in the transaction,
 * GENERIC_ERROR verifies and answers TRANSACTION_ABORTABLE (Produce v11), ADD_PARTITION adds it
 * (transactions V2).
 */
export const TxnOperation = { DEFAULT_ERROR: 0, GENERIC_ERROR: 1, ADD_PARTITION: 2 } as const;
export type TxnOperation = (typeof TxnOperation)[keyof typeof TxnOperation];

export interface TxnPartitionCheck {
  readonly transactionalId: string;
  readonly producerId: number;
  readonly producerEpoch: number;
  readonly topic: string;
  readonly partition: number;
  readonly operation: TxnOperation;
}

/** Kafka's addPartitionsToTxn retry backoff and its cap (AddPartitionsToTxnConfig defaults). */
const CONCURRENT_RETRY_BACKOFF_MS = 20;
const CONCURRENT_RETRY_MAX_MS = 100;

const tpKey = (topic: string, partition: number): string => `${topic}\0${partition}`;

interface Waiter {
  readonly key: string;
  readonly operation: TxnOperation;
  readonly resolve: (code: number) => void;
}

interface PendingTxn {
  producerId: number;
  producerEpoch: number;
  verifyOnly: boolean;
  readonly partitions: Map<string, { topic: string; partition: number }>;
  readonly waiters: Waiter[];
}

interface NodeQueue {
  inFlight: boolean;
  pending: Map<string, PendingTxn>;
}

/** The coordinator's per-partition code as the partition leader passes it on (see the header). */
function mapCoordinatorCode(code: number, operation: TxnOperation): number {
  if (code === ErrorCode.PRODUCER_FENCED) return ErrorCode.INVALID_PRODUCER_EPOCH;
  if (code === ErrorCode.TRANSACTION_ABORTABLE && operation === TxnOperation.DEFAULT_ERROR) return ErrorCode.INVALID_TXN_STATE;
  return code;
}

export class AddPartitionsToTxnManager {
  private readonly clients: BrokerClients;
  private readonly nodes = new Map<number, NodeQueue>();
  private closed = false;

  constructor(
    private readonly ctx: BrokerContext,
    private readonly coordinator: TxnCoordinator,
  ) {
    this.clients = new BrokerClients(`fjord-add-partitions-to-txn-${ctx.nodeId}`, ctx.interBrokerSecurity);
  }

  /** Verifies or adds one partition; resolves to its error code after the mapping of the header. */
  async addOrVerify(c: TxnPartitionCheck): Promise<number> {
    const p = this.coordinator.runtime.partitionFor(c.transactionalId);
    const where = this.coordinatorNode(p);
    if (where === 'local') return mapCoordinatorCode(await this.local(c), c.operation);
    if (where === null) return ErrorCode.COORDINATOR_NOT_AVAILABLE;
    return this.remote(where.nodeId, where.host, where.port, c);
  }

  /**
   * The produce path's check (Kafka's ReplicaManager.handleProduceAppend): resolves to the code and
   * message of the partition's answer, 0 when the batch may be appended. A transactions V2 add
   * that meets CONCURRENT_TRANSACTIONS (the previous transaction's markers are still being
   * written) is retried for up to 100 ms before the error is answered.
   */
  async forProduce(c: TxnPartitionCheck): Promise<{ errorCode: number; errorMessage: string | null }> {
    const supportsEpochBump = c.operation === TxnOperation.ADD_PARTITION;
    const start = Date.now();
    let code = await this.addOrVerify(c);
    while (supportsEpochBump && code === ErrorCode.CONCURRENT_TRANSACTIONS && !this.closed && Date.now() - start < CONCURRENT_RETRY_MAX_MS) {
      await new Promise<void>((r) => setTimeout(r, CONCURRENT_RETRY_BACKOFF_MS));
      code = await this.addOrVerify(c);
    }
    switch (code) {
      case ErrorCode.NONE:
        return { errorCode: 0, errorMessage: null };
      case ErrorCode.INVALID_TXN_STATE:
        return { errorCode: code, errorMessage: 'Partition was not added to the transaction' };
      case ErrorCode.NETWORK_EXCEPTION:
      case ErrorCode.COORDINATOR_LOAD_IN_PROGRESS:
      case ErrorCode.COORDINATOR_NOT_AVAILABLE:
      case ErrorCode.NOT_COORDINATOR:
        return unverified(code);
      case ErrorCode.CONCURRENT_TRANSACTIONS:
        // Still completing after the retries: NOT_ENOUGH_REPLICAS, which every producer retries in
        // order (the Java 4.4 producer aborted its transaction on the error itself on a cluster).
        return unverified(code);
      default:
        return { errorCode: code, errorMessage: null };
    }
  }

  close(): void {
    this.closed = true;
    for (const q of this.nodes.values()) {
      for (const t of q.pending.values()) for (const w of t.waiters) w.resolve(ErrorCode.NETWORK_EXCEPTION);
      q.pending.clear();
    }
    this.clients.close();
  }

  /** 'local' when this node serves the shard (or is alone), null when the shard has no live leader. */
  private coordinatorNode(p: number): 'local' | { nodeId: number; host: string; port: number } | null {
    if (!this.ctx.cluster.distributed) return 'local';
    const leader = this.ctx.image.topic(TRANSACTION_STATE)?.partitions[p]?.leader;
    if (leader === undefined || leader < 0) return null;
    if (leader === this.ctx.nodeId) return 'local';
    const b = this.ctx.cluster.liveBrokers().find((x) => x.nodeId === leader);
    return b === undefined ? null : { nodeId: b.nodeId, host: b.host, port: b.port };
  }

  /** The coordinator's own code for the partition, served here. */
  private async local(c: TxnPartitionCheck): Promise<number> {
    const parts = [{ topic: c.topic, partition: c.partition }];
    try {
      const codes = c.operation === TxnOperation.ADD_PARTITION
        ? await this.coordinator.addPartitions(c.transactionalId, c.producerId, c.producerEpoch, parts, 5, 2)
        : await this.coordinator.verifyPartitions(c.transactionalId, c.producerId, c.producerEpoch, parts);
      return codes.get(tpKey(c.topic, c.partition)) ?? ErrorCode.UNKNOWN_SERVER_ERROR;
    } catch (e) {
      return errorCodeOf(e);
    }
  }

  /** Queues the check for the coordinator node's next AddPartitionsToTxn (Kafka's addTxnData). */
  private remote(nodeId: number, host: string, port: number, c: TxnPartitionCheck): Promise<number> {
    if (this.closed) return Promise.resolve(ErrorCode.NETWORK_EXCEPTION);
    let q = this.nodes.get(nodeId);
    if (q === undefined) this.nodes.set(nodeId, (q = { inFlight: false, pending: new Map() }));
    const verifyOnly = c.operation !== TxnOperation.ADD_PARTITION;
    const key = tpKey(c.topic, c.partition);
    return new Promise<number>((resolve) => {
      const queue = q;
      const existing = queue.pending.get(c.transactionalId);
      if (existing !== undefined && (existing.producerEpoch !== c.producerEpoch || existing.producerId !== c.producerId || existing.verifyOnly !== verifyOnly)) {
        // Kafka's three cases: a lower epoch is fenced at once; a higher one fences the queued
        // entry; the same epoch (a retry) sends the queued one back with a retriable error.
        if (existing.producerEpoch > c.producerEpoch) {
          resolve(ErrorCode.INVALID_PRODUCER_EPOCH);
          return;
        }
        const code = existing.producerEpoch < c.producerEpoch ? ErrorCode.INVALID_PRODUCER_EPOCH : ErrorCode.NETWORK_EXCEPTION;
        for (const w of existing.waiters) w.resolve(code);
        queue.pending.delete(c.transactionalId);
      }
      let txn = queue.pending.get(c.transactionalId);
      if (txn === undefined) {
        txn = { producerId: c.producerId, producerEpoch: c.producerEpoch, verifyOnly, partitions: new Map(), waiters: [] };
        queue.pending.set(c.transactionalId, txn);
      }
      txn.partitions.set(key, { topic: c.topic, partition: c.partition });
      txn.waiters.push({ key, operation: c.operation, resolve });
      if (!queue.inFlight) {
        queue.inFlight = true;
        // Let the rest of this request's partitions join the batch.
        setImmediate(() => void this.flush(nodeId, host, port, queue));
      }
    });
  }

  /** Sends what is queued for `nodeId`, then again while more arrived meanwhile. */
  private async flush(nodeId: number, host: string, port: number, q: NodeQueue): Promise<void> {
    while (q.pending.size > 0 && !this.closed) {
      const batch = q.pending;
      q.pending = new Map();
      const transactions = [...batch].map(([transactionalId, t]) => {
        const byTopic = new Map<string, number[]>();
        for (const { topic, partition } of t.partitions.values()) byTopic.set(topic, [...(byTopic.get(topic) ?? []), partition]);
        return {
          transactionalId,
          producerId: BigInt(t.producerId),
          producerEpoch: t.producerEpoch,
          verifyOnly: t.verifyOnly,
          topics: [...byTopic].map(([name, partitions]) => ({ name, partitions })),
        };
      });
      let res: AddPartitionsToTxnResponse | null = null;
      try {
        res = await this.clients.clientFor(nodeId, host, port).send(ADD_PARTITIONS_TO_TXN, { transactions });
      } catch {
        // The coordinator is unreachable (killed, restarting): the producer retries.
        this.clients.forget(nodeId);
      }
      for (const [transactionalId, t] of batch) {
        if (res === null) {
          for (const w of t.waiters) w.resolve(ErrorCode.NETWORK_EXCEPTION);
          continue;
        }
        if (res.errorCode !== 0) {
          // The client must not see CLUSTER_AUTHORIZATION_FAILED: the verification did not complete.
          const code = res.errorCode === ErrorCode.CLUSTER_AUTHORIZATION_FAILED ? ErrorCode.INVALID_TXN_STATE : res.errorCode;
          for (const w of t.waiters) w.resolve(code);
          continue;
        }
        const codes = new Map<string, number>();
        for (const tr of res.resultsByTransaction.find((r) => r.transactionalId === transactionalId)?.topicResults ?? []) {
          for (const pr of tr.resultsByPartition) codes.set(tpKey(tr.name, pr.partitionIndex), pr.partitionErrorCode);
        }
        // As in Kafka, a partition the answer does not name is not refused.
        for (const w of t.waiters) w.resolve(mapCoordinatorCode(codes.get(w.key) ?? ErrorCode.NONE, w.operation));
      }
    }
    q.inFlight = false;
  }
}

function unverified(code: number): { errorCode: number; errorMessage: string } {
  const name = ERRORS.get(code)?.name ?? String(code);
  return { errorCode: ErrorCode.NOT_ENOUGH_REPLICAS, errorMessage: `Unable to verify the partition has been added to the transaction. Underlying error: ${name}` };
}
