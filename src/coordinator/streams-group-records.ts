import { encodeStreamsGroupMetadataKey, decodeStreamsGroupMetadataKey } from '../protocol/generated/messages/streams-group-metadata-key.js';
import { encodeStreamsGroupMetadataValue, decodeStreamsGroupMetadataValue } from '../protocol/generated/messages/streams-group-metadata-value.js';
import { encodeStreamsGroupTopologyKey, decodeStreamsGroupTopologyKey } from '../protocol/generated/messages/streams-group-topology-key.js';
import { encodeStreamsGroupTopologyValue, decodeStreamsGroupTopologyValue } from '../protocol/generated/messages/streams-group-topology-value.js';
import { encodeStreamsGroupMemberMetadataKey, decodeStreamsGroupMemberMetadataKey } from '../protocol/generated/messages/streams-group-member-metadata-key.js';
import { encodeStreamsGroupMemberMetadataValue, decodeStreamsGroupMemberMetadataValue } from '../protocol/generated/messages/streams-group-member-metadata-value.js';
import { encodeStreamsGroupTargetAssignmentMetadataKey, decodeStreamsGroupTargetAssignmentMetadataKey } from '../protocol/generated/messages/streams-group-target-assignment-metadata-key.js';
import { encodeStreamsGroupTargetAssignmentMetadataValue, decodeStreamsGroupTargetAssignmentMetadataValue } from '../protocol/generated/messages/streams-group-target-assignment-metadata-value.js';
import { encodeStreamsGroupTargetAssignmentMemberKey, decodeStreamsGroupTargetAssignmentMemberKey } from '../protocol/generated/messages/streams-group-target-assignment-member-key.js';
import { encodeStreamsGroupTargetAssignmentMemberValue, decodeStreamsGroupTargetAssignmentMemberValue } from '../protocol/generated/messages/streams-group-target-assignment-member-value.js';
import { encodeStreamsGroupCurrentMemberAssignmentKey, decodeStreamsGroupCurrentMemberAssignmentKey } from '../protocol/generated/messages/streams-group-current-member-assignment-key.js';
import { encodeStreamsGroupCurrentMemberAssignmentValue, decodeStreamsGroupCurrentMemberAssignmentValue } from '../protocol/generated/messages/streams-group-current-member-assignment-value.js';
import type { CoordinatorRecord } from './coordinator-batch.js';
import { entryOf, groupRecord, openRecord } from './group-records.js';
import { StreamsGroup, emptyTasks } from './streams-group.js';
import type { StreamsMember, StreamsTasks, StreamsTopology, TaskMap } from './streams-group.js';

/**
 * KIP-1071 streams group records in __consumer_offsets (Kafka's record types 17 and 19-23): the
 * group epoch with the metadata hash and the validated topology epoch, the topology, each
 * member's metadata, the target assignment (its epoch and each member's tasks) and each member's
 * current assignment. Replaying them rebuilds the group, as Kafka's GroupMetadataManager
 * replays StreamsGroup* records.
 */
const StreamsRecordType = { GROUP: 17, MEMBER: 19, TARGET_METADATA: 20, TARGET_MEMBER: 21, CURRENT: 22, TOPOLOGY: 23 } as const;

export function isStreamsRecordType(type: number): boolean {
  return type === 17 || (type >= 19 && type <= 23);
}

const toWire = (a: TaskMap): { subtopologyId: string; partitions: number[]; assignmentEpochs: null }[] =>
  [...a].map(([subtopologyId, partitions]) => ({ subtopologyId, partitions, assignmentEpochs: null }));
const fromWire = (l: readonly { subtopologyId: string; partitions: readonly number[] }[]): TaskMap => new Map(l.map((t) => [t.subtopologyId, [...t.partitions]]));

export function streamsGroupRecord(g: StreamsGroup | string): CoordinatorRecord {
  const groupId = typeof g === 'string' ? g : g.groupId;
  return groupRecord(
    StreamsRecordType.GROUP,
    (w) => encodeStreamsGroupMetadataKey(w, { groupId }, 0),
    typeof g === 'string'
      ? null
      : (w) =>
          encodeStreamsGroupMetadataValue(
            w,
            { epoch: g.groupEpoch, metadataHash: g.metadataHash, validatedTopologyEpoch: g.validatedTopologyEpoch, lastAssignmentConfigs: g.lastAssignmentConfigs },
            0,
          ),
  );
}

export function topologyRecord(groupId: string, t: StreamsTopology | null): CoordinatorRecord {
  return groupRecord(StreamsRecordType.TOPOLOGY, (w) => encodeStreamsGroupTopologyKey(w, { groupId }, 0), t === null ? null : (w) => encodeStreamsGroupTopologyValue(w, t, 0));
}

export function streamsMemberRecord(groupId: string, m: StreamsMember | string): CoordinatorRecord {
  const memberId = typeof m === 'string' ? m : m.memberId;
  return groupRecord(
    StreamsRecordType.MEMBER,
    (w) => encodeStreamsGroupMemberMetadataKey(w, { groupId, memberId }, 0),
    typeof m === 'string'
      ? null
      : (w) =>
          encodeStreamsGroupMemberMetadataValue(
            w,
            {
              instanceId: m.instanceId,
              rackId: m.rackId,
              clientId: m.clientId,
              clientHost: m.clientHost,
              rebalanceTimeoutMs: m.rebalanceTimeoutMs,
              topologyEpoch: m.topologyEpoch,
              processId: m.processId,
              userEndpoint: m.userEndpoint,
              clientTags: m.clientTags,
            },
            0,
          ),
  );
}

export function streamsTargetEpochRecord(groupId: string, assignmentEpoch: number | null, timestamp = 0): CoordinatorRecord {
  return groupRecord(
    StreamsRecordType.TARGET_METADATA,
    (w) => encodeStreamsGroupTargetAssignmentMetadataKey(w, { groupId }, 0),
    assignmentEpoch === null ? null : (w) => encodeStreamsGroupTargetAssignmentMetadataValue(w, { assignmentEpoch, assignmentTimestamp: BigInt(timestamp) }, 0),
  );
}

export function streamsTargetMemberRecord(groupId: string, memberId: string, t: StreamsTasks | null): CoordinatorRecord {
  return groupRecord(
    StreamsRecordType.TARGET_MEMBER,
    (w) => encodeStreamsGroupTargetAssignmentMemberKey(w, { groupId, memberId }, 0),
    t === null ? null : (w) => encodeStreamsGroupTargetAssignmentMemberValue(w, { activeTasks: toWire(t.active), standbyTasks: toWire(t.standby), warmupTasks: toWire(t.warmup) }, 0),
  );
}

export function streamsCurrentRecord(groupId: string, m: StreamsMember | string): CoordinatorRecord {
  const memberId = typeof m === 'string' ? m : m.memberId;
  return groupRecord(
    StreamsRecordType.CURRENT,
    (w) => encodeStreamsGroupCurrentMemberAssignmentKey(w, { groupId, memberId }, 0),
    typeof m === 'string'
      ? null
      : (w) =>
          encodeStreamsGroupCurrentMemberAssignmentValue(
            w,
            {
              memberEpoch: m.memberEpoch,
              previousMemberEpoch: m.previousMemberEpoch,
              state: m.state,
              activeTasks: toWire(m.assigned.active),
              standbyTasks: toWire(m.assigned.standby),
              warmupTasks: toWire(m.assigned.warmup),
              activeTasksPendingRevocation: toWire(m.revoking.active),
              standbyTasksPendingRevocation: toWire(m.revoking.standby),
              warmupTasksPendingRevocation: toWire(m.revoking.warmup),
            },
            0,
          ),
  );
}

/** Every record that removes a group, in Kafka's order (assignments, members, topology, then the group). */
export function streamsGroupDeletion(g: StreamsGroup): CoordinatorRecord[] {
  const out: CoordinatorRecord[] = [];
  for (const id of g.members.keys()) out.push(streamsCurrentRecord(g.groupId, id));
  for (const id of g.target.keys()) out.push(streamsTargetMemberRecord(g.groupId, id, null));
  out.push(streamsTargetEpochRecord(g.groupId, null));
  for (const id of g.members.keys()) out.push(streamsMemberRecord(g.groupId, id));
  out.push(topologyRecord(g.groupId, null));
  out.push(streamsGroupRecord(g.groupId));
  return out;
}

export function emptyStreamsMember(memberId: string): StreamsMember {
  return {
    memberId,
    instanceId: null,
    rackId: null,
    clientId: '',
    clientHost: '',
    rebalanceTimeoutMs: -1,
    topologyEpoch: -1,
    processId: '',
    userEndpoint: null,
    clientTags: [],
    memberEpoch: 0,
    previousMemberEpoch: -1,
    state: 2,
    assigned: emptyTasks(),
    revoking: emptyTasks(),
  };
}

/** Applies one streams group record (type 17, 19-23) to `groups` during replay. */
export function replayStreamsRecord(groups: Map<string, StreamsGroup>, type: number, key: Buffer, value: Buffer | null): void {
  const { key: r, value: vr, version } = openRecord(key, value);
  const group = (id: string): StreamsGroup => entryOf(groups, id, (gid) => new StreamsGroup(gid));
  const member = (g: StreamsGroup, id: string): StreamsMember => entryOf(g.members, id, emptyStreamsMember);
  switch (type) {
    case StreamsRecordType.GROUP: {
      const k = decodeStreamsGroupMetadataKey(r, 0);
      if (vr === null) {
        groups.delete(k.groupId);
        return;
      }
      const v = decodeStreamsGroupMetadataValue(vr, version);
      const g = group(k.groupId);
      g.groupEpoch = v.epoch;
      g.metadataHash = v.metadataHash;
      g.validatedTopologyEpoch = v.validatedTopologyEpoch;
      g.lastAssignmentConfigs = (v.lastAssignmentConfigs ?? []).map((c) => ({ key: c.key, value: c.value }));
      return;
    }
    case StreamsRecordType.TOPOLOGY: {
      const k = decodeStreamsGroupTopologyKey(r, 0);
      if (vr === null) {
        const g = groups.get(k.groupId);
        if (g) g.topology = null;
        return;
      }
      const v = decodeStreamsGroupTopologyValue(vr, version);
      group(k.groupId).topology = { epoch: v.epoch, subtopologies: v.subtopologies };
      return;
    }
    case StreamsRecordType.MEMBER: {
      const k = decodeStreamsGroupMemberMetadataKey(r, 0);
      const g = groups.get(k.groupId);
      if (vr === null) {
        g?.members.delete(k.memberId);
        return;
      }
      const v = decodeStreamsGroupMemberMetadataValue(vr, version);
      const m = member(group(k.groupId), k.memberId);
      m.instanceId = v.instanceId;
      m.rackId = v.rackId;
      m.clientId = v.clientId;
      m.clientHost = v.clientHost;
      m.rebalanceTimeoutMs = v.rebalanceTimeoutMs;
      m.topologyEpoch = v.topologyEpoch;
      m.processId = v.processId;
      m.userEndpoint = v.userEndpoint === null ? null : { host: v.userEndpoint.host, port: v.userEndpoint.port };
      m.clientTags = v.clientTags.map((t) => ({ key: t.key, value: t.value }));
      return;
    }
    case StreamsRecordType.TARGET_METADATA: {
      const k = decodeStreamsGroupTargetAssignmentMetadataKey(r, 0);
      if (vr !== null) group(k.groupId).assignmentEpoch = decodeStreamsGroupTargetAssignmentMetadataValue(vr, version).assignmentEpoch;
      return;
    }
    case StreamsRecordType.TARGET_MEMBER: {
      const k = decodeStreamsGroupTargetAssignmentMemberKey(r, 0);
      if (vr === null) {
        groups.get(k.groupId)?.target.delete(k.memberId);
        return;
      }
      const v = decodeStreamsGroupTargetAssignmentMemberValue(vr, version);
      group(k.groupId).target.set(k.memberId, { active: fromWire(v.activeTasks), standby: fromWire(v.standbyTasks), warmup: fromWire(v.warmupTasks) });
      return;
    }
    case StreamsRecordType.CURRENT: {
      const k = decodeStreamsGroupCurrentMemberAssignmentKey(r, 0);
      const g = groups.get(k.groupId);
      if (vr === null || !g) return;
      const v = decodeStreamsGroupCurrentMemberAssignmentValue(vr, version);
      const m = member(g, k.memberId);
      m.memberEpoch = v.memberEpoch;
      m.previousMemberEpoch = v.previousMemberEpoch;
      m.state = v.state;
      m.assigned = { active: fromWire(v.activeTasks), standby: fromWire(v.standbyTasks), warmup: fromWire(v.warmupTasks) };
      m.revoking = { active: fromWire(v.activeTasksPendingRevocation), standby: fromWire(v.standbyTasksPendingRevocation), warmup: fromWire(v.warmupTasksPendingRevocation) };
      return;
    }
  }
}
