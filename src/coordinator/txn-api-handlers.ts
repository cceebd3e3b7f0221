import type { ApiHandler } from '../server/api-handler.js';
import { decodeInitProducerIdRequest } from '../protocol/generated/messages/init-producer-id-request.js';
import type { InitProducerIdRequest } from '../protocol/generated/messages/init-producer-id-request.js';
import { encodeInitProducerIdResponse } from '../protocol/generated/messages/init-producer-id-response.js';
import type { InitProducerIdResponseInput } from '../protocol/generated/messages/init-producer-id-response.js';
import { decodeAddPartitionsToTxnRequest } from '../protocol/generated/messages/add-partitions-to-txn-request.js';
import type { AddPartitionsToTxnRequest } from '../protocol/generated/messages/add-partitions-to-txn-request.js';
import { encodeAddPartitionsToTxnResponse } from '../protocol/generated/messages/add-partitions-to-txn-response.js';
import type { AddPartitionsToTxnResponseInput } from '../protocol/generated/messages/add-partitions-to-txn-response.js';
import { decodeAddOffsetsToTxnRequest } from '../protocol/generated/messages/add-offsets-to-txn-request.js';
import type { AddOffsetsToTxnRequest } from '../protocol/generated/messages/add-offsets-to-txn-request.js';
import { encodeAddOffsetsToTxnResponse } from '../protocol/generated/messages/add-offsets-to-txn-response.js';
import type { AddOffsetsToTxnResponseInput } from '../protocol/generated/messages/add-offsets-to-txn-response.js';
import { decodeEndTxnRequest } from '../protocol/generated/messages/end-txn-request.js';
import type { EndTxnRequest } from '../protocol/generated/messages/end-txn-request.js';
import { encodeEndTxnResponse } from '../protocol/generated/messages/end-txn-response.js';
import type { EndTxnResponseInput } from '../protocol/generated/messages/end-txn-response.js';
import { decodeTxnOffsetCommitRequest } from '../protocol/generated/messages/txn-offset-commit-request.js';
import type { TxnOffsetCommitRequest } from '../protocol/generated/messages/txn-offset-commit-request.js';
import { encodeTxnOffsetCommitResponse } from '../protocol/generated/messages/txn-offset-commit-response.js';
import type { TxnOffsetCommitResponseInput } from '../protocol/generated/messages/txn-offset-commit-response.js';
import { decodeListTransactionsRequest } from '../protocol/generated/messages/list-transactions-request.js';
import type { ListTransactionsRequest } from '../protocol/generated/messages/list-transactions-request.js';
import { encodeListTransactionsResponse } from '../protocol/generated/messages/list-transactions-response.js';
import type { ListTransactionsResponseInput } from '../protocol/generated/messages/list-transactions-response.js';
import { decodeDescribeTransactionsRequest } from '../protocol/generated/messages/describe-transactions-request.js';
import type { DescribeTransactionsRequest } from '../protocol/generated/messages/describe-transactions-request.js';
import { encodeDescribeTransactionsResponse } from '../protocol/generated/messages/describe-transactions-response.js';
import type { DescribeTransactionsResponseInput } from '../protocol/generated/messages/describe-transactions-response.js';
import { decodeWriteTxnMarkersRequest } from '../protocol/generated/messages/write-txn-markers-request.js';
import type { WriteTxnMarkersRequest } from '../protocol/generated/messages/write-txn-markers-request.js';
import { encodeWriteTxnMarkersResponse } from '../protocol/generated/messages/write-txn-markers-response.js';
import type { WriteTxnMarkersResponseInput } from '../protocol/generated/messages/write-txn-markers-response.js';
import type { CoordinatorHost } from './coordinator-host.js';
import { CONSUMER_OFFSETS } from './group-coordinator.js';
import { errorCodeOf } from '../protocol/kafka-error.js';
import type { GroupCoordinator } from './group-coordinator.js';
import { TXN_STATE_NAMES } from './txn-shard.js';
import { TxnCoordinator } from './txn-coordinator.js';
import { ErrorCode } from '../protocol/generated/errors.js';

/**
 * How a partition leader checks a transactional write with the producer's transaction
 * coordinator, wherever it runs (the node's AddPartitionsToTxnManager): `operation` 2 adds the
 * partition (transactions V2), 0 and 1 verify it is in the transaction (1: the client understands
 * TRANSACTION_ABORTABLE). Resolves to the partition's error code, mapped as Kafka's partition
 * leader maps it (PRODUCER_FENCED → INVALID_PRODUCER_EPOCH, ...).
 */
interface TxnPartitionChannel {
  addOrVerify(check: { transactionalId: string; producerId: number; producerEpoch: number; topic: string; partition: number; operation: 0 | 1 | 2 }): Promise<number>;
}

/**
 * The transaction APIs served by this node's transaction coordinator. InitProducerId replaces
 * the node's idempotent-only handler (null transactional ids still get a fresh id from
 * `host.allocateProducerId`). TxnOffsetCommit goes to the group coordinator, which holds the
 * offsets until the transaction's marker reaches its __consumer_offsets partition; it first has
 * the group's __consumer_offsets partition verified (v4 and older) or added (v5+, transactions V2)
 * through `channel` (`setChannel`; by default this node's coordinator in process).
 *
 * Transactions V2 (KIP-890 part 2) is served to clients: EndTxn v5 bumps the epoch, TxnOffsetCommit
 * v5 and Produce v12+ (src/broker/apis/000-produce.ts) add partitions without AddPartitionsToTxn.
 * AddPartitionsToTxn v4+ is the inter-broker request partition leaders send to verify or add
 * partitions (KIP-890), batched by transaction.
 */
export async function createTxnApiHandlers(host: CoordinatorHost, groups: GroupCoordinator | null = null): Promise<{ handlers: ApiHandler[]; close(): Promise<void>; coordinator: TxnCoordinator; setChannel(channel: TxnPartitionChannel): void }> {
  const tc = await TxnCoordinator.start(host, groups);
  const key = (topic: string, partition: number): string => `${topic}\0${partition}`;
  let channel: TxnPartitionChannel = {
    async addOrVerify(c) {
      const parts = [{ topic: c.topic, partition: c.partition }];
      let code: number;
      try {
        const codes = c.operation === 2 ? await tc.addPartitions(c.transactionalId, c.producerId, c.producerEpoch, parts, 5, 2) : await tc.verifyPartitions(c.transactionalId, c.producerId, c.producerEpoch, parts);
        code = codes.get(key(c.topic, c.partition)) ?? ErrorCode.UNKNOWN_SERVER_ERROR;
      } catch (e) {
        code = errorCodeOf(e);
      }
      if (code === ErrorCode.PRODUCER_FENCED) return ErrorCode.INVALID_PRODUCER_EPOCH;
      return code === ErrorCode.TRANSACTION_ABORTABLE && c.operation === 0 ? ErrorCode.INVALID_TXN_STATE : code;
    },
  };

  /* InitProducerId v0-5: transactional ids get a persisted id and a bumped epoch (v3+: KIP-360 bumps by the producer). */
  const initProducerId: ApiHandler<InitProducerIdRequest, InitProducerIdResponseInput> = {
    apiKey: 22, minVersion: 0, maxVersion: 5, decode: decodeInitProducerIdRequest, encode: encodeInitProducerIdResponse,
    async handle(ctx, req) {
      try {
        const r = await tc.initProducerId(req.transactionalId, req.transactionTimeoutMs, Number(req.producerId), req.producerEpoch, ctx.apiVersion);
        return { errorCode: r.errorCode, producerId: BigInt(r.producerId), producerEpoch: r.producerEpoch };
      } catch (e) {
        return { errorCode: errorCodeOf(e), producerId: -1n, producerEpoch: -1 };
      }
    },
  };

  /*
   * AddPartitionsToTxn v0-5. v0-3: one transaction, from its producer. v4+ (KIP-890): from a
   * partition leader, any number of transactions; VerifyOnly asks whether the partitions are in
   * the transaction (TRANSACTION_ABORTABLE for those that are not, nothing written), otherwise they
   * are added for a transactions V2 producer. Authorization (CLUSTER_ACTION for v4+) is the guard's.
   */
  /**
   * A request naming a partition that takes no client writes (a mirror topic not STOPPED) adds
   * nothing: that partition READ_ONLY_TOPIC, the others OPERATION_NOT_ATTEMPTED, as Kafka answers
   * a request with a partition it refuses. Otherwise the abort of such a transaction would write
   * a client's ABORT marker into the mirrored log.
   */
  const refuseReadOnly = (parts: readonly { topic: string; partition: number }[]): Map<string, number> | undefined => {
    const refused = parts.filter((p) => host.acceptsClientWrites?.(p.topic, p.partition) === false);
    if (refused.length === 0) return undefined;
    const codes = new Map(parts.map((p) => [key(p.topic, p.partition), ErrorCode.OPERATION_NOT_ATTEMPTED as number]));
    for (const p of refused) codes.set(key(p.topic, p.partition), ErrorCode.READ_ONLY_TOPIC);
    return codes;
  };

  const addPartitions: ApiHandler<AddPartitionsToTxnRequest, AddPartitionsToTxnResponseInput> = {
    apiKey: 24, minVersion: 0, maxVersion: 5, decode: decodeAddPartitionsToTxnRequest, encode: encodeAddPartitionsToTxnResponse,
    async handle(ctx, req) {
      if (ctx.apiVersion >= 4) {
        const resultsByTransaction = await Promise.all(
          req.transactions.map(async (t) => {
            const parts = t.topics.flatMap((tp) => tp.partitions.map((partition) => ({ topic: tp.name, partition })));
            let codes: Map<string, number> | undefined = refuseReadOnly(parts);
            if (codes === undefined) try {
              codes = t.verifyOnly
                ? await tc.verifyPartitions(t.transactionalId, Number(t.producerId), t.producerEpoch, parts)
                : await tc.addPartitions(t.transactionalId, Number(t.producerId), t.producerEpoch, parts, ctx.apiVersion, 2);
            } catch (e) {
              const code = errorCodeOf(e);
              codes = new Map(parts.map((p) => [key(p.topic, p.partition), code]));
            }
            return {
              transactionalId: t.transactionalId,
              topicResults: t.topics.map((tp) => ({ name: tp.name, resultsByPartition: tp.partitions.map((p) => ({ partitionIndex: p, partitionErrorCode: codes.get(key(tp.name, p)) ?? 0 })) })),
            };
          }),
        );
        return { errorCode: 0, resultsByTransaction };
      }
      const parts = req.v3AndBelowTopics.flatMap((t) => t.partitions.map((partition) => ({ topic: t.name, partition })));
      let codes: Map<string, number> | undefined = refuseReadOnly(parts);
      if (codes === undefined) try {
        codes = await tc.addPartitions(req.v3AndBelowTransactionalId, Number(req.v3AndBelowProducerId), req.v3AndBelowProducerEpoch, parts, ctx.apiVersion);
      } catch (e) {
        const code = errorCodeOf(e);
        codes = new Map(parts.map((p) => [key(p.topic, p.partition), code]));
      }
      return {
        resultsByTopicV3AndBelow: req.v3AndBelowTopics.map((t) => ({
          name: t.name,
          resultsByPartition: t.partitions.map((p) => ({ partitionIndex: p, partitionErrorCode: codes.get(key(t.name, p)) ?? 0 })),
        })),
      };
    },
  };

  /* AddOffsetsToTxn v0-4: adds the group's __consumer_offsets partition to the transaction. */
  const addOffsets: ApiHandler<AddOffsetsToTxnRequest, AddOffsetsToTxnResponseInput> = {
    apiKey: 25, minVersion: 0, maxVersion: 4, decode: decodeAddOffsetsToTxnRequest, encode: encodeAddOffsetsToTxnResponse,
    async handle(ctx, req) {
      try {
        return { errorCode: await tc.addOffsets(req.transactionalId, Number(req.producerId), req.producerEpoch, req.groupId, ctx.apiVersion) };
      } catch (e) {
        return { errorCode: errorCodeOf(e) };
      }
    },
  };

  /*
   * EndTxn v0-5: PrepareCommit/Abort, markers on every partition, CompleteCommit/Abort, then the
   * answer. v5 (transactions V2) bumps the epoch and answers the producer id and epoch the
   * producer continues with.
   */
  const endTxn: ApiHandler<EndTxnRequest, EndTxnResponseInput> = {
    apiKey: 26, minVersion: 0, maxVersion: 5, decode: decodeEndTxnRequest, encode: encodeEndTxnResponse,
    async handle(ctx, req) {
      const v = ctx.apiVersion;
      try {
        const r = await tc.endTxn(req.transactionalId, Number(req.producerId), req.producerEpoch, req.committed, v);
        return v >= 5 ? { errorCode: r.errorCode, producerId: BigInt(r.producerId), producerEpoch: r.producerEpoch } : { errorCode: r.errorCode };
      } catch (e) {
        return v >= 5 ? { errorCode: errorCodeOf(e), producerId: -1n, producerEpoch: -1 } : { errorCode: errorCodeOf(e) };
      }
    },
  };

  /*
   * TxnOffsetCommit v0-6: v3+ carries generation/member for fencing zombies of a group; v5
   * (transactions V2) adds the group's __consumer_offsets partition to the transaction itself,
   * as AddOffsetsToTxn did (Kafka verifies and adds it through AddPartitionsToTxnManager); v6
   * names topics by id.
   */
  const txnOffsetCommit: ApiHandler<TxnOffsetCommitRequest, TxnOffsetCommitResponseInput> = {
    apiKey: 28, minVersion: 0, maxVersion: 6, decode: decodeTxnOffsetCommitRequest, encode: encodeTxnOffsetCommitResponse,
    async handle(ctx, req) {
      const v = ctx.apiVersion;
      // v6 names topics by id; offsets are kept by name, an unknown id is UNKNOWN_TOPIC_ID.
      const names = req.topics.map((t) => (v >= 6 ? (host.topicNameById(t.topicId) ?? null) : t.name));
      const answer = (code: (i: number) => number, byName?: Map<string, Map<number, number>>): TxnOffsetCommitResponseInput => ({
        topics: req.topics.map((t, i) => ({
          ...(v >= 6 ? { topicId: t.topicId } : { name: t.name }),
          partitions: t.partitions.map((p) => {
            const name = names[i] ?? null;
            const errorCode = name === null ? ErrorCode.UNKNOWN_TOPIC_ID : (byName?.get(name)?.get(p.partitionIndex) ?? code(i));
            return { partitionIndex: p.partitionIndex, errorCode };
          }),
        })),
      });
      const fail = (code: number): TxnOffsetCommitResponseInput => answer(() => code);
      if (!groups) return fail(ErrorCode.COORDINATOR_NOT_AVAILABLE);
      try {
        // The group's partition must be in the transaction (v4 and older: AddOffsetsToTxn put it
        // there) or is added to it (v5+), at the producer's transaction coordinator.
        const checked = await channel.addOrVerify({ transactionalId: req.transactionalId, producerId: Number(req.producerId), producerEpoch: req.producerEpoch, topic: CONSUMER_OFFSETS, partition: groups.partitionFor(req.groupId), operation: v >= 5 ? 2 : 0 });
        if (checked !== ErrorCode.NONE) return fail(txnOffsetCommitError(checked, v));
        // Offsets of a mirror topic that is not STOPPED are the source's, synced by the mirror.
        const byName = new Map<string, Map<number, number>>();
        const writable = (name: string, partition: number): boolean => {
          if (host.acceptsClientWrites?.(name, partition) !== false) return true;
          let m = byName.get(name);
          if (m === undefined) byName.set(name, (m = new Map()));
          m.set(partition, ErrorCode.READ_ONLY_TOPIC);
          return false;
        };
        const known = req.topics.flatMap((t, i) => {
          const name = names[i];
          if (name === null || name === undefined) return [];
          const parts = t.partitions.filter((p) => writable(name, p.partitionIndex));
          if (parts.length === 0) return [];
          return [{
            name,
            partitions: parts.map((p) => ({ partitionIndex: p.partitionIndex, committedOffset: p.committedOffset, committedLeaderEpoch: v >= 2 ? p.committedLeaderEpoch : -1, committedMetadata: p.committedMetadata })),
          }];
        });
        const topics = known.length === 0 ? [] : await groups.txnCommitOffsets({
          groupId: req.groupId,
          producerId: Number(req.producerId),
          producerEpoch: req.producerEpoch,
          generationIdOrMemberEpoch: v >= 3 ? req.generationIdOrMemberEpoch : -1,
          memberId: v >= 3 ? req.memberId : '',
          groupInstanceId: v >= 3 ? req.groupInstanceId : null,
          topics: known,
        });
        for (const t of topics) {
          let m = byName.get(t.name);
          if (m === undefined) byName.set(t.name, (m = new Map()));
          for (const p of t.partitions) m.set(p.partitionIndex, p.errorCode);
        }
        return answer(() => ErrorCode.UNKNOWN_SERVER_ERROR, byName);
      } catch (e) {
        return fail(errorCodeOf(e));
      }
    },
  };

  /* ListTransactions v0-2: state, producer id, duration (v1) and transactional id pattern (v2) filters. */
  const listTransactions: ApiHandler<ListTransactionsRequest, ListTransactionsResponseInput> = {
    apiKey: 66, minVersion: 0, maxVersion: 2, decode: decodeListTransactionsRequest, encode: encodeListTransactionsResponse,
    async handle(ctx, req) {
      const known = new Set(TXN_STATE_NAMES);
      const unknownStateFilters = req.stateFilters.filter((s) => !known.has(s));
      let pattern: RegExp | null = null;
      if (ctx.apiVersion >= 2 && req.transactionalIdPattern !== null && req.transactionalIdPattern !== '') {
        try {
          pattern = new RegExp(`^(?:${req.transactionalIdPattern})$`);
        } catch {
          return { errorCode: ErrorCode.INVALID_REQUEST };
        }
      }
      try {
        const list = await tc.listTransactions(req.stateFilters, req.producerIdFilters.map(Number), ctx.apiVersion >= 1 ? Number(req.durationFilter) : -1);
        return {
          unknownStateFilters,
          transactionStates: list.filter((t) => pattern === null || pattern.test(t.transactionalId)).map((t) => ({ transactionalId: t.transactionalId, producerId: BigInt(t.producerId), transactionState: t.state })),
        };
      } catch (e) {
        return { errorCode: errorCodeOf(e) };
      }
    },
  };

  /* DescribeTransactions v0. */
  const describeTransactions: ApiHandler<DescribeTransactionsRequest, DescribeTransactionsResponseInput> = {
    apiKey: 65, minVersion: 0, maxVersion: 0, decode: decodeDescribeTransactionsRequest, encode: encodeDescribeTransactionsResponse,
    async handle(_ctx, req) {
      const transactionStates = await Promise.all(
        req.transactionalIds.map(async (transactionalId) => {
          try {
            const m = await tc.describe(transactionalId);
            if (!m) return { errorCode: ErrorCode.TRANSACTIONAL_ID_NOT_FOUND, transactionalId, transactionState: '', producerId: -1n, producerEpoch: -1 };
            const byTopic = new Map<string, number[]>();
            for (const tp of m.partitions) {
              const [topic, p] = tp.split('\0') as [string, string];
              byTopic.set(topic, [...(byTopic.get(topic) ?? []), Number(p)]);
            }
            return {
              errorCode: 0,
              transactionalId,
              transactionState: TXN_STATE_NAMES[m.state] ?? 'Unknown',
              transactionTimeoutMs: m.timeoutMs,
              transactionStartTimeMs: BigInt(m.startTimestamp),
              producerId: BigInt(m.producerId),
              producerEpoch: m.producerEpoch,
              topics: [...byTopic].map(([topic, partitions]) => ({ topic, partitions: partitions.sort((a, b) => a - b) })),
            };
          } catch (e) {
            return { errorCode: errorCodeOf(e), transactionalId, transactionState: '', producerId: -1n, producerEpoch: -1 };
          }
        }),
      );
      return { transactionStates };
    },
  };

  /*
   * WriteTxnMarkers v1-2, from the transaction coordinator of another node: each marker is written
   * on the partitions led here (a partition led elsewhere is NOT_LEADER_OR_FOLLOWER, never sent
   * on); on __consumer_offsets the group coordinator applies it to the transaction's offsets, as
   * Kafka's KafkaApis.handleWriteTxnMarkersRequest hands it to onTransactionCompleted. v2 carries
   * the transaction version of the producer (2 for transactions V2, whose markers come with the
   * bumped epoch).
   */
  const writeTxnMarkers: ApiHandler<WriteTxnMarkersRequest, WriteTxnMarkersResponseInput> = {
    apiKey: 27, minVersion: 1, maxVersion: 2, decode: decodeWriteTxnMarkersRequest, encode: encodeWriteTxnMarkersResponse,
    async handle(_ctx, req) {
      const writeOne = async (m: WriteTxnMarkersRequest['markers'][number], topic: string, partition: number): Promise<number> => {
        const producerId = Number(m.producerId);
        try {
          if (topic === CONSUMER_OFFSETS) return groups ? await groups.completeTransaction(partition, producerId, m.producerEpoch, m.transactionResult) : ErrorCode.NOT_COORDINATOR;
          if (!host.writeTxnMarker) return ErrorCode.UNKNOWN_SERVER_ERROR;
          return await host.writeTxnMarker(topic, partition, { producerId, producerEpoch: m.producerEpoch, coordinatorEpoch: m.coordinatorEpoch, commit: m.transactionResult, transactionVersion: m.transactionVersion }, { forward: false });
        } catch (e) {
          return errorCodeOf(e);
        }
      };
      const markers = await Promise.all(
        req.markers.map(async (m) => ({
          producerId: m.producerId,
          topics: await Promise.all(
            m.topics.map(async (t) => ({
              name: t.name,
              partitions: await Promise.all(t.partitionIndexes.map(async (partitionIndex) => ({ partitionIndex, errorCode: await writeOne(m, t.name, partitionIndex) }))),
            })),
          ),
        })),
      );
      return { markers };
    },
  };

  const handlers: ApiHandler[] = [initProducerId, addPartitions, addOffsets, endTxn, txnOffsetCommit, listTransactions, describeTransactions, writeTxnMarkers];
  return {
    handlers,
    close: () => tc.close(),
    coordinator: tc,
    setChannel(c) {
      channel = c;
    },
  };
}

/**
 * A failed transaction check as TxnOffsetCommit answers it: a stale epoch the way the handler
 * always has (PRODUCER_FENCED from v2), and an unreachable or moving transaction coordinator as
 * COORDINATOR_NOT_AVAILABLE, which producers retry after looking the coordinator up again.
 */
function txnOffsetCommitError(code: number, version: number): number {
  if (code === ErrorCode.INVALID_PRODUCER_EPOCH) return version >= 2 ? ErrorCode.PRODUCER_FENCED : ErrorCode.INVALID_PRODUCER_EPOCH;
  if (code === ErrorCode.NETWORK_EXCEPTION || code === ErrorCode.NOT_COORDINATOR || code === ErrorCode.COORDINATOR_LOAD_IN_PROGRESS) return ErrorCode.COORDINATOR_NOT_AVAILABLE;
  return code;
}
