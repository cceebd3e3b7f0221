/**
 * Authorization of the group APIs (Kafka's KafkaApis / GroupCoordinator handling): joining,
 * syncing, heart-beating and leaving need READ on the group; FindCoordinator DESCRIBE on the
 * group (or on the transactional id); OffsetCommit READ on the group and on each topic;
 * OffsetFetch DESCRIBE on the group and each topic; DescribeGroups DESCRIBE; ListGroups DESCRIBE
 * on the cluster or lists only the groups the caller may describe; DeleteGroups DELETE;
 * OffsetDelete DELETE on the group and READ on each topic.
 */
import { AclOperation, ResourceType } from '../../auth/acl-model.js';
import { ErrorCode } from '../../protocol/generated/errors.js';
import type { ConsumerGroupDescribeRequest } from '../../protocol/generated/messages/consumer-group-describe-request.js';
import type { ConsumerGroupDescribeResponseInput } from '../../protocol/generated/messages/consumer-group-describe-response.js';
import type { ConsumerGroupHeartbeatRequest } from '../../protocol/generated/messages/consumer-group-heartbeat-request.js';
import type { ConsumerGroupHeartbeatResponseInput } from '../../protocol/generated/messages/consumer-group-heartbeat-response.js';
import type { StreamsGroupDescribeRequest } from '../../protocol/generated/messages/streams-group-describe-request.js';
import type { StreamsGroupDescribeResponseInput } from '../../protocol/generated/messages/streams-group-describe-response.js';
import type { StreamsGroupHeartbeatRequest } from '../../protocol/generated/messages/streams-group-heartbeat-request.js';
import type { StreamsGroupHeartbeatResponseInput } from '../../protocol/generated/messages/streams-group-heartbeat-response.js';
import type { DeleteGroupsRequest } from '../../protocol/generated/messages/delete-groups-request.js';
import type { DeleteGroupsResponseInput } from '../../protocol/generated/messages/delete-groups-response.js';
import type { DescribeGroupsRequest } from '../../protocol/generated/messages/describe-groups-request.js';
import type { DescribeGroupsResponseInput } from '../../protocol/generated/messages/describe-groups-response.js';
import type { FindCoordinatorRequest } from '../../protocol/generated/messages/find-coordinator-request.js';
import type { FindCoordinatorResponseInput } from '../../protocol/generated/messages/find-coordinator-response.js';
import type { ListGroupsResponseInput } from '../../protocol/generated/messages/list-groups-response.js';
import type { OffsetCommitRequest } from '../../protocol/generated/messages/offset-commit-request.js';
import type { OffsetCommitResponseInput } from '../../protocol/generated/messages/offset-commit-response.js';
import type { OffsetDeleteRequest } from '../../protocol/generated/messages/offset-delete-request.js';
import type { OffsetDeleteResponseInput } from '../../protocol/generated/messages/offset-delete-response.js';
import type { OffsetFetchRequest } from '../../protocol/generated/messages/offset-fetch-request.js';
import type { OffsetFetchResponseInput } from '../../protocol/generated/messages/offset-fetch-response.js';
import type { RequestContext } from '../../server/api-handler.js';
import { guard, serveRest, wholeRequest, type Authz, type Guard } from './guard.js';

const GROUP_DENIED = ErrorCode.GROUP_AUTHORIZATION_FAILED;
const TOPIC_DENIED = ErrorCode.TOPIC_AUTHORIZATION_FAILED;

/** JoinGroup, Heartbeat, LeaveGroup, SyncGroup and ConsumerGroupHeartbeat: READ on the group. */
const readGroup = (apiKey: number): Guard<unknown, unknown> =>
  wholeRequest<{ groupId: string }, { errorCode: number }>(apiKey, (az, ctx, req) => az.group(ctx, AclOperation.READ, req.groupId), () => ({ errorCode: GROUP_DENIED }));

/**
 * ConsumerGroupHeartbeat: READ on the group, and DESCRIBE on every subscribed topic name
 * (Kafka's KafkaApis.handleConsumerGroupHeartbeat).
 */
const consumerGroupHeartbeat = guard<ConsumerGroupHeartbeatRequest, ConsumerGroupHeartbeatResponseInput>(68, (az, ctx, req, next) => {
  if (!az.group(ctx, AclOperation.READ, req.groupId)) return { errorCode: GROUP_DENIED, errorMessage: null, memberEpoch: -1 };
  const refused = (req.subscribedTopicNames ?? []).filter((t) => !az.topic(ctx, AclOperation.DESCRIBE, t));
  if (refused.length > 0) return { errorCode: TOPIC_DENIED, errorMessage: `The following topics are not authorized: ${refused.join(', ')}`, memberEpoch: -1 };
  return next(ctx, req);
});

/**
 * StreamsGroupHeartbeat: READ on the group, and DESCRIBE on every topic its topology names
 * (source, repartition and changelog topics), as Kafka's KafkaApis.handleStreamsGroupHeartbeat.
 */
const streamsGroupHeartbeat = guard<StreamsGroupHeartbeatRequest, StreamsGroupHeartbeatResponseInput>(88, (az, ctx, req, next) => {
  if (!az.group(ctx, AclOperation.READ, req.groupId)) return { errorCode: GROUP_DENIED, errorMessage: null, memberEpoch: -1 };
  const named = new Set<string>();
  for (const st of req.topology?.subtopologies ?? []) {
    for (const t of st.sourceTopics) named.add(t);
    for (const t of st.repartitionSinkTopics) named.add(t);
    for (const t of st.repartitionSourceTopics) named.add(t.name);
    for (const t of st.stateChangelogTopics) named.add(t.name);
  }
  const refused = [...named].filter((t) => !az.topic(ctx, AclOperation.DESCRIBE, t));
  if (refused.length > 0) return { errorCode: TOPIC_DENIED, errorMessage: `The following topics are not authorized: ${refused.join(', ')}`, memberEpoch: -1 };
  return next(ctx, req);
});

const findCoordinator = guard<FindCoordinatorRequest, FindCoordinatorResponseInput>(10, async (az, ctx, req, next) => {
  // Share coordinators (key type 2) are looked up by brokers: CLUSTER_ACTION, as in KafkaApis.
  const may = (key: string): boolean =>
    req.keyType === 1 ? az.can(ctx, AclOperation.DESCRIBE, ResourceType.TRANSACTIONAL_ID, key) : req.keyType === 2 ? az.canCluster(ctx, AclOperation.CLUSTER_ACTION) : req.keyType !== 0 || az.group(ctx, AclOperation.DESCRIBE, key);
  const code = req.keyType === 1 ? ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED : req.keyType === 2 ? ErrorCode.CLUSTER_AUTHORIZATION_FAILED : GROUP_DENIED;
  if (ctx.apiVersion < 4) {
    if (may(req.key)) return next(ctx, req);
    return { errorCode: code, ...(ctx.apiVersion >= 1 ? { errorMessage: null } : {}), nodeId: -1, host: '', port: -1 };
  }
  const denied = req.coordinatorKeys.filter((k) => !may(k));
  if (denied.length === 0) return next(ctx, req);
  const errors = denied.map((key) => ({ key, nodeId: -1, host: '', port: -1, errorCode: code, errorMessage: null }));
  return serveRest(ctx, { ...req, coordinatorKeys: req.coordinatorKeys.filter((k) => !denied.includes(k)) }, next, (res) => ({ ...res, coordinators: [...(res.coordinators ?? []), ...errors] }));
});

const offsetCommit = guard<OffsetCommitRequest, OffsetCommitResponseInput>(8, (az, ctx, req, next) => {
  const topicError = (t: OffsetCommitRequest['topics'][number], code: number): { name: string; topicId: string; partitions: { partitionIndex: number; errorCode: number }[] } => ({
    name: t.name,
    topicId: t.topicId,
    partitions: t.partitions.map((p) => ({ partitionIndex: p.partitionIndex, errorCode: code })),
  });
  if (!az.group(ctx, AclOperation.READ, req.groupId)) return { topics: req.topics.map((t) => topicError(t, GROUP_DENIED)) };
  const denied = req.topics.filter((t) => {
    const name = az.topicName(t.name, t.topicId);
    return name !== '' && !az.topic(ctx, AclOperation.READ, name);
  });
  if (denied.length === 0) return next(ctx, req);
  const errors = denied.map((t) => topicError(t, TOPIC_DENIED));
  return serveRest(ctx, { ...req, topics: req.topics.filter((t) => !denied.includes(t)) }, next, (res) => ({ ...res, topics: [...(res.topics ?? []), ...errors] }));
});

/** OffsetFetch: DESCRIBE on each group; topics the caller may not describe are refused or hidden. */
const offsetFetch = guard<OffsetFetchRequest, OffsetFetchResponseInput>(9, async (az, ctx, req, next) => {
  const describable = (name: string): boolean => az.topic(ctx, AclOperation.DESCRIBE, name);
  if (ctx.apiVersion < 8) {
    if (!az.group(ctx, AclOperation.DESCRIBE, req.groupId)) return { errorCode: GROUP_DENIED, topics: [] };
    const denied = (req.topics ?? []).filter((t) => !describable(t.name));
    const rest = req.topics === null ? req : { ...req, topics: req.topics.filter((t) => !denied.includes(t)) };
    const res = await next(ctx, rest);
    if (res === null) return null;
    const errors = denied.map((t) => ({ name: t.name, partitions: t.partitionIndexes.map((i) => ({ partitionIndex: i, committedOffset: -1n, metadata: '', errorCode: TOPIC_DENIED })) }));
    const shown = req.topics === null ? (res.topics ?? []).filter((t) => describable(t.name ?? '')) : (res.topics ?? []);
    return { ...res, topics: [...shown, ...errors] };
  }
  const deniedGroups = req.groups.filter((g) => !az.group(ctx, AclOperation.DESCRIBE, g.groupId));
  const deniedTopics = new Map<string, NonNullable<OffsetFetchRequest['groups'][number]['topics']>>();
  const rest = {
    ...req,
    groups: req.groups
      .filter((g) => !deniedGroups.includes(g))
      .map((g) => {
        if (g.topics === null) return g;
        // v10 names topics by id only (empty names): match denied entries by identity, not name.
        const denied = g.topics.filter((t) => !describable(az.topicName(t.name, t.topicId)));
        deniedTopics.set(g.groupId, denied);
        return { ...g, topics: g.topics.filter((t) => !denied.includes(t)) };
      }),
  };
  const res = await next(ctx, rest);
  if (res === null) return null;
  const groups = (res.groups ?? []).map((g) => {
    const asked = req.groups.find((x) => x.groupId === g.groupId);
    const deniedHere = deniedTopics.get(g.groupId ?? '') ?? [];
    const shown = asked?.topics === null ? (g.topics ?? []).filter((t) => describable(az.topicName(t.name ?? '', t.topicId))) : (g.topics ?? []);
    const errors = deniedHere.map((t) => ({ name: t.name, topicId: t.topicId, partitions: t.partitionIndexes.map((i) => ({ partitionIndex: i, committedOffset: -1n, metadata: '', errorCode: TOPIC_DENIED })) }));
    return { ...g, topics: [...shown, ...errors] };
  });
  return { ...res, groups: [...groups, ...deniedGroups.map((g) => ({ groupId: g.groupId, errorCode: GROUP_DENIED, topics: [] }))] };
});

function groupOps(az: Authz, ctx: RequestContext, groupId: string): number {
  return az.authorizer.authorizedOperations(ctx, ResourceType.GROUP, groupId);
}

const describeGroups = guard<DescribeGroupsRequest, DescribeGroupsResponseInput>(15, async (az, ctx, req, next) => {
  const denied = req.groups.filter((g) => !az.group(ctx, AclOperation.DESCRIBE, g));
  const res = await next(ctx, { ...req, groups: req.groups.filter((g) => !denied.includes(g)) });
  if (res === null) return null;
  const described = (res.groups ?? []).map((g) => (req.includeAuthorizedOperations ? { ...g, authorizedOperations: groupOps(az, ctx, g.groupId ?? '') } : g));
  const errors = denied.map((groupId) => ({ groupId, errorCode: GROUP_DENIED, groupState: '', protocolType: '', protocolData: '', members: [] }));
  return { ...res, groups: [...described, ...errors] };
});

const consumerGroupDescribe = guard<ConsumerGroupDescribeRequest, ConsumerGroupDescribeResponseInput>(69, async (az, ctx, req, next) => {
  const denied = req.groupIds.filter((g) => !az.group(ctx, AclOperation.DESCRIBE, g));
  const res = await next(ctx, { ...req, groupIds: req.groupIds.filter((g) => !denied.includes(g)) });
  if (res === null) return null;
  const described = (res.groups ?? []).map((g) => (req.includeAuthorizedOperations ? { ...g, authorizedOperations: groupOps(az, ctx, g.groupId ?? '') } : g));
  return { ...res, groups: [...described, ...denied.map((groupId) => ({ groupId, errorCode: GROUP_DENIED, errorMessage: null }))] };
});

/** StreamsGroupDescribe: DESCRIBE on each group; the others are answered GROUP_AUTHORIZATION_FAILED. */
const streamsGroupDescribe = guard<StreamsGroupDescribeRequest, StreamsGroupDescribeResponseInput>(89, async (az, ctx, req, next) => {
  const denied = req.groupIds.filter((g) => !az.group(ctx, AclOperation.DESCRIBE, g));
  const res = await next(ctx, { ...req, groupIds: req.groupIds.filter((g) => !denied.includes(g)) });
  if (res === null) return null;
  const described = (res.groups ?? []).map((g) => (req.includeAuthorizedOperations ? { ...g, authorizedOperations: groupOps(az, ctx, g.groupId ?? '') } : g));
  return { ...res, groups: [...described, ...denied.map((groupId) => ({ groupId, errorCode: GROUP_DENIED, errorMessage: null }))] };
});

const listGroups = guard<unknown, ListGroupsResponseInput>(16, async (az, ctx, req, next) => {
  // DESCRIBE on the cluster lists every group; otherwise only the groups the caller may describe.
  if (az.canCluster(ctx, AclOperation.DESCRIBE)) return next(ctx, req);
  const res = await next(ctx, req);
  if (res === null) return null;
  return { ...res, groups: (res.groups ?? []).filter((g) => az.group(ctx, AclOperation.DESCRIBE, g.groupId ?? '')) };
});

const deleteGroups = guard<DeleteGroupsRequest, DeleteGroupsResponseInput>(42, (az, ctx, req, next) => {
  const denied = req.groupsNames.filter((g) => !az.group(ctx, AclOperation.DELETE, g));
  if (denied.length === 0) return next(ctx, req);
  const errors = denied.map((groupId) => ({ groupId, errorCode: GROUP_DENIED }));
  return serveRest(ctx, { ...req, groupsNames: req.groupsNames.filter((g) => !denied.includes(g)) }, next, (res) => ({ ...res, results: [...(res.results ?? []), ...errors] }));
});

const offsetDelete = guard<OffsetDeleteRequest, OffsetDeleteResponseInput>(47, (az, ctx, req, next) => {
  if (!az.group(ctx, AclOperation.DELETE, req.groupId)) return { errorCode: GROUP_DENIED };
  const denied = req.topics.filter((t) => !az.topic(ctx, AclOperation.READ, t.name));
  if (denied.length === 0) return next(ctx, req);
  const errors = denied.map((t) => ({ name: t.name, partitions: t.partitions.map((p) => ({ partitionIndex: p.partitionIndex, errorCode: TOPIC_DENIED })) }));
  return serveRest(ctx, { ...req, topics: req.topics.filter((t) => !denied.includes(t)) }, next, (res) => ({ ...res, topics: [...(res.topics ?? []), ...errors] }));
});

export const GROUP_GUARDS: readonly Guard<unknown, unknown>[] = [
  findCoordinator,
  readGroup(11),
  readGroup(12),
  readGroup(13),
  readGroup(14),
  consumerGroupHeartbeat,
  offsetCommit,
  offsetFetch,
  describeGroups,
  consumerGroupDescribe,
  streamsGroupHeartbeat,
  streamsGroupDescribe,
  listGroups,
  deleteGroups,
  offsetDelete,
];
