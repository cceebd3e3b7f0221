/**
 * AlterPartitionReassignments (key 45), v0-1.
 *
 * Behavior: with one broker the only possible assignment is [this node]: asking for it is a
 * completed no-op (NONE), other replica lists → INVALID_REPLICA_ASSIGNMENT, cancelling (null
 * replicas) → NO_REASSIGNMENT_IN_PROGRESS, unknown partitions → UNKNOWN_TOPIC_OR_PARTITION
 * (Kafka's ReplicationControlManager answers).
 */
import { ErrorCode } from '../../protocol/generated/errors.js';
import { decodeAlterPartitionReassignmentsRequest, type AlterPartitionReassignmentsRequest } from '../../protocol/generated/messages/alter-partition-reassignments-request.js';
import {
  encodeAlterPartitionReassignmentsResponse,
  type AlterPartitionReassignmentsResponseInput,
} from '../../protocol/generated/messages/alter-partition-reassignments-response.js';
import type { ApiHandler } from '../../server/api-handler.js';
import type { BrokerContext } from '../broker-context.js';

export function alterPartitionReassignmentsHandler(ctx: BrokerContext): ApiHandler<AlterPartitionReassignmentsRequest, AlterPartitionReassignmentsResponseInput> {
  return {
    apiKey: 45,
    minVersion: 0,
    maxVersion: 1,
    decode: decodeAlterPartitionReassignmentsRequest,
    encode: encodeAlterPartitionReassignmentsResponse,
    handle(rc, req) {
      const responses = req.topics.map((t) => ({
        name: t.name,
        partitions: t.partitions.map((p) => {
          const out = (errorCode: number, errorMessage: string | null) => ({ partitionIndex: p.partitionIndex, errorCode, errorMessage });
          if (!ctx.image.topic(t.name)?.partitions[p.partitionIndex]) return out(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, 'The partition does not exist.');
          if (p.replicas === null) return out(ErrorCode.NO_REASSIGNMENT_IN_PROGRESS, 'No ongoing reassignment for this partition.');
          if (p.replicas.length !== 1 || p.replicas[0] !== ctx.nodeId) {
            return out(ErrorCode.INVALID_REPLICA_ASSIGNMENT, `The only broker is ${ctx.nodeId}; replicas must be [${ctx.nodeId}].`);
          }
          return out(ErrorCode.NONE, null);
        }),
      }));
      return { throttleTimeMs: 0, ...(rc.apiVersion >= 1 ? { allowReplicationFactorChange: req.allowReplicationFactorChange } : {}), errorCode: ErrorCode.NONE, errorMessage: null, responses };
    },
  };
}
