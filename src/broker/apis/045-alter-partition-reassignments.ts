/**
 * AlterPartitionReassignments (key 45), v0-1.
 *
 * Behavior (Kafka's ReplicationControlManager, KIP-455): a new replica list starts a reassignment
 * (replicas = target + those being removed; the new ones are listed as adding); it completes
 * once every target replica is in the ISR (at once when they already are): the removed replicas
 * leave, and leadership moves if the leader was one of them. Asking for the current list is a
 * no-op (NONE); null replicas cancel (NO_REASSIGNMENT_IN_PROGRESS when none is running). Replica
 * lists must name distinct live brokers (INVALID_REPLICA_ASSIGNMENT); v1 without
 * AllowReplicationFactorChange refuses a different count (INVALID_REPLICATION_FACTOR); unknown
 * partitions → UNKNOWN_TOPIC_OR_PARTITION. One metadata write for the whole request.
 */
import { ErrorCode } from '../../protocol/generated/errors.js';
import { decodeAlterPartitionReassignmentsRequest, type AlterPartitionReassignmentsRequest } from '../../protocol/generated/messages/alter-partition-reassignments-request.js';
import {
  encodeAlterPartitionReassignmentsResponse,
  type AlterPartitionReassignmentsResponseInput,
} from '../../protocol/generated/messages/alter-partition-reassignments-response.js';
import type { ApiHandler } from '../../server/api-handler.js';
import type { BrokerContext } from '../broker-context.js';
import { alterReassignments } from '../../controller/reassignment.js';

export function alterPartitionReassignmentsHandler(ctx: BrokerContext): ApiHandler<AlterPartitionReassignmentsRequest, AlterPartitionReassignmentsResponseInput> {
  return {
    apiKey: 45,
    minVersion: 0,
    maxVersion: 1,
    decode: decodeAlterPartitionReassignmentsRequest,
    encode: encodeAlterPartitionReassignmentsResponse,
    async handle(rc, req) {
      const allowRf = rc.apiVersion >= 1 ? req.allowReplicationFactorChange : true;
      const items = req.topics.flatMap((t) => t.partitions.map((p) => ({ topic: t.name, partition: p.partitionIndex, target: p.replicas })));
      const out = await alterReassignments(ctx.controller, items, allowRf);
      const base = { throttleTimeMs: 0, ...(rc.apiVersion >= 1 ? { allowReplicationFactorChange: req.allowReplicationFactorChange } : {}) };
      if (!Array.isArray(out)) return { ...base, errorCode: out.errorCode, errorMessage: out.errorMessage, responses: [] };
      const responses = req.topics.map((t) => ({
        name: t.name,
        partitions: out.filter((r) => r.topic === t.name).map((r) => ({ partitionIndex: r.partition, errorCode: r.errorCode, errorMessage: r.errorMessage })),
      }));
      return { ...base, errorCode: ErrorCode.NONE, errorMessage: null, responses };
    },
  };
}
