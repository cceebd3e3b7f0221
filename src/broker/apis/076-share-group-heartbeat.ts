/**
 * ShareGroupHeartbeat (key 76), v1 (KIP-932).
 *
 * Behavior (share-group-coordinator.ts): join with MemberEpoch 0 and a client-chosen MemberId
 * (empty is INVALID_REQUEST, as are missing SubscribedTopicNames on a join), heartbeat with the
 * current epoch (else FENCED_MEMBER_EPOCH; an unknown member is UNKNOWN_MEMBER_ID), leave with
 * -1. The response carries the member's epoch, `share.heartbeat.interval.ms`, and the assignment
 * when it is new to the member. A group id held by a classic, consumer or streams group is
 * GROUP_ID_NOT_FOUND ("is not a share group"), and so is a heartbeat or leave (epoch other than 0)
 * naming no group ("Share group X not found."), as in Kafka's GroupMetadataManager.
 */
import { ErrorCode } from '../../protocol/generated/errors.js';
import { decodeShareGroupHeartbeatRequest, type ShareGroupHeartbeatRequest } from '../../protocol/generated/messages/share-group-heartbeat-request.js';
import { encodeShareGroupHeartbeatResponse, type ShareGroupHeartbeatResponseInput } from '../../protocol/generated/messages/share-group-heartbeat-response.js';
import type { ApiHandler } from '../../server/api-handler.js';
import type { ShareGroups } from '../share-wiring.js';

export function shareGroupHeartbeatHandler(share: ShareGroups, otherGroupType: (groupId: string) => Promise<boolean>): ApiHandler<ShareGroupHeartbeatRequest, ShareGroupHeartbeatResponseInput> {
  return {
    apiKey: 76,
    minVersion: 1,
    maxVersion: 1,
    decode: decodeShareGroupHeartbeatRequest,
    encode: encodeShareGroupHeartbeatResponse,
    async handle(rc, req) {
      if (req.groupId !== '' && !share.coordinator.groups.has(req.groupId) && (await otherGroupType(req.groupId))) {
        return { errorCode: ErrorCode.GROUP_ID_NOT_FOUND, errorMessage: `Group ${req.groupId} is not a share group.`, memberId: null, memberEpoch: -1, heartbeatIntervalMs: 0, assignment: null };
      }
      const r = await share.coordinator.heartbeat({
        groupId: req.groupId,
        memberId: req.memberId,
        memberEpoch: req.memberEpoch,
        rackId: req.rackId,
        subscribedTopicNames: req.subscribedTopicNames,
        clientId: rc.clientId ?? '',
        clientHost: rc.clientAddress,
      });
      return {
        throttleTimeMs: 0,
        errorCode: r.errorCode,
        errorMessage: r.errorMessage,
        memberId: r.memberId,
        memberEpoch: r.memberEpoch,
        heartbeatIntervalMs: r.heartbeatIntervalMs,
        assignment: r.assignment === null ? null : { topicPartitions: r.assignment },
      };
    },
  };
}
