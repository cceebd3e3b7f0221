/**
 * StreamsGroupDescribe (key 89), v0-1 (KIP-1071).
 *
 * Behavior: per group id its state (Empty, NotReady, Assigning, Reconciling, Stable), epochs,
 * topology (subtopologies with their source, repartition sink, repartition source and changelog
 * topics) and members with their process, endpoint, tags, current and target tasks. An unknown
 * id is GROUP_ID_NOT_FOUND ("Group X not found."), one held by another group type
 * GROUP_ID_NOT_FOUND ("Group X is not a streams group."), as Kafka's GroupMetadataManager.
 *
 * Version notes: v1 adds the assignor name ("sticky") and the topology description, which is not
 * kept here (StreamsGroupTopologyDescriptionUpdate is not served): it is null.
 */
import { decodeStreamsGroupDescribeRequest, type StreamsGroupDescribeRequest } from '../../protocol/generated/messages/streams-group-describe-request.js';
import { encodeStreamsGroupDescribeResponse, type StreamsGroupDescribeResponseInput } from '../../protocol/generated/messages/streams-group-describe-response.js';
import type { ApiHandler } from '../../server/api-handler.js';
import type { GroupCoordinator } from '../../coordinator/group-coordinator.js';
import { describeEachGroup, groupAuthorizedOperations, groupNotFound } from '../../coordinator/group-describe.js';
import type { StreamsTasks, TaskMap } from '../../coordinator/streams-group.js';

const wire = (t: TaskMap): { subtopologyId: string; partitions: number[] }[] => [...t].map(([subtopologyId, partitions]) => ({ subtopologyId, partitions }));
const assignment = (t: StreamsTasks) => ({ activeTasks: wire(t.active), standbyTasks: wire(t.standby), warmupTasks: wire(t.warmup) });

export function streamsGroupDescribeHandler(gc: GroupCoordinator): ApiHandler<StreamsGroupDescribeRequest, StreamsGroupDescribeResponseInput> {
  return {
    apiKey: 89,
    minVersion: 0,
    maxVersion: 1,
    decode: decodeStreamsGroupDescribeRequest,
    encode: encodeStreamsGroupDescribeResponse,
    async handle(rc, req) {
      const v = rc.apiVersion;
      const groups = await describeEachGroup(req.groupIds, async (groupId) => {
        const d = await gc.describeStreamsGroup(groupId);
        if (!d) return groupNotFound(groupId, (await gc.groupType(groupId)) !== null ? 'streams' : null);
        return {
          groupId,
          groupState: d.groupState,
          groupEpoch: d.groupEpoch,
          assignmentEpoch: d.assignmentEpoch,
          topology:
            d.topology === null
              ? null
              : {
                  epoch: d.topology.epoch,
                  subtopologies: d.topology.subtopologies.map((s) => ({
                    subtopologyId: s.subtopologyId,
                    sourceTopics: s.sourceTopics,
                    repartitionSinkTopics: s.repartitionSinkTopics,
                    stateChangelogTopics: s.stateChangelogTopics,
                    repartitionSourceTopics: s.repartitionSourceTopics,
                  })),
                },
          members: d.members.map((m) => ({
            memberId: m.memberId,
            memberEpoch: m.memberEpoch,
            instanceId: m.instanceId,
            rackId: m.rackId,
            clientId: m.clientId,
            clientHost: m.clientHost,
            topologyEpoch: m.topologyEpoch,
            processId: m.processId,
            userEndpoint: m.userEndpoint,
            clientTags: m.clientTags,
            taskOffsets: [],
            taskEndOffsets: [],
            assignment: assignment(m.assigned),
            targetAssignment: assignment(m.target),
            isClassic: false,
          })),
          authorizedOperations: groupAuthorizedOperations(req.includeAuthorizedOperations),
          ...(v >= 1 ? { assignorName: 'sticky', topologyDescription: null } : {}),
        };
      });
      return { groups };
    },
  };
}
