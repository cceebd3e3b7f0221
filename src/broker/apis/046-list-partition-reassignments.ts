/**
 * ListPartitionReassignments (key 46), v0.
 *
 * Behavior: lists the partitions whose reassignment is in progress (the named ones, or all when
 * Topics is null) with their replicas, adding and removing replicas; a named topic that does not
 * exist → UNKNOWN_TOPIC_OR_PARTITION (top level, as Kafka answers).
 */
import { ErrorCode } from '../../protocol/generated/errors.js';
import { decodeListPartitionReassignmentsRequest, type ListPartitionReassignmentsRequest } from '../../protocol/generated/messages/list-partition-reassignments-request.js';
import {
  encodeListPartitionReassignmentsResponse,
  type ListPartitionReassignmentsResponseInput,
} from '../../protocol/generated/messages/list-partition-reassignments-response.js';
import type { ApiHandler } from '../../server/api-handler.js';
import type { BrokerContext } from '../broker-context.js';
import type { PartitionImage } from '../../controller/metadata-image.js';
import { inProgress } from '../../controller/reassignment.js';

export function listPartitionReassignmentsHandler(ctx: BrokerContext): ApiHandler<ListPartitionReassignmentsRequest, ListPartitionReassignmentsResponseInput> {
  return {
    apiKey: 46,
    minVersion: 0,
    maxVersion: 0,
    decode: decodeListPartitionReassignmentsRequest,
    encode: encodeListPartitionReassignmentsResponse,
    handle(_rc, req) {
      const missing = (req.topics ?? []).find((t) => !ctx.image.topic(t.name));
      if (missing) return { throttleTimeMs: 0, errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, errorMessage: `Topic ${missing.name} does not exist.`, topics: [] };
      const wanted = req.topics === null ? [...ctx.image.topicsByName.values()].map((t) => ({ name: t.name, partitionIndexes: t.partitions.map((p) => p.partition) })) : req.topics;
      const topics = [];
      for (const w of wanted) {
        const t = ctx.image.topic(w.name)!;
        const partitions = w.partitionIndexes
          .map((i) => t.partitions[i])
          .filter((p): p is PartitionImage => p !== undefined && inProgress(p))
          .map((p) => ({ partitionIndex: p.partition, replicas: p.replicas, addingReplicas: p.addingReplicas ?? [], removingReplicas: p.removingReplicas ?? [] }));
        if (partitions.length > 0) topics.push({ name: w.name, partitions });
      }
      return { throttleTimeMs: 0, errorCode: ErrorCode.NONE, errorMessage: null, topics };
    },
  };
}
