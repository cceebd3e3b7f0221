/**
 * DescribeShareGroupOffsets (key 90), v0-1 (KIP-932): per share group, the share-partition start
 * offset (SPSO) of each partition, and v1 its lag (records from the SPSO to the high watermark
 * not yet acknowledged or archived). Null Topics means every partition the group coordinator has
 * initialized for the group (a member's subscription, AlterShareGroupOffsets), with start offset
 * -1 until its share-partition is first fetched, as Kafka answers.
 * An unknown group is GROUP_ID_NOT_FOUND; a partition the group never fetched has StartOffset -1,
 * as Kafka reports a share-partition with no state. A share-partition not held by this node is
 * described by ReadShareGroupStateSummary at its share coordinator (in-process or on another
 * node), its lag from the summary's DeliveryCompleteCount.
 */
import { ErrorCode } from '../../protocol/generated/errors.js';
import { errorCodeOf } from '../../protocol/kafka-error.js';
import { decodeDescribeShareGroupOffsetsRequest, type DescribeShareGroupOffsetsRequest } from '../../protocol/generated/messages/describe-share-group-offsets-request.js';
import { encodeDescribeShareGroupOffsetsResponse, type DescribeShareGroupOffsetsResponseInput } from '../../protocol/generated/messages/describe-share-group-offsets-response.js';
import type { ApiHandler } from '../../server/api-handler.js';
import type { BrokerContext } from '../broker-context.js';
import type { ShareGroups } from '../share-wiring.js';

const ZERO_UUID = '00000000-0000-0000-0000-000000000000';

export function describeShareGroupOffsetsHandler(ctx: BrokerContext, share: ShareGroups): ApiHandler<DescribeShareGroupOffsetsRequest, DescribeShareGroupOffsetsResponseInput> {
  return {
    apiKey: 90,
    minVersion: 0,
    maxVersion: 1,
    decode: decodeDescribeShareGroupOffsetsRequest,
    encode: encodeDescribeShareGroupOffsetsResponse,
    async handle(_rc, req) {
      return {
        throttleTimeMs: 0,
        groups: await Promise.all(req.groups.map(async (g) => {
          if ((await share.coordinator.find(g.groupId)) === undefined) {
            return { groupId: g.groupId, topics: [], errorCode: ErrorCode.GROUP_ID_NOT_FOUND, errorMessage: `Group ${g.groupId} not found.` };
          }
          // Every partition: those the group coordinator initialized (Kafka's describeShareGroupAllOffsets), and any held here.
          const all = share.coordinator.initializedPartitions(g.groupId);
          for (const h of share.partitions.sharePartitionsOf(g.groupId)) {
            const ps = all.get(h.topicId) ?? [];
            if (!ps.includes(h.partition)) all.set(h.topicId, [...ps, h.partition].sort((a, b) => a - b));
          }
          const wanted = g.topics ?? [...all].filter(([id]) => ctx.image.topicsById.has(id)).map(([id, partitions]) => ({ topicName: ctx.image.topicsById.get(id)!.name, partitions }));
          return {
            groupId: g.groupId,
            errorCode: ErrorCode.NONE,
            topics: await Promise.all(wanted.map(async (t) => {
              const image = ctx.image.topic(t.topicName);
              return {
                topicName: t.topicName,
                topicId: image?.topicId ?? ZERO_UUID,
                partitions: await Promise.all(t.partitions.map(async (partitionIndex) => {
                  const p = image?.partitions[partitionIndex];
                  if (image === undefined || p === undefined) {
                    return { partitionIndex, startOffset: -1n, leaderEpoch: -1, errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, errorMessage: null };
                  }
                  const hw = ctx.replicas.getLog(image.name, partitionIndex)?.highWatermark;
                  const sp = share.partitions.sharePartition(g.groupId, image.topicId, partitionIndex);
                  if (sp !== undefined) {
                    return { partitionIndex, startOffset: BigInt(sp.startOffset), leaderEpoch: p.leaderEpoch, lag: BigInt(hw !== undefined ? sp.lag(hw) : -1), errorCode: ErrorCode.NONE, errorMessage: null };
                  }
                  // Held by another node (or by none yet): the share coordinator's summary, as Kafka's GroupCoordinatorService reads it.
                  try {
                    const s = await share.persister.readSummary(g.groupId, image.topicId, partitionIndex);
                    const lag = s.startOffset >= 0 && hw !== undefined && s.deliveryCompleteCount >= 0 ? Math.max(0, hw - s.startOffset - s.deliveryCompleteCount) : -1;
                    return { partitionIndex, startOffset: BigInt(s.startOffset), leaderEpoch: p.leaderEpoch, lag: BigInt(lag), errorCode: ErrorCode.NONE, errorMessage: null };
                  } catch (e) {
                    return { partitionIndex, startOffset: -1n, leaderEpoch: p.leaderEpoch, lag: -1n, errorCode: errorCodeOf(e), errorMessage: null };
                  }
                })),
              };
            })),
          };
        })),
      };
    },
  };
}
