/**
 * DescribeProducers (key 61), v0.
 *
 * Behavior: the active producers of each requested partition from the log's producer state
 * (id, epoch, last sequence, last timestamp, coordinator epoch, open transaction start offset).
 * Unknown topic or partition → UNKNOWN_TOPIC_OR_PARTITION.
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
          const exists = ctx.image.topic(t.name)?.partitions[p] !== undefined;
          const log = exists ? (ctx.replicas.getLog(t.name, p) ?? (await ctx.replicas.ensureLog(t.name, p))) : undefined;
          if (!log) {
            parts.push({ partitionIndex: p, errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, errorMessage: null, activeProducers: [] });
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
