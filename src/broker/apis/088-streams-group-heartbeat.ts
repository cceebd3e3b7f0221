/**
 * StreamsGroupHeartbeat (key 88), v0-1 (KIP-1071).
 *
 * Behavior (src/coordinator/streams-group-ops.ts): join with MemberEpoch 0, a client-chosen
 * MemberId, a ProcessId, a RebalanceTimeoutMs and the topology (else INVALID_REQUEST; an invalid
 * topology is STREAMS_INVALID_TOPOLOGY), heartbeat with the current epoch (else
 * FENCED_MEMBER_EPOCH; an unknown member is UNKNOWN_MEMBER_ID, an unknown group
 * GROUP_ID_NOT_FOUND), leave with -1 (or -2: static membership is not offered). The response
 * carries the member epoch, `streams.heartbeat.interval.ms`, the status list
 * (MISSING_SOURCE_TOPICS, MISSING_INTERNAL_TOPICS while the node creates them,
 * INCORRECTLY_PARTITIONED_TOPICS, STALE_TOPOLOGY), the tasks when new to the member, and the
 * endpoints' partitions when the member's endpoint-information epoch is behind. A group id held
 * by a classic or consumer group is GROUP_ID_NOT_FOUND ("is not a streams group").
 *
 * Version notes: v0 has the int32 AcceptableRecoveryLagLegacy; v1 the int64 AcceptableRecoveryLag
 * and TopologyDescriptionRequired, which stays false here (StreamsGroupTopologyDescriptionUpdate
 * is not served).
 */
import { decodeStreamsGroupHeartbeatRequest, type StreamsGroupHeartbeatRequest } from '../../protocol/generated/messages/streams-group-heartbeat-request.js';
import { encodeStreamsGroupHeartbeatResponse, type StreamsGroupHeartbeatResponseInput } from '../../protocol/generated/messages/streams-group-heartbeat-response.js';
import { errorCodeOf } from '../../protocol/kafka-error.js';
import type { ApiHandler } from '../../server/api-handler.js';
import type { GroupCoordinator } from '../../coordinator/group-coordinator.js';
import type { TaskMap } from '../../coordinator/streams-group.js';

/** Kafka's defaults for what the client is told (acceptable.recovery.lag, task offset interval). */
const ACCEPTABLE_RECOVERY_LAG = 10000;
const TASK_OFFSET_INTERVAL_MS = 60000;

const wire = (t: TaskMap): { subtopologyId: string; partitions: number[] }[] => [...t].map(([subtopologyId, partitions]) => ({ subtopologyId, partitions }));

export function streamsGroupHeartbeatHandler(gc: GroupCoordinator): ApiHandler<StreamsGroupHeartbeatRequest, StreamsGroupHeartbeatResponseInput> {
  return {
    apiKey: 88,
    minVersion: 0,
    maxVersion: 1,
    decode: decodeStreamsGroupHeartbeatRequest,
    encode: encodeStreamsGroupHeartbeatResponse,
    async handle(rc, req) {
      const v = rc.apiVersion;
      const lag = v >= 1 ? { acceptableRecoveryLag: BigInt(ACCEPTABLE_RECOVERY_LAG) } : { acceptableRecoveryLagLegacy: ACCEPTABLE_RECOVERY_LAG };
      try {
        const r = await gc.streamsHeartbeat({ ...req, clientId: rc.clientId ?? '', clientHost: rc.clientAddress, version: v });
        return {
          errorCode: r.errorCode,
          errorMessage: r.errorMessage,
          memberId: r.memberId,
          memberEpoch: r.memberEpoch,
          heartbeatIntervalMs: r.heartbeatIntervalMs,
          ...lag,
          taskOffsetIntervalMs: TASK_OFFSET_INTERVAL_MS,
          status: r.status === null ? null : r.status.map((s) => ({ statusCode: s.statusCode, statusDetail: s.statusDetail })),
          activeTasks: r.tasks === null ? null : wire(r.tasks.active),
          standbyTasks: r.tasks === null ? null : wire(r.tasks.standby),
          warmupTasks: r.tasks === null ? null : wire(r.tasks.warmup),
          endpointInformationEpoch: r.endpointInformationEpoch,
          partitionsByUserEndpoint: r.partitionsByUserEndpoint,
        };
      } catch (e) {
        return { errorCode: errorCodeOf(e), memberId: req.memberId, memberEpoch: -1, ...lag, status: null };
      }
    },
  };
}
