/**
 * DescribeProducers (key 61), v0.
 *
 * Behavior: the active producers of each requested partition from the log's producer state
 * (id, epoch, last sequence, last timestamp, coordinator epoch, open transaction start offset).
 * Any replica answers from its own log, leader or follower, fenced or not (Kafka's
 * Partition.activeProducerState reads the local log; KIP-664 lets admins ask a chosen broker), so
 * this goes through ReplicaManager.replicaLog, not the leader check: a partition the metadata has
 * but this node holds no replica of → NOT_LEADER_OR_FOLLOWER; unknown → UNKNOWN_TOPIC_OR_PARTITION.
 */
import { ErrorCode } from '../../protocol/generated/errors.js';
import { decodeDescribeProducersRequest, type DescribeProducersRequest } from '../../protocol/generated/messages/describe-producers-request.js';
import { encodeDescribeProducersResponse, type DescribeProducersResponseInput } from '../../protocol/generated/messages/describe-producers-response.js';
import type { ApiHandler } from '../../server/api-handler.js';
import type { BrokerContext } from '../broker-context.js';

type TopicOut = NonNullable<DescribeProducersResponseInput['topics']>[number];
type PartOut = NonNullable<TopicOut['partitions']>[number];

export function describeProducersHandler(ctx: BrokerContext): ApiHandler<DescribeProducersRequest, DescribeProducersResponseInput> {
  return {
    apiKey: 61,
    minVersion: 0,
    maxVersion: 0,
    decode: decodeDescribeProducersRequest,
    encode: encodeDescribeProducersResponse,
    async handle(_rc, req) {
      const topics: TopicOut[] = [];
      for (const t of req.topics) {
        const parts: PartOut[] = [];
        topics.push({ name: t.name, partitions: parts });
        for (const p of t.partitionIndexes) {
          const log = await ctx.replicas.replicaLog(ctx.image.topic(t.name), p);
          if (typeof log === 'number') {
            parts.push({ partitionIndex: p, errorCode: log, errorMessage: null, activeProducers: [] });
            continue;
          }
          parts.push({
            partitionIndex: p,
            errorCode: ErrorCode.NONE,
            errorMessage: null,
            activeProducers: log.producerStates().map((s) => ({
              producerId: BigInt(s.producerId),
              producerEpoch: s.producerEpoch,
              lastSequence: s.lastSequence,
              lastTimestamp: BigInt(s.lastTimestamp),
              coordinatorEpoch: s.coordinatorEpoch,
              currentTxnStartOffset: BigInt(s.currentTxnStartOffset),
            })),
          });
        }
      }
      return { throttleTimeMs: 0, topics };
    },
  };
}
