/**
 * ShareGroupDescribe (key 77), v1 (KIP-932): per group its state (Empty or Stable), epochs, the
 * assignor ("simple") and every member with its subscription and assignment (topic names
 * included). An unknown id is GROUP_ID_NOT_FOUND with state Dead ("Group X not found."), and so
 * is an id held by a classic, consumer or streams group ("Group X is not a share group."), as
 * Kafka's GroupMetadataManager.shareGroup answers.
 */
import { ErrorCode } from '../../protocol/generated/errors.js';
import { decodeShareGroupDescribeRequest, type ShareGroupDescribeRequest } from '../../protocol/generated/messages/share-group-describe-request.js';
import { encodeShareGroupDescribeResponse, type ShareGroupDescribeResponseInput } from '../../protocol/generated/messages/share-group-describe-response.js';
import type { ApiHandler } from '../../server/api-handler.js';
import { groupAuthorizedOperations, groupNotFound } from '../../coordinator/group-describe.js';
import { SHARE_ASSIGNOR } from '../../share/share-group-coordinator.js';
import type { BrokerContext } from '../broker-context.js';
import type { ShareGroups } from '../share-wiring.js';

export function shareGroupDescribeHandler(ctx: BrokerContext, share: ShareGroups, otherGroupType: (groupId: string) => Promise<boolean>): ApiHandler<ShareGroupDescribeRequest, ShareGroupDescribeResponseInput> {
  return {
    apiKey: 77,
    minVersion: 1,
    maxVersion: 1,
    decode: decodeShareGroupDescribeRequest,
    encode: encodeShareGroupDescribeResponse,
    async handle(_rc, req) {
      const found = await Promise.all(req.groupIds.map((groupId) => share.coordinator.find(groupId)));
      const other = await Promise.all(req.groupIds.map((groupId, i) => (found[i] === undefined ? otherGroupType(groupId) : false)));
      return {
        throttleTimeMs: 0,
        groups: req.groupIds.map((groupId, i) => {
          const g = found[i];
          if (g === undefined) return groupNotFound(groupId, other[i] === true ? 'share' : null);
          return {
            groupId,
            errorCode: ErrorCode.NONE,
            groupState: g.members.size > 0 ? 'Stable' : 'Empty',
            groupEpoch: g.groupEpoch,
            assignmentEpoch: g.assignmentEpoch,
            assignorName: SHARE_ASSIGNOR,
            members: [...g.members.values()].map((m) => ({
              memberId: m.memberId,
              rackId: m.rackId,
              memberEpoch: m.memberEpoch,
              clientId: m.clientId,
              clientHost: m.clientHost,
              subscribedTopicNames: m.subscribedTopicNames,
              assignment: {
                topicPartitions: [...m.assignment].map(([topicId, partitions]) => ({ topicId, topicName: ctx.image.topicsById.get(topicId)?.name ?? '', partitions })),
              },
            })),
            authorizedOperations: groupAuthorizedOperations(req.includeAuthorizedOperations),
          };
        }),
      };
    },
  };
}
