/**
 * Authorization of the data-plane APIs, as Kafka's KafkaApis does it: Produce (WRITE on each
 * topic, WRITE on the transactional id for transactional batches), Fetch (READ on each topic;
 * CLUSTER_ACTION on the cluster for a follower), ListOffsets, OffsetForLeaderEpoch and
 * DescribeProducers (DESCRIBE / READ on each topic), DeleteRecords (DELETE on each topic).
 */
import { AclOperation } from '../../auth/acl-model.js';
import { ErrorCode } from '../../protocol/generated/errors.js';
import type { DeleteRecordsRequest } from '../../protocol/generated/messages/delete-records-request.js';
import type { DeleteRecordsResponseInput } from '../../protocol/generated/messages/delete-records-response.js';
import type { DescribeProducersRequest } from '../../protocol/generated/messages/describe-producers-request.js';
import type { DescribeProducersResponseInput } from '../../protocol/generated/messages/describe-producers-response.js';
import type { FetchRequest } from '../../protocol/generated/messages/fetch-request.js';
import type { FetchResponseFetchableTopicResponseInput, FetchResponseInput } from '../../protocol/generated/messages/fetch-response.js';
import type { ListOffsetsRequest } from '../../protocol/generated/messages/list-offsets-request.js';
import type { ListOffsetsResponseInput } from '../../protocol/generated/messages/list-offsets-response.js';
import type { OffsetForLeaderEpochRequest } from '../../protocol/generated/messages/offset-for-leader-epoch-request.js';
import type { OffsetForLeaderEpochResponseInput } from '../../protocol/generated/messages/offset-for-leader-epoch-response.js';
import type { ProduceRequest } from '../../protocol/generated/messages/produce-request.js';
import type { ProduceResponseInput, ProduceResponseTopicProduceResponseInput } from '../../protocol/generated/messages/produce-response.js';
import { iterateBatches } from '../../protocol/record-batch.js';
import { KafkaError } from '../../protocol/kafka-error.js';
import { guard, serveRest, type Guard } from './guard.js';

const TOPIC_DENIED = ErrorCode.TOPIC_AUTHORIZATION_FAILED;

/** Kafka's ProduceRequest.hasTransactionalRecords, from batch headers only. */
function hasTransactionalRecords(req: ProduceRequest): boolean {
  for (const t of req.topicData) {
    for (const p of t.partitionData) {
      if (!p.records) continue;
      try {
        for (const b of iterateBatches(p.records)) if (b.magic >= 2 && b.isTransactional) return true;
      } catch {
        // A malformed batch is refused by the handler's own validation.
      }
    }
  }
  return false;
}

const produce = guard<ProduceRequest, ProduceResponseInput>(0, async (az, ctx, req, next) => {
  const denied: ProduceResponseTopicProduceResponseInput[] = [];
  let rest = req;
  if (hasTransactionalRecords(req) && (req.transactionalId === null || !az.transactionalId(ctx, req.transactionalId))) {
    // KafkaApis answers every partition with TRANSACTIONAL_ID_AUTHORIZATION_FAILED.
    rest = { ...req, topicData: [] };
    for (const t of req.topicData) denied.push({ name: t.name, topicId: t.topicId, partitionResponses: t.partitionData.map((p) => ({ index: p.index, errorCode: ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED })) });
  } else {
    const allowed = req.topicData.filter((t) => {
      const name = az.topicName(t.name, t.topicId);
      // An unknown topic id is the handler's to answer (UNKNOWN_TOPIC_ID).
      if (name === '' || az.topic(ctx, AclOperation.WRITE, name)) return true;
      denied.push({ name: t.name, topicId: t.topicId, partitionResponses: t.partitionData.map((p) => ({ index: p.index, errorCode: TOPIC_DENIED })) });
      return false;
    });
    if (denied.length > 0) rest = { ...req, topicData: allowed };
  }
  if (denied.length === 0) return next(ctx, req);
  // acks=0 has no response to carry the error: Kafka closes the connection instead.
  if (req.acks === 0) throw new KafkaError(denied[0]?.partitionResponses?.[0]?.errorCode ?? TOPIC_DENIED, 'produce refused by the authorizer (acks=0)');
  return serveRest(ctx, rest, next, (res) => ({ ...res, responses: [...(res.responses ?? []), ...denied] }));
});

const fetch = guard<FetchRequest, FetchResponseInput>(1, async (az, ctx, req, next) => {
  const follower = req.replicaId >= 0 || req.replicaState.replicaId >= 0;
  if (follower) {
    // A follower needs CLUSTER_ACTION; without it every partition is TOPIC_AUTHORIZATION_FAILED.
    if (az.canCluster(ctx, AclOperation.CLUSTER_ACTION)) return next(ctx, req);
    return { responses: req.topics.map((t) => ({ topic: t.topic, topicId: t.topicId, partitions: t.partitions.map((p) => ({ partitionIndex: p.partition, errorCode: TOPIC_DENIED })) })) };
  }
  const readable = (name: string): boolean => name === '' || az.topic(ctx, AclOperation.READ, name);
  const denied: FetchResponseFetchableTopicResponseInput[] = [];
  const allowed = req.topics.filter((t) => {
    if (readable(az.topicName(t.topic, t.topicId))) return true;
    denied.push({ topic: t.topic, topicId: t.topicId, partitions: t.partitions.map((p) => ({ partitionIndex: p.partition, errorCode: TOPIC_DENIED })) });
    return false;
  });
  const res = await next(ctx, denied.length === 0 ? req : { ...req, topics: allowed });
  if (res === null) return null;
  // A KIP-227 session serves partitions the request no longer names: each is checked on every
  // fetch (as Kafka's FetchContext.foreachPartition does), so a revoked READ stops the data.
  const served = (res.responses ?? []).map((t) =>
    readable(az.topicName(t.topic ?? '', t.topicId)) ? t : { topic: t.topic, topicId: t.topicId, partitions: (t.partitions ?? []).map((p) => ({ partitionIndex: p.partitionIndex, errorCode: TOPIC_DENIED })) },
  );
  return { ...res, responses: [...served, ...denied] };
});

const listOffsets = guard<ListOffsetsRequest, ListOffsetsResponseInput>(2, (az, ctx, req, next) => {
  const denied = req.topics.filter((t) => !az.topic(ctx, AclOperation.DESCRIBE, t.name));
  if (denied.length === 0) return next(ctx, req);
  const errors = denied.map((t) => ({ name: t.name, partitions: t.partitions.map((p) => ({ partitionIndex: p.partitionIndex, errorCode: TOPIC_DENIED })) }));
  return serveRest(ctx, { ...req, topics: req.topics.filter((t) => !denied.includes(t)) }, next, (res) => ({ ...res, topics: [...(res.topics ?? []), ...errors] }));
});

const offsetForLeaderEpoch = guard<OffsetForLeaderEpochRequest, OffsetForLeaderEpochResponseInput>(23, (az, ctx, req, next) => {
  // A follower's request (replica id ≥ 0) needs CLUSTER_ACTION; a consumer's DESCRIBE on each topic.
  const follower = req.replicaId >= 0;
  const clusterOk = follower && az.canCluster(ctx, AclOperation.CLUSTER_ACTION);
  const denied = req.topics.filter((t) => (follower ? !clusterOk : !az.topic(ctx, AclOperation.DESCRIBE, t.topic)));
  if (denied.length === 0) return next(ctx, req);
  const code = follower ? ErrorCode.CLUSTER_AUTHORIZATION_FAILED : TOPIC_DENIED;
  const errors = denied.map((t) => ({ topic: t.topic, partitions: t.partitions.map((p) => ({ partition: p.partition, errorCode: code })) }));
  return serveRest(ctx, { ...req, topics: req.topics.filter((t) => !denied.includes(t)) }, next, (res) => ({ ...res, topics: [...(res.topics ?? []), ...errors] }));
});

const deleteRecords = guard<DeleteRecordsRequest, DeleteRecordsResponseInput>(21, (az, ctx, req, next) => {
  const denied = req.topics.filter((t) => !az.topic(ctx, AclOperation.DELETE, t.name));
  if (denied.length === 0) return next(ctx, req);
  const errors = denied.map((t) => ({ name: t.name, partitions: t.partitions.map((p) => ({ partitionIndex: p.partitionIndex, errorCode: TOPIC_DENIED, lowWatermark: -1n })) }));
  return serveRest(ctx, { ...req, topics: req.topics.filter((t) => !denied.includes(t)) }, next, (res) => ({ ...res, topics: [...(res.topics ?? []), ...errors] }));
});

const describeProducers = guard<DescribeProducersRequest, DescribeProducersResponseInput>(61, (az, ctx, req, next) => {
  const denied = req.topics.filter((t) => !az.topic(ctx, AclOperation.READ, t.name));
  if (denied.length === 0) return next(ctx, req);
  const errors = denied.map((t) => ({ name: t.name, partitions: t.partitionIndexes.map((i) => ({ partitionIndex: i, errorCode: TOPIC_DENIED, errorMessage: null })) }));
  return serveRest(ctx, { ...req, topics: req.topics.filter((t) => !denied.includes(t)) }, next, (res) => ({ ...res, topics: [...(res.topics ?? []), ...errors] }));
});

export const DATA_GUARDS: readonly Guard<unknown, unknown>[] = [produce, fetch, listOffsets, offsetForLeaderEpoch, deleteRecords, describeProducers];
