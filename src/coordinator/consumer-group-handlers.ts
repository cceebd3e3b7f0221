import type { ApiHandler } from '../server/api-handler.js';
import { decodeConsumerGroupHeartbeatRequest } from '../protocol/generated/messages/consumer-group-heartbeat-request.js';
import type { ConsumerGroupHeartbeatRequest } from '../protocol/generated/messages/consumer-group-heartbeat-request.js';
import { encodeConsumerGroupHeartbeatResponse } from '../protocol/generated/messages/consumer-group-heartbeat-response.js';
import type { ConsumerGroupHeartbeatResponseInput } from '../protocol/generated/messages/consumer-group-heartbeat-response.js';
import { decodeConsumerGroupDescribeRequest } from '../protocol/generated/messages/consumer-group-describe-request.js';
import type { ConsumerGroupDescribeRequest } from '../protocol/generated/messages/consumer-group-describe-request.js';
import { encodeConsumerGroupDescribeResponse } from '../protocol/generated/messages/consumer-group-describe-response.js';
import type { ConsumerGroupDescribeResponseInput } from '../protocol/generated/messages/consumer-group-describe-response.js';
import type { GroupCoordinator } from './group-coordinator.js';
import { errorCodeOf } from '../protocol/kafka-error.js';
import { describeEachGroup, groupAuthorizedOperations, groupNotFound } from './group-describe.js';

/** ConsumerGroupHeartbeat and ConsumerGroupDescribe (KIP-848). */
export function consumerGroupHandlers(gc: GroupCoordinator): ApiHandler[] {
  /*
   * ConsumerGroupHeartbeat v0-1: join (epoch 0), heartbeat, leave (-1, static -2). v1 member ids
   * come from the client (KIP-1082) and regex subscriptions are allowed. The assignment is sent
   * on a full request (join, or every field resent after an error) or when it changed.
   */
  const heartbeat: ApiHandler<ConsumerGroupHeartbeatRequest, ConsumerGroupHeartbeatResponseInput> = {
    apiKey: 68,
    minVersion: 0,
    maxVersion: 1,
    decode: decodeConsumerGroupHeartbeatRequest,
    encode: encodeConsumerGroupHeartbeatResponse,
    async handle(ctx, req) {
      try {
        const r = await gc.consumerHeartbeat({
          groupId: req.groupId,
          memberId: req.memberId,
          memberEpoch: req.memberEpoch,
          instanceId: req.instanceId,
          rackId: req.rackId,
          rebalanceTimeoutMs: req.rebalanceTimeoutMs,
          subscribedTopicNames: req.subscribedTopicNames,
          subscribedTopicRegex: ctx.apiVersion >= 1 ? req.subscribedTopicRegex : null,
          serverAssignor: req.serverAssignor,
          topicPartitions: req.topicPartitions,
          clientId: ctx.clientId ?? '',
          clientHost: ctx.clientAddress,
          version: ctx.apiVersion,
        });
        return {
          errorCode: r.errorCode,
          errorMessage: r.errorMessage,
          memberId: r.memberId,
          memberEpoch: r.memberEpoch,
          heartbeatIntervalMs: r.heartbeatIntervalMs,
          assignment: r.assignment === null ? null : { topicPartitions: [...r.assignment].map(([topicId, partitions]) => ({ topicId, partitions })) },
        };
      } catch (e) {
        return { errorCode: errorCodeOf(e), memberId: null, memberEpoch: -1, assignment: null };
      }
    },
  };

  /* ConsumerGroupDescribe v0-1: classic or unknown ids answer GROUP_ID_NOT_FOUND. */
  const describe: ApiHandler<ConsumerGroupDescribeRequest, ConsumerGroupDescribeResponseInput> = {
    apiKey: 69,
    minVersion: 0,
    maxVersion: 1,
    decode: decodeConsumerGroupDescribeRequest,
    encode: encodeConsumerGroupDescribeResponse,
    async handle(ctx, req) {
      const groups = await describeEachGroup(req.groupIds, async (groupId) => {
        const { description: d, isClassic } = await gc.describeConsumerGroup(groupId);
        if (!d) return groupNotFound(groupId, isClassic ? 'consumer' : null);
        return {
          groupId,
          groupState: d.groupState,
          groupEpoch: d.groupEpoch,
          assignmentEpoch: d.assignmentEpoch,
          assignorName: d.assignorName,
          members: d.members.map((m) => ({
            ...m,
            assignment: { topicPartitions: m.assignment },
            targetAssignment: { topicPartitions: m.targetAssignment },
            ...(ctx.apiVersion >= 1 ? { memberType: 1 } : {}),
          })),
          authorizedOperations: groupAuthorizedOperations(req.includeAuthorizedOperations),
        };
      });
      return { groups };
    },
  };
  return [heartbeat, describe];
}
