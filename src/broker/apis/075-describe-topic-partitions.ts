/**
 * DescribeTopicPartitions (key 75), v0.
 *
 * Behavior: the named topics (or every topic when the list is empty), sorted by name, partitions
 * in order, paginated by ResponsePartitionLimit with a cursor (topic name, first partition) like
 * Kafka's DescribeTopicPartitionsRequestHandler. Unknown named topics → UNKNOWN_TOPIC_OR_PARTITION,
 * or INVALID_TOPIC_EXCEPTION when the name is not a valid topic name.
 * Paging follows Kafka's metadata cache: an unknown topic gets its error entry only while partitions
 * may still be listed, and once the limit is reached the cursor names the next topic, known or
 * not; the cursor's end index is a Java int (it wraps for a cursor near 2^31 - 1).
 * A cursor with a negative partition, or naming a topic the (non-empty) list does not name, fails
 * the request: INVALID_REQUEST on every topic entry, as Kafka's handler throws
 * InvalidRequestException and answers with the request's error response.
 */
import { ErrorCode } from '../../protocol/generated/errors.js';
import { decodeDescribeTopicPartitionsRequest, type DescribeTopicPartitionsRequest } from '../../protocol/generated/messages/describe-topic-partitions-request.js';
import {
  encodeDescribeTopicPartitionsResponse,
  type DescribeTopicPartitionsResponseInput,
} from '../../protocol/generated/messages/describe-topic-partitions-response.js';
import type { ApiHandler } from '../../server/api-handler.js';
import { INTERNAL_TOPICS, type BrokerContext } from '../broker-context.js';
import { TOPIC_OPERATIONS } from './003-metadata.js';
import { topicNameError } from '../../controller/controller.js';

const ZERO_UUID = '00000000-0000-0000-0000-000000000000';
type TopicOut = NonNullable<DescribeTopicPartitionsResponseInput['topics']>[number];

export function describeTopicPartitionsHandler(ctx: BrokerContext): ApiHandler<DescribeTopicPartitionsRequest, DescribeTopicPartitionsResponseInput> {
  return {
    apiKey: 75,
    minVersion: 0,
    maxVersion: 0,
    decode: decodeDescribeTopicPartitionsRequest,
    encode: encodeDescribeTopicPartitionsResponse,
    handle(_rc, req) {
      const names = req.topics.length === 0 ? [...ctx.image.topicsByName.keys()] : [...new Set(req.topics.map((t) => t.name))];
      names.sort();
      const cursor = req.cursor;
      if (cursor && (cursor.partitionIndex < 0 || (req.topics.length > 0 && !names.includes(cursor.topicName)))) {
        return { throttleTimeMs: 0, topics: req.topics.map((t) => ({ errorCode: ErrorCode.INVALID_REQUEST, name: t.name, topicId: ZERO_UUID, isInternal: false, partitions: [] })), nextCursor: null };
      }
      // Kafka's KRaftMetadataCache.getTopicMetadataForDescribeTopicResponse: while the budget
      // lasts, each topic gets its partitions from its first one (the cursor's for the cursor's
      // topic) up to the budget, and an unknown topic an error entry; a topic that does not fit
      // whole sets the cursor to its first partition left out and ends the answer; once the budget
      // is spent, the cursor names the next topic (known or not) at partition 0. The last index is
      // first + budget in a Java int, so a cursor near 2^31 - 1 wraps it and points the cursor at
      // that negative index.
      // The request's limit, at most the broker's max.request.partition.size.limit.
      let budget = Math.max(1, Math.min(req.responsePartitionLimit, Number(ctx.configs.brokerValue('max.request.partition.size.limit') ?? 2000)));
      const topics: TopicOut[] = [];
      let nextCursor: { topicName: string; partitionIndex: number } | null = null;
      for (const name of names) {
        if (cursor && name < cursor.topicName) continue;
        if (budget === 0) {
          nextCursor = { topicName: name, partitionIndex: 0 };
          break;
        }
        const t = ctx.image.topic(name);
        if (!t) {
          const errorCode = topicNameError(name) !== null ? ErrorCode.INVALID_TOPIC_EXCEPTION : ErrorCode.UNKNOWN_TOPIC_OR_PARTITION;
          topics.push({ errorCode, name, topicId: ZERO_UUID, isInternal: false, partitions: [] });
          continue;
        }
        const first = cursor && name === cursor.topicName ? cursor.partitionIndex : 0;
        const upper = Math.min(t.partitions.length, (first + budget) | 0);
        const parts: NonNullable<TopicOut['partitions']>[number][] = [];
        for (let p = first; p < upper; p++) {
          const part = t.partitions[p]!;
          parts.push({
            errorCode: ErrorCode.NONE,
            partitionIndex: part.partition,
            leaderId: part.leader,
            leaderEpoch: part.leaderEpoch,
            replicaNodes: part.replicas,
            isrNodes: part.isr,
            eligibleLeaderReplicas: [],
            lastKnownElr: [],
            offlineReplicas: [],
          });
        }
        topics.push({ errorCode: ErrorCode.NONE, name, topicId: t.topicId, isInternal: INTERNAL_TOPICS.has(name), partitions: parts, topicAuthorizedOperations: TOPIC_OPERATIONS });
        if (upper < t.partitions.length) {
          nextCursor = { topicName: name, partitionIndex: upper };
          break;
        }
        budget -= parts.length;
      }
      return { throttleTimeMs: 0, topics, nextCursor };
    },
  };
}
