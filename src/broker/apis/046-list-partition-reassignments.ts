/**
 * ListPartitionReassignments (key 46), v0.
 *
 * Behavior: no reassignment is ever in progress on a one-broker cluster, so the answer lists no
 * partitions; a named topic that does not exist → UNKNOWN_TOPIC_OR_PARTITION (top level, as
 * Kafka answers).
 */
import { ErrorCode } from '../../protocol/generated/errors.js';
import { decodeListPartitionReassignmentsRequest, type ListPartitionReassignmentsRequest } from '../../protocol/generated/messages/list-partition-reassignments-request.js';
import {
  encodeListPartitionReassignmentsResponse,
  type ListPartitionReassignmentsResponseInput,
} from '../../protocol/generated/messages/list-partition-reassignments-response.js';
import type { ApiHandler } from '../../server/api-handler.js';
import type { BrokerContext } from '../broker-context.js';

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
      return { throttleTimeMs: 0, errorCode: ErrorCode.NONE, errorMessage: null, topics: [] };
    },
  };
}
