/**
 * AlterShareGroupOffsets (key 91), v0 (KIP-932): sets the share-partition start offset of
 * partitions of an empty share group (one with members is NON_EMPTY_GROUP; an unknown group is
 * created empty, as Kafka does), dropping their delivery state: the next fetch delivers from the
 * new offset. A partition that does not exist is UNKNOWN_TOPIC_OR_PARTITION, and one this node
 * does not lead, or leads while fenced, NOT_LEADER_OR_FOLLOWER (share-partition state lives on
 * the unfenced partition leader, as share fetches are served there). The altered
 * partitions count as initialized for the group (ShareGroupStatePartitionMetadata).
 */
import { ErrorCode } from '../../protocol/generated/errors.js';
import { errorCodeOf } from '../../protocol/kafka-error.js';
import { decodeAlterShareGroupOffsetsRequest, type AlterShareGroupOffsetsRequest } from '../../protocol/generated/messages/alter-share-group-offsets-request.js';
import { encodeAlterShareGroupOffsetsResponse, type AlterShareGroupOffsetsResponseInput } from '../../protocol/generated/messages/alter-share-group-offsets-response.js';
import type { ApiHandler } from '../../server/api-handler.js';
import type { BrokerContext } from '../broker-context.js';
import type { ShareGroups } from '../share-wiring.js';

const ZERO_UUID = '00000000-0000-0000-0000-000000000000';

export function alterShareGroupOffsetsHandler(ctx: BrokerContext, share: ShareGroups): ApiHandler<AlterShareGroupOffsetsRequest, AlterShareGroupOffsetsResponseInput> {
  return {
    apiKey: 91,
    minVersion: 0,
    maxVersion: 0,
    decode: decodeAlterShareGroupOffsetsRequest,
    encode: encodeAlterShareGroupOffsetsResponse,
    async handle(_rc, req) {
      const existing = await share.coordinator.find(req.groupId);
      if (existing !== undefined && existing.members.size > 0) {
        return { errorCode: ErrorCode.NON_EMPTY_GROUP, errorMessage: `Share group ${req.groupId} is not empty.`, responses: [] };
      }
      try {
        await share.coordinator.ensureGroup(req.groupId);
      } catch (e) {
        return { errorCode: errorCodeOf(e), errorMessage: null, responses: [] };
      }
      const writes: Promise<void>[] = [];
      const altered = new Map<string, number[]>();
      const response = {
        errorCode: ErrorCode.NONE,
        responses: req.topics.map((t) => {
          const image = ctx.image.topic(t.topicName);
          return {
            topicName: t.topicName,
            topicId: image?.topicId ?? ZERO_UUID,
            partitions: t.partitions.map((p) => {
              const led = ctx.replicas.leadership(image, p.partitionIndex);
              if (typeof led === 'number') return { partitionIndex: p.partitionIndex, errorCode: led };
              const { topicId } = led.topic;
              share.partitions.initSharePartition(req.groupId, topicId, p.partitionIndex, Number(p.startOffset), led.part.leaderEpoch);
              writes.push(share.partitions.persist(req.groupId, topicId, p.partitionIndex, led.part.leaderEpoch));
              altered.set(topicId, [...(altered.get(topicId) ?? []), p.partitionIndex]);
              return { partitionIndex: p.partitionIndex, errorCode: ErrorCode.NONE };
            }),
          };
        }),
      };
      // Answered once the new start offsets are durable.
      let failed = (await Promise.allSettled(writes)).some((w) => w.status === 'rejected');
      // The partitions now have state: the group coordinator counts them initialized (Kafka's alterShareGroupOffsets).
      if (!failed) for (const [topicId, ps] of altered) await share.coordinator.markInitialized(req.groupId, topicId, ps).catch(() => (failed = true));
      return failed ? { errorCode: ErrorCode.COORDINATOR_NOT_AVAILABLE, errorMessage: 'The share-partition state could not be written.', responses: [] } : response;
    },
  };
}
