/**
 * Authorization of the transaction APIs (WRITE on the transactional id; READ on the group for
 * offsets; WRITE on each topic added; an idempotent producer needs IDEMPOTENT_WRITE on the
 * cluster or WRITE on some topic, as Kafka's KafkaApis.handleInitProducerIdRequest asks) and of
 * KIP-1279's mirroring RPCs: CLUSTER_MIRROR CREATE / ALTER / DELETE / DESCRIBE per mirror, and
 * CLUSTER_ACTION on the cluster for the broker-to-broker ReadMirrorStates, WriteMirrorStates,
 * BumpLeaderEpochs and AlterPartition.
 */
import type { WriteTxnMarkersRequest } from '../../protocol/generated/messages/write-txn-markers-request.js';
import type { WriteTxnMarkersResponseInput } from '../../protocol/generated/messages/write-txn-markers-response.js';
import { AclOperation, ResourceType, AUTHORIZED_OPERATIONS_OMITTED } from '../../auth/acl-model.js';
import { ApiKey } from '../../protocol/generated/api-table.js';
import { ErrorCode } from '../../protocol/generated/errors.js';
import type { AddPartitionsToTxnRequest } from '../../protocol/generated/messages/add-partitions-to-txn-request.js';
import type { AddPartitionsToTxnResponseInput } from '../../protocol/generated/messages/add-partitions-to-txn-response.js';
import type { DescribeClusterMirrorsRequest } from '../../protocol/generated/messages/describe-cluster-mirrors-request.js';
import type { DescribeClusterMirrorsResponseInput } from '../../protocol/generated/messages/describe-cluster-mirrors-response.js';
import type { DescribeTransactionsRequest } from '../../protocol/generated/messages/describe-transactions-request.js';
import type { DescribeTransactionsResponseInput } from '../../protocol/generated/messages/describe-transactions-response.js';
import type { InitProducerIdRequest } from '../../protocol/generated/messages/init-producer-id-request.js';
import type { ListClusterMirrorsResponseInput } from '../../protocol/generated/messages/list-cluster-mirrors-response.js';
import type { ListTransactionsResponseInput } from '../../protocol/generated/messages/list-transactions-response.js';
import type { TxnOffsetCommitRequest } from '../../protocol/generated/messages/txn-offset-commit-request.js';
import type { TxnOffsetCommitResponseInput } from '../../protocol/generated/messages/txn-offset-commit-response.js';
import { guard, serveRest, wholeRequest, type Guard } from './guard.js';

const TXN_DENIED = ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED;
const MIRROR_DENIED = ErrorCode.CLUSTER_MIRROR_AUTHORIZATION_FAILED;

const initProducerId = wholeRequest<InitProducerIdRequest, unknown>(
  22,
  (az, ctx, req) =>
    req.transactionalId !== null
      ? az.transactionalId(ctx, req.transactionalId)
      : az.canCluster(ctx, AclOperation.IDEMPOTENT_WRITE) || az.authorizer.authorizeByResourceType(ctx, AclOperation.WRITE, ResourceType.TOPIC),
  (req) => ({ errorCode: req.transactionalId !== null ? TXN_DENIED : ErrorCode.CLUSTER_AUTHORIZATION_FAILED, producerId: -1n, producerEpoch: -1 }),
);

/**
 * AddPartitionsToTxn v0-3: the id first, then WRITE on each topic; the rest OPERATION_NOT_ATTEMPTED.
 * v4+ comes from partition leaders only (KIP-890): CLUSTER_ACTION, else the whole request is
 * answered CLUSTER_AUTHORIZATION_FAILED at the top level, as Kafka's KafkaApis does.
 */
const addPartitionsToTxn = guard<AddPartitionsToTxnRequest, AddPartitionsToTxnResponseInput>(24, (az, ctx, req, next) => {
  if (ctx.apiVersion >= 4) {
    return az.canCluster(ctx, AclOperation.CLUSTER_ACTION) ? next(ctx, req) : { errorCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED, resultsByTransaction: [] };
  }
  const topics = req.v3AndBelowTopics;
  const answer = (code: (name: string) => number): AddPartitionsToTxnResponseInput => ({
    resultsByTopicV3AndBelow: topics.map((t) => ({ name: t.name, resultsByPartition: t.partitions.map((partitionIndex) => ({ partitionIndex, partitionErrorCode: code(t.name) })) })),
  });
  if (!az.transactionalId(ctx, req.v3AndBelowTransactionalId)) return answer(() => TXN_DENIED);
  const denied = new Set(topics.filter((t) => !az.topic(ctx, AclOperation.WRITE, t.name)).map((t) => t.name));
  if (denied.size === 0) return next(ctx, req);
  return answer((name) => (denied.has(name) ? ErrorCode.TOPIC_AUTHORIZATION_FAILED : ErrorCode.OPERATION_NOT_ATTEMPTED));
});

const addOffsetsToTxn = guard<{ transactionalId: string; groupId: string }, unknown>(25, (az, ctx, req, next) => {
  if (!az.transactionalId(ctx, req.transactionalId)) return { errorCode: TXN_DENIED };
  if (!az.group(ctx, AclOperation.READ, req.groupId)) return { errorCode: ErrorCode.GROUP_AUTHORIZATION_FAILED };
  return next(ctx, req);
});

const endTxn = wholeRequest<{ transactionalId: string }, unknown>(26, (az, ctx, req) => az.transactionalId(ctx, req.transactionalId), () => ({ errorCode: TXN_DENIED, producerId: -1n, producerEpoch: -1 }));

const txnOffsetCommit = guard<TxnOffsetCommitRequest, TxnOffsetCommitResponseInput>(28, (az, ctx, req, next) => {
  const all = (code: number): TxnOffsetCommitResponseInput => ({ topics: req.topics.map((t) => ({ name: t.name, partitions: t.partitions.map((p) => ({ partitionIndex: p.partitionIndex, errorCode: code })) })) });
  if (!az.transactionalId(ctx, req.transactionalId)) return all(TXN_DENIED);
  if (!az.group(ctx, AclOperation.READ, req.groupId)) return all(ErrorCode.GROUP_AUTHORIZATION_FAILED);
  const denied = req.topics.filter((t) => !az.topic(ctx, AclOperation.READ, t.name));
  if (denied.length === 0) return next(ctx, req);
  const errors = denied.map((t) => ({ name: t.name, partitions: t.partitions.map((p) => ({ partitionIndex: p.partitionIndex, errorCode: ErrorCode.TOPIC_AUTHORIZATION_FAILED })) }));
  return serveRest(ctx, { ...req, topics: req.topics.filter((t) => !denied.includes(t)) }, next, (res) => ({ ...res, topics: [...(res.topics ?? []), ...errors] }));
});

const describeTransactions = guard<DescribeTransactionsRequest, DescribeTransactionsResponseInput>(65, async (az, ctx, req, next) => {
  const may = (id: string): boolean => az.can(ctx, AclOperation.DESCRIBE, ResourceType.TRANSACTIONAL_ID, id);
  const denied = req.transactionalIds.filter((id) => !may(id));
  const res = await next(ctx, { ...req, transactionalIds: req.transactionalIds.filter((id) => may(id)) });
  if (res === null) return null;
  const errors = denied.map((transactionalId) => ({ transactionalId, errorCode: TXN_DENIED, transactionState: '', topics: [] }));
  return { ...res, transactionStates: [...(res.transactionStates ?? []), ...errors] };
});

const listTransactions = guard<unknown, ListTransactionsResponseInput>(66, async (az, ctx, req, next) => {
  const res = await next(ctx, req);
  if (res === null) return null;
  return { ...res, transactionStates: (res.transactionStates ?? []).filter((s) => az.can(ctx, AclOperation.DESCRIBE, ResourceType.TRANSACTIONAL_ID, s.transactionalId ?? '')) };
});

/** One mirror named by `mirrorName`: the operation on it, or CLUSTER_MIRROR_AUTHORIZATION_FAILED. */
const onMirror = (apiKey: number, operation: number): Guard<unknown, unknown> =>
  wholeRequest<{ mirrorName: string }, unknown>(apiKey, (az, ctx, req) => az.can(ctx, operation, ResourceType.CLUSTER_MIRROR, req.mirrorName), () => ({ errorCode: MIRROR_DENIED, errorMessage: null }));

const clusterAction = (apiKey: number): Guard<unknown, unknown> =>
  wholeRequest<unknown, unknown>(apiKey, (az, ctx) => az.canCluster(ctx, AclOperation.CLUSTER_ACTION), () => ({ errorCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED, errorMessage: null, topics: [] }));

const listClusterMirrors = guard<unknown, ListClusterMirrorsResponseInput>(ApiKey.ListClusterMirrors, async (az, ctx, req, next) => {
  const res = await next(ctx, req);
  if (res === null) return null;
  return { ...res, mirrors: (res.mirrors ?? []).filter((m) => az.can(ctx, AclOperation.DESCRIBE, ResourceType.CLUSTER_MIRROR, m.mirrorName ?? '')) };
});

const describeClusterMirrors = guard<DescribeClusterMirrorsRequest, DescribeClusterMirrorsResponseInput>(ApiKey.DescribeClusterMirrors, async (az, ctx, req, next) => {
  const may = (name: string): boolean => az.can(ctx, AclOperation.DESCRIBE, ResourceType.CLUSTER_MIRROR, name);
  const denied = req.mirrorNames.filter((n) => !may(n));
  const res = await next(ctx, { ...req, mirrorNames: req.mirrorNames.filter((n) => may(n)) });
  if (res === null) return null;
  const shown = (res.mirrors ?? [])
    .filter((m) => req.mirrorNames.length > 0 || may(m.mirrorName ?? ''))
    .map((m) => (req.includeAuthorizedOperations ? { ...m, authorizedOperations: az.authorizer.authorizedOperations(ctx, ResourceType.CLUSTER_MIRROR, m.mirrorName ?? '') } : m));
  const errors = denied.map((mirrorName) => ({ mirrorName, errorCode: MIRROR_DENIED, authorizedOperations: AUTHORIZED_OPERATIONS_OMITTED, topics: [] }));
  return { ...res, mirrors: [...shown, ...errors] };
});

/** WriteTxnMarkers is broker-to-broker (Kafka's KafkaApis): CLUSTER_ACTION, else every partition CLUSTER_AUTHORIZATION_FAILED. */
const writeTxnMarkers = wholeRequest<WriteTxnMarkersRequest, WriteTxnMarkersResponseInput>(
  ApiKey.WriteTxnMarkers,
  (az, ctx) => az.canCluster(ctx, AclOperation.CLUSTER_ACTION),
  (req) => ({
    markers: req.markers.map((m) => ({
      producerId: m.producerId,
      topics: m.topics.map((t) => ({ name: t.name, partitions: t.partitionIndexes.map((partitionIndex) => ({ partitionIndex, errorCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED })) })),
    })),
  }),
);

export const TXN_MIRROR_GUARDS: readonly Guard<unknown, unknown>[] = [
  writeTxnMarkers,
  initProducerId,
  addPartitionsToTxn,
  addOffsetsToTxn,
  endTxn,
  txnOffsetCommit,
  describeTransactions,
  listTransactions,
  onMirror(ApiKey.CreateClusterMirror, AclOperation.CREATE),
  onMirror(ApiKey.StartMirrorTopics, AclOperation.ALTER),
  onMirror(ApiKey.StopMirrorTopics, AclOperation.ALTER),
  onMirror(ApiKey.PauseMirrorTopics, AclOperation.ALTER),
  onMirror(ApiKey.ResumeMirrorTopics, AclOperation.ALTER),
  onMirror(ApiKey.DeleteClusterMirror, AclOperation.DELETE),
  listClusterMirrors,
  describeClusterMirrors,
  clusterAction(ApiKey.ReadMirrorStates),
  clusterAction(ApiKey.WriteMirrorStates),
  clusterAction(ApiKey.BumpLeaderEpochs),
  // A partition leader's ISR change (KafkaApis.handleAlterPartitionRequest: CLUSTER_ACTION).
  clusterAction(ApiKey.AlterPartition),
];
