/**
 * OffsetForLeaderEpoch (key 23), v2-4.
 *
 * Behavior: per partition, the end offset of the requested leader epoch in the log (the start
 * offset of the next larger epoch, or the log end offset for the latest epoch) and that epoch;
 * (-1, -1) when the log knows no epoch ≤ the requested one. CurrentLeaderEpoch older/newer than
 * the partition's → FENCED_LEADER_EPOCH / UNKNOWN_LEADER_EPOCH; unknown partition →
 * UNKNOWN_TOPIC_OR_PARTITION. Consumers (Java, librdkafka) validate positions with this; the
 * mirror fetcher truncates with it.
 */
import { ErrorCode } from '../../protocol/generated/errors.js';
import { decodeOffsetForLeaderEpochRequest, type OffsetForLeaderEpochRequest } from '../../protocol/generated/messages/offset-for-leader-epoch-request.js';
import { encodeOffsetForLeaderEpochResponse, type OffsetForLeaderEpochResponseInput } from '../../protocol/generated/messages/offset-for-leader-epoch-response.js';
import type { ApiHandler } from '../../server/api-handler.js';
import type { BrokerContext } from '../broker-context.js';

type TopicOut = NonNullable<OffsetForLeaderEpochResponseInput['topics']>[number];
type PartOut = NonNullable<TopicOut['partitions']>[number];

export function offsetForLeaderEpochHandler(ctx: BrokerContext): ApiHandler<OffsetForLeaderEpochRequest, OffsetForLeaderEpochResponseInput> {
  return {
    apiKey: 23,
    minVersion: 2,
    maxVersion: 4,
    decode: decodeOffsetForLeaderEpochRequest,
    encode: encodeOffsetForLeaderEpochResponse,
    async handle(_rc, req) {
      const topics: TopicOut[] = [];
      for (const t of req.topics) {
        const parts: PartOut[] = [];
        topics.push({ topic: t.topic, partitions: parts });
        const topic = ctx.image.topic(t.topic);
        for (const p of t.partitions) {
          const out = (errorCode: number, leaderEpoch = -1, endOffset = -1): PartOut => ({ errorCode, partition: p.partition, leaderEpoch, endOffset: BigInt(endOffset) });
          // Only -1 names no epoch in OffsetForLeaderEpoch, as in Kafka: any other value below the partition's is fenced.
          const found = await ctx.replicas.leaderLog(topic, p.partition, { currentLeaderEpoch: p.currentLeaderEpoch === -1 ? null : p.currentLeaderEpoch });
          if ('errorCode' in found) {
            parts.push(out(found.errorCode));
            continue;
          }
          const { log } = found;
          const eo = log.endOffsetForEpoch(p.leaderEpoch);
          parts.push(out(ErrorCode.NONE, eo.epoch, eo.endOffset));
        }
      }
      return { throttleTimeMs: 0, topics };
    },
  };
}
