/**
 * Authorization of the share group APIs (KIP-932), as Kafka's KafkaApis checks them:
 *
 * - ShareGroupHeartbeat: READ on the group and DESCRIBE on every subscribed topic.
 * - ShareGroupDescribe, DescribeShareGroupOffsets: DESCRIBE on each group (the others are answered).
 * - ShareFetch, ShareAcknowledge: READ on the group and READ on every topic named; here a request
 *   naming a topic the principal may not read is refused whole (TOPIC_AUTHORIZATION_FAILED).
 * - AlterShareGroupOffsets: READ on the group and on every topic; DeleteShareGroupOffsets: DELETE
 *   on the group and READ on every topic.
 * - Initialize/Read/Write/DeleteShareGroupState, ReadShareGroupStateSummary: CLUSTER_ACTION (inter-broker).
 */
import { AclOperation } from '../../auth/acl-model.js';
import { ErrorCode } from '../../protocol/generated/errors.js';
import type { ShareGroupDescribeRequest } from '../../protocol/generated/messages/share-group-describe-request.js';
import type { ShareGroupDescribeResponseInput } from '../../protocol/generated/messages/share-group-describe-response.js';
import type { DescribeShareGroupOffsetsRequest } from '../../protocol/generated/messages/describe-share-group-offsets-request.js';
import type { DescribeShareGroupOffsetsResponseInput } from '../../protocol/generated/messages/describe-share-group-offsets-response.js';
import { guard, serveRest, wholeRequest, type Guard } from './guard.js';

const GROUP_DENIED = ErrorCode.GROUP_AUTHORIZATION_FAILED;
const TOPIC_DENIED = ErrorCode.TOPIC_AUTHORIZATION_FAILED;

interface ShareDataRequest {
  readonly groupId: string | null;
  readonly topics: readonly { readonly topicId: string }[];
}

const shareData = (apiKey: number): Guard<unknown, unknown> =>
  guard<ShareDataRequest, { errorCode: number; errorMessage: string | null; responses: never[] }>(apiKey, (az, ctx, req, next) => {
    if (!az.group(ctx, AclOperation.READ, req.groupId ?? '')) return { errorCode: GROUP_DENIED, errorMessage: null, responses: [] };
    if (req.topics.some((t) => !az.topic(ctx, AclOperation.READ, az.topicName(null, t.topicId)))) return { errorCode: TOPIC_DENIED, errorMessage: null, responses: [] };
    return next(ctx, req);
  });

const heartbeat = guard<{ groupId: string; subscribedTopicNames: readonly string[] | null }, { errorCode: number; errorMessage: string | null; memberEpoch: number }>(76, (az, ctx, req, next) => {
  if (!az.group(ctx, AclOperation.READ, req.groupId)) return { errorCode: GROUP_DENIED, errorMessage: null, memberEpoch: -1 };
  const refused = (req.subscribedTopicNames ?? []).filter((t) => !az.topic(ctx, AclOperation.DESCRIBE, t));
  if (refused.length > 0) return { errorCode: TOPIC_DENIED, errorMessage: `The following topics are not authorized: ${refused.join(', ')}`, memberEpoch: -1 };
  return next(ctx, req);
});

const describe = guard<ShareGroupDescribeRequest, ShareGroupDescribeResponseInput>(77, (az, ctx, req, next) => {
  const denied = req.groupIds.filter((g) => !az.group(ctx, AclOperation.DESCRIBE, g));
  if (denied.length === 0) return next(ctx, req);
  const errors = denied.map((groupId) => ({ groupId, errorCode: GROUP_DENIED, errorMessage: null, groupState: '' }));
  return serveRest(ctx, { ...req, groupIds: req.groupIds.filter((g) => !denied.includes(g)) }, next, (res) => ({ ...res, groups: [...(res.groups ?? []), ...errors] }));
});

const describeOffsets = guard<DescribeShareGroupOffsetsRequest, DescribeShareGroupOffsetsResponseInput>(90, (az, ctx, req, next) => {
  const denied = req.groups.filter((g) => !az.group(ctx, AclOperation.DESCRIBE, g.groupId));
  if (denied.length === 0) return next(ctx, req);
  const errors = denied.map((g) => ({ groupId: g.groupId, topics: [], errorCode: GROUP_DENIED, errorMessage: null }));
  return serveRest(ctx, { ...req, groups: req.groups.filter((g) => !denied.includes(g)) }, next, (res) => ({ ...res, groups: [...(res.groups ?? []), ...errors] }));
});

const offsetsChange = (apiKey: number, op: number): Guard<unknown, unknown> =>
  wholeRequest<{ groupId: string; topics: readonly { topicName: string }[] }, { errorCode: number; errorMessage: string | null; responses: never[] }>(
    apiKey,
    (az, ctx, req) => az.group(ctx, op, req.groupId) && req.topics.every((t) => az.topic(ctx, AclOperation.READ, t.topicName)),
    () => ({ errorCode: GROUP_DENIED, errorMessage: null, responses: [] }),
  );

const stateRpc = (apiKey: number): Guard<unknown, unknown> =>
  guard<{ topics: readonly { topicId: string; partitions: readonly { partition: number }[] }[] }, { results: unknown[] }>(apiKey, (az, ctx, req, next) => {
    if (az.canCluster(ctx, AclOperation.CLUSTER_ACTION)) return next(ctx, req);
    return { results: req.topics.map((t) => ({ topicId: t.topicId, partitions: t.partitions.map((p) => ({ partition: p.partition, errorCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED, errorMessage: null })) })) };
  });

export const SHARE_GUARDS: readonly Guard<unknown, unknown>[] = [
  heartbeat,
  describe,
  shareData(78),
  shareData(79),
  describeOffsets,
  offsetsChange(91, AclOperation.READ),
  offsetsChange(92, AclOperation.DELETE),
  stateRpc(83),
  stateRpc(84),
  stateRpc(85),
  stateRpc(86),
  stateRpc(87),
];
