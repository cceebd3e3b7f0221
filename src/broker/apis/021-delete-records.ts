/**
 * DeleteRecords (key 21), v0-2.
 *
 * Behavior: moves each partition's log start offset up to the given offset (-1 = the high
 * watermark) and deletes the segments wholly below it; an offset above the high watermark →
 * OFFSET_OUT_OF_RANGE; below the current log start it is a no-op. Answers the new low watermark.
 * Internal topics are refused (INVALID_TOPIC_EXCEPTION): their coordinators own their history.
 * Only the unfenced leader moves the log start (Kafka's Partition.deleteRecordsOnLeader), through
 * ReplicaManager's leader check: a follower, a node with no replica, or a fenced leader answers
 * NOT_LEADER_OR_FOLLOWER; followers follow the leader's log start when they fetch.
 * A mirror topic's partition that is not STOPPED is refused with READ_ONLY_TOPIC (KIP-1279).
 */
import { ErrorCode } from '../../protocol/generated/errors.js';
import { decodeDeleteRecordsRequest, type DeleteRecordsRequest } from '../../protocol/generated/messages/delete-records-request.js';
import { encodeDeleteRecordsResponse, type DeleteRecordsResponseInput } from '../../protocol/generated/messages/delete-records-response.js';
import { errorCodeOf } from '../../protocol/kafka-error.js';
import type { ApiHandler } from '../../server/api-handler.js';
import { INTERNAL_TOPICS, type BrokerContext } from '../broker-context.js';
import { clientWriteError } from '../coordinator-host-impl.js';

type TopicOut = NonNullable<DeleteRecordsResponseInput['topics']>[number];
type PartOut = NonNullable<TopicOut['partitions']>[number];

export function deleteRecordsHandler(ctx: BrokerContext): ApiHandler<DeleteRecordsRequest, DeleteRecordsResponseInput> {
  return {
    apiKey: 21,
    minVersion: 0,
    maxVersion: 2,
    decode: decodeDeleteRecordsRequest,
    encode: encodeDeleteRecordsResponse,
    async handle(_rc, req) {
      const topics: TopicOut[] = [];
      for (const t of req.topics) {
        const parts: PartOut[] = [];
        topics.push({ name: t.name, partitions: parts });
        const topic = ctx.image.topic(t.name);
        for (const p of t.partitions) {
          const out = (errorCode: number, low = -1): PartOut => ({ partitionIndex: p.partitionIndex, lowWatermark: BigInt(low), errorCode });
          // Kafka answers an unknown partition before refusing an internal topic.
          if (topic?.partitions[p.partitionIndex] === undefined) {
            parts.push(out(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION));
            continue;
          }
          if (INTERNAL_TOPICS.has(t.name)) {
            parts.push(out(ErrorCode.INVALID_TOPIC_EXCEPTION));
            continue;
          }
          const found = await ctx.replicas.leaderLog(topic, p.partitionIndex);
          if ('errorCode' in found) {
            parts.push(out(found.errorCode));
            continue;
          }
          const { log } = found;
          // Where a mirrored log starts follows the source; the read-only guard covers this too.
          const refused = clientWriteError(ctx, t.name, p.partitionIndex);
          if (refused !== ErrorCode.NONE) {
            parts.push(out(refused));
            continue;
          }
          const offset = Number(p.offset);
          const target = offset === -1 ? log.highWatermark : offset;
          if (target < 0 || target > log.highWatermark) {
            parts.push(out(ErrorCode.OFFSET_OUT_OF_RANGE));
            continue;
          }
          try {
            const low = await log.deleteRecordsBefore(target);
            // The new log start lives only in the checkpoint file until segments catch up.
            await ctx.replicas.checkpoint();
            parts.push(out(ErrorCode.NONE, low));
          } catch (err) {
            parts.push(out(errorCodeOf(err)));
          }
        }
      }
      return { throttleTimeMs: 0, topics };
    },
  };
}
