/**
 * DeleteShareGroupOffsets (key 92), v0 (KIP-932): forgets an empty share group's state for whole
 * topics, so the next fetch starts again at `share.auto.offset.reset`. An unknown group is
 * GROUP_ID_NOT_FOUND, one with members NON_EMPTY_GROUP, an unknown topic
 * UNKNOWN_TOPIC_OR_PARTITION, and so is a topic the group has no state for ("There is no offset
 * information to delete.", Kafka's sharePartitionsEligibleForOffsetDeletion). The state of the
 * topic's initialized partitions is deleted at the share coordinator, and they are no longer
 * initialized: a member subscribing again initializes them anew.
 */
import { ErrorCode } from '../../protocol/generated/errors.js';
import { decodeDeleteShareGroupOffsetsRequest, type DeleteShareGroupOffsetsRequest } from '../../protocol/generated/messages/delete-share-group-offsets-request.js';
import { encodeDeleteShareGroupOffsetsResponse, type DeleteShareGroupOffsetsResponseInput } from '../../protocol/generated/messages/delete-share-group-offsets-response.js';
import type { ApiHandler } from '../../server/api-handler.js';
import type { BrokerContext } from '../broker-context.js';
import type { ShareGroups } from '../share-wiring.js';

const ZERO_UUID = '00000000-0000-0000-0000-000000000000';

export function deleteShareGroupOffsetsHandler(ctx: BrokerContext, share: ShareGroups): ApiHandler<DeleteShareGroupOffsetsRequest, DeleteShareGroupOffsetsResponseInput> {
  return {
    apiKey: 92,
    minVersion: 0,
    maxVersion: 0,
    decode: decodeDeleteShareGroupOffsetsRequest,
    encode: encodeDeleteShareGroupOffsetsResponse,
    async handle(_rc, req) {
      const g = await share.coordinator.find(req.groupId);
      if (g === undefined) return { errorCode: ErrorCode.GROUP_ID_NOT_FOUND, errorMessage: `Group ${req.groupId} not found.`, responses: [] };
      if (g.members.size > 0) return { errorCode: ErrorCode.NON_EMPTY_GROUP, errorMessage: `Share group ${req.groupId} is not empty.`, responses: [] };
      const responses = [];
      for (const t of req.topics) {
        const image = ctx.image.topic(t.topicName);
        if (image === undefined) {
          responses.push({ topicName: t.topicName, topicId: ZERO_UUID, errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION });
          continue;
        }
        const initialized = share.coordinator.initializedPartitions(req.groupId).get(image.topicId) ?? [];
        const held = share.partitions.sharePartitionsOf(req.groupId).filter((h) => h.topicId === image.topicId).map((h) => h.partition);
        if (initialized.length === 0 && held.length === 0) {
          responses.push({ topicName: t.topicName, topicId: image.topicId, errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, errorMessage: 'There is no offset information to delete.' });
          continue;
        }
        let errorCode: number = ErrorCode.NONE;
        const failed = (): void => {
          errorCode = ErrorCode.COORDINATOR_NOT_AVAILABLE;
        };
        for (const p of held) await share.partitions.deleteSharePartition(req.groupId, image.topicId, p).catch(failed);
        // Initialized partitions not held here: their state at the share coordinator.
        for (const p of initialized) if (!held.includes(p)) await share.persister.delete(req.groupId, image.topicId, p).catch(failed);
        if (errorCode === ErrorCode.NONE) await share.coordinator.markUninitialized(req.groupId, image.topicId).catch(failed);
        responses.push({ topicName: t.topicName, topicId: image.topicId, errorCode });
      }
      return { errorCode: ErrorCode.NONE, responses };
    },
  };
}
