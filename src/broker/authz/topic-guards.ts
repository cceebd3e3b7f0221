/**
 * Authorization of the topic metadata and topic admin APIs, after Kafka's KafkaApis:
 * - Metadata: DESCRIBE on each topic. A full listing hides the topics the caller may not
 *   describe; a named one it may not describe is TOPIC_AUTHORIZATION_FAILED, and so is a missing
 *   one it may not auto-create (CREATE on the cluster or on the topic). Authorized-operation bit
 *   sets when asked.
 * - DescribeTopicPartitions: the same hiding and refusing, with the topic's operations always.
 * - CreateTopics: CREATE on the cluster or on the topic; DeleteTopics: DELETE on the topic;
 *   CreatePartitions: ALTER on the topic.
 */
import { AclOperation, ResourceType, AUTHORIZED_OPERATIONS_OMITTED } from '../../auth/acl-model.js';
import { ErrorCode } from '../../protocol/generated/errors.js';
import type { CreatePartitionsRequest } from '../../protocol/generated/messages/create-partitions-request.js';
import type { CreatePartitionsResponseInput } from '../../protocol/generated/messages/create-partitions-response.js';
import type { CreateTopicsRequest } from '../../protocol/generated/messages/create-topics-request.js';
import type { CreateTopicsResponseInput } from '../../protocol/generated/messages/create-topics-response.js';
import type { DeleteTopicsRequest } from '../../protocol/generated/messages/delete-topics-request.js';
import type { DeleteTopicsResponseInput } from '../../protocol/generated/messages/delete-topics-response.js';
import type { DescribeClusterRequest } from '../../protocol/generated/messages/describe-cluster-request.js';
import type { DescribeClusterResponseInput } from '../../protocol/generated/messages/describe-cluster-response.js';
import type { DescribeTopicPartitionsRequest } from '../../protocol/generated/messages/describe-topic-partitions-request.js';
import type { DescribeTopicPartitionsResponseInput } from '../../protocol/generated/messages/describe-topic-partitions-response.js';
import type { MetadataRequest } from '../../protocol/generated/messages/metadata-request.js';
import type { MetadataResponseInput, MetadataResponseMetadataResponseTopicInput } from '../../protocol/generated/messages/metadata-response.js';
import type { RequestContext } from '../../server/api-handler.js';
import { metadataRequestError } from '../apis/003-metadata.js';
import { INTERNAL_TOPICS } from '../broker-context.js';
import { guard, serveRest, type Authz, type Guard } from './guard.js';

const TOPIC_DENIED = ErrorCode.TOPIC_AUTHORIZATION_FAILED;
const NULL_TOPIC_ID = '00000000-0000-0000-0000-000000000000';

function topicOps(az: Authz, ctx: RequestContext, name: string): number {
  return az.authorizer.authorizedOperations(ctx, ResourceType.TOPIC, name);
}

/** Kafka answers 0 to a caller who may not even describe the cluster. */
function clusterOps(az: Authz, ctx: RequestContext): number {
  if (!az.canCluster(ctx, AclOperation.DESCRIBE)) return 0;
  return az.authorizer.authorizedOperations(ctx, ResourceType.CLUSTER, 'kafka-cluster');
}

const metadata = guard<MetadataRequest, MetadataResponseInput>(3, async (az, ctx, req, next) => {
  // v0 spells "every topic" as an empty list, later versions as null.
  const allTopics = req.topics === null || (ctx.apiVersion === 0 && req.topics.length === 0);
  // A request Kafka fails as a whole is answered before any authorization: every entry echoed
  // with the error, no operations.
  if (metadataRequestError(req, ctx.apiVersion) !== null) return next(ctx, req);
  const denied: MetadataResponseMetadataResponseTopicInput[] = [];
  let rest = req;
  if (!allTopics && req.topics !== null) {
    const autoCreate = req.allowAutoTopicCreation && az.autoCreateTopicsEnable();
    const mayCreate = (name: string): boolean => az.canCluster(ctx, AclOperation.CREATE) || az.topic(ctx, AclOperation.CREATE, name);
    const kept = req.topics.filter((t) => {
      const name = az.topicName(t.name, t.topicId);
      if (name === '') return true; // an unknown topic id is the handler's (UNKNOWN_TOPIC_ID)
      if (!az.topic(ctx, AclOperation.DESCRIBE, name)) {
        // Asked by id, the id comes back (ids are not sensitive); asked by name, the name alone.
        denied.push(t.name ? { errorCode: TOPIC_DENIED, name, topicId: NULL_TOPIC_ID, isInternal: false, partitions: [] } : { errorCode: TOPIC_DENIED, name: null, topicId: t.topicId, isInternal: false, partitions: [] });
        return false;
      }
      if (autoCreate && !az.image.topic(name) && !mayCreate(name)) {
        denied.push({ errorCode: TOPIC_DENIED, name, topicId: NULL_TOPIC_ID, isInternal: INTERNAL_TOPICS.has(name), partitions: [] });
        return false;
      }
      return true;
    });
    if (denied.length > 0) rest = { ...req, topics: kept };
  }
  const res = await next(ctx, rest);
  if (res === null) return null;
  const served = (res.topics ?? []).filter((t) => !allTopics || az.topic(ctx, AclOperation.DESCRIBE, t.name ?? ''));
  // Every named topic of the answer, one answered with an error (an invalid or empty name) too, as Kafka.
  const topics = req.includeTopicAuthorizedOperations ? served.map((t) => (typeof t.name === 'string' ? { ...t, topicAuthorizedOperations: topicOps(az, ctx, t.name) } : t)) : served;
  return {
    ...res,
    topics: [...topics, ...denied],
    ...(req.includeClusterAuthorizedOperations && ctx.apiVersion >= 8 && ctx.apiVersion <= 10 ? { clusterAuthorizedOperations: clusterOps(az, ctx) } : {}),
  };
});

const describeTopicPartitions = guard<DescribeTopicPartitionsRequest, DescribeTopicPartitionsResponseInput>(75, async (az, ctx, req, next) => {
  const describable = (name: string): boolean => az.topic(ctx, AclOperation.DESCRIBE, name);
  const deniedNames = req.topics.filter((t) => !describable(t.name)).map((t) => t.name);
  const res = await next(ctx, { ...req, topics: req.topics.filter((t) => !deniedNames.includes(t.name)) });
  if (res === null) return null;
  const served = (res.topics ?? [])
    .filter((t) => req.topics.length > 0 || describable(t.name ?? ''))
    .map((t) => (t.name ? { ...t, topicAuthorizedOperations: topicOps(az, ctx, t.name) } : t));
  const errors = deniedNames.map((name) => ({ errorCode: TOPIC_DENIED, name, topicId: NULL_TOPIC_ID, isInternal: INTERNAL_TOPICS.has(name), partitions: [], topicAuthorizedOperations: AUTHORIZED_OPERATIONS_OMITTED }));
  return { ...res, topics: [...served, ...errors] };
});

const describeCluster = guard<DescribeClusterRequest, DescribeClusterResponseInput>(60, async (az, ctx, req, next) => {
  // Kafka answers DescribeCluster to anyone; only the operation bit set depends on the ACLs.
  const res = await next(ctx, req);
  if (res === null || !req.includeClusterAuthorizedOperations) return res;
  return { ...res, clusterAuthorizedOperations: clusterOps(az, ctx) };
});

const createTopics = guard<CreateTopicsRequest, CreateTopicsResponseInput>(19, (az, ctx, req, next) => {
  if (az.canCluster(ctx, AclOperation.CREATE)) return next(ctx, req);
  const denied = req.topics.filter((t) => !az.topic(ctx, AclOperation.CREATE, t.name));
  if (denied.length === 0) return next(ctx, req);
  const errors = denied.map((t) => ({ name: t.name, errorCode: TOPIC_DENIED, errorMessage: 'Authorization failed.', topicConfigErrorCode: TOPIC_DENIED, numPartitions: -1, replicationFactor: -1, configs: null }));
  return serveRest(ctx, { ...req, topics: req.topics.filter((t) => !denied.includes(t)) }, next, (res) => ({ ...res, topics: [...(res.topics ?? []), ...errors] }));
});

const deleteTopics = guard<DeleteTopicsRequest, DeleteTopicsResponseInput>(20, (az, ctx, req, next) => {
  const deniedNames = req.topicNames.filter((n) => !az.topic(ctx, AclOperation.DELETE, n));
  const deniedStates = req.topics.filter((t) => {
    const name = az.topicName(t.name, t.topicId);
    return name !== '' && !az.topic(ctx, AclOperation.DELETE, name);
  });
  if (deniedNames.length === 0 && deniedStates.length === 0) return next(ctx, req);
  const errors = [
    ...deniedNames.map((name) => ({ name, errorCode: TOPIC_DENIED, errorMessage: null })),
    ...deniedStates.map((t) => ({ name: t.name, topicId: t.topicId, errorCode: TOPIC_DENIED, errorMessage: null })),
  ];
  const rest = { ...req, topicNames: req.topicNames.filter((n) => !deniedNames.includes(n)), topics: req.topics.filter((t) => !deniedStates.includes(t)) };
  return serveRest(ctx, rest, next, (res) => ({ ...res, responses: [...(res.responses ?? []), ...errors] }));
});

const createPartitions = guard<CreatePartitionsRequest, CreatePartitionsResponseInput>(37, (az, ctx, req, next) => {
  const denied = req.topics.filter((t) => !az.topic(ctx, AclOperation.ALTER, t.name));
  if (denied.length === 0) return next(ctx, req);
  const errors = denied.map((t) => ({ name: t.name, errorCode: TOPIC_DENIED, errorMessage: null }));
  return serveRest(ctx, { ...req, topics: req.topics.filter((t) => !denied.includes(t)) }, next, (res) => ({ ...res, results: [...(res.results ?? []), ...errors] }));
});

export const TOPIC_GUARDS: readonly Guard<unknown, unknown>[] = [metadata, describeTopicPartitions, describeCluster, createTopics, deleteTopics, createPartitions];
