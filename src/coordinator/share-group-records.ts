/**
 * KIP-932 share group records in __consumer_offsets (Kafka's record types 10-14): each member's
 * metadata (rack, client, subscribed topics), the group epoch, the target assignment (its epoch
 * and each member's share) and each member's current assignment with its epoch. Replaying them
 * rebuilds what the share group coordinator (src/share/share-group-coordinator.ts) serves, so a
 * restarted node or a new coordinator keeps the group's epochs and members until their sessions
 * time out. ShareGroupStatePartitionMetadata (15) holds the partitions whose share-partition state
 * the group coordinator has initialized (InitializeShareGroupState), the only ones it assigns;
 * its initializing and deleting lists are written empty (an initialization is awaited before the
 * heartbeat is answered, a deletion before DeleteShareGroupOffsets is).
 */
import { encodeShareGroupMemberMetadataKey, decodeShareGroupMemberMetadataKey } from '../protocol/generated/messages/share-group-member-metadata-key.js';
import { encodeShareGroupMemberMetadataValue, decodeShareGroupMemberMetadataValue } from '../protocol/generated/messages/share-group-member-metadata-value.js';
import { encodeShareGroupMetadataKey, decodeShareGroupMetadataKey } from '../protocol/generated/messages/share-group-metadata-key.js';
import { encodeShareGroupMetadataValue, decodeShareGroupMetadataValue } from '../protocol/generated/messages/share-group-metadata-value.js';
import { encodeShareGroupTargetAssignmentMetadataKey, decodeShareGroupTargetAssignmentMetadataKey } from '../protocol/generated/messages/share-group-target-assignment-metadata-key.js';
import { encodeShareGroupTargetAssignmentMetadataValue, decodeShareGroupTargetAssignmentMetadataValue } from '../protocol/generated/messages/share-group-target-assignment-metadata-value.js';
import { encodeShareGroupTargetAssignmentMemberKey, decodeShareGroupTargetAssignmentMemberKey } from '../protocol/generated/messages/share-group-target-assignment-member-key.js';
import { encodeShareGroupTargetAssignmentMemberValue, decodeShareGroupTargetAssignmentMemberValue } from '../protocol/generated/messages/share-group-target-assignment-member-value.js';
import { encodeShareGroupCurrentMemberAssignmentKey, decodeShareGroupCurrentMemberAssignmentKey } from '../protocol/generated/messages/share-group-current-member-assignment-key.js';
import { encodeShareGroupCurrentMemberAssignmentValue, decodeShareGroupCurrentMemberAssignmentValue } from '../protocol/generated/messages/share-group-current-member-assignment-value.js';
import { encodeShareGroupStatePartitionMetadataKey, decodeShareGroupStatePartitionMetadataKey } from '../protocol/generated/messages/share-group-state-partition-metadata-key.js';
import { encodeShareGroupStatePartitionMetadataValue, decodeShareGroupStatePartitionMetadataValue } from '../protocol/generated/messages/share-group-state-partition-metadata-value.js';
import type { CoordinatorRecord } from './coordinator-batch.js';
import { entryOf, groupRecord, openRecord, topicAssignmentFromWire as fromWire, topicAssignmentToWire as toWire, type TopicAssignment } from './group-records.js';

const ShareRecordType = { MEMBER: 10, GROUP: 11, TARGET_METADATA: 12, TARGET_MEMBER: 13, CURRENT: 14, STATE_PARTITION_METADATA: 15 } as const;

/** topic id → partitions */
type ShareAssignment = TopicAssignment;

export interface PersistedShareMember {
  rackId: string | null;
  clientId: string;
  clientHost: string;
  subscribedTopicNames: string[];
  memberEpoch: number;
  previousMemberEpoch: number;
  /** The current assignment (share partitions are never revoked, so it is also the target). */
  assignment: ShareAssignment;
}

export interface PersistedShareGroup {
  groupEpoch: number;
  metadataHash: bigint;
  assignmentEpoch: number;
  readonly members: Map<string, PersistedShareMember>;
  /** topic id → the partitions whose share-partition state is initialized (ShareGroupStatePartitionMetadata). */
  initialized: ShareAssignment;
}

export function clonePersistedShareGroup(g: PersistedShareGroup): PersistedShareGroup {
  return { ...g, members: new Map([...g.members].map(([id, m]) => [id, { ...m, assignment: new Map(m.assignment) }])), initialized: new Map(g.initialized) };
}

/** ShareGroupMetadata: the group epoch (null: the group's tombstone). */
export function shareGroupRecord(groupId: string, epoch: number | null, metadataHash = 0n): CoordinatorRecord {
  return groupRecord(ShareRecordType.GROUP, (w) => encodeShareGroupMetadataKey(w, { groupId }, 0), epoch === null ? null : (w) => encodeShareGroupMetadataValue(w, { epoch, metadataHash }, 0));
}

/** ShareGroupTargetAssignmentMetadata: the epoch of the target assignment (null: tombstone). */
export function shareTargetEpochRecord(groupId: string, assignmentEpoch: number | null, now = 0): CoordinatorRecord {
  return groupRecord(
    ShareRecordType.TARGET_METADATA,
    (w) => encodeShareGroupTargetAssignmentMetadataKey(w, { groupId }, 0),
    assignmentEpoch === null ? null : (w) => encodeShareGroupTargetAssignmentMetadataValue(w, { assignmentEpoch, assignmentTimestamp: BigInt(now) }, 0),
  );
}

/** The three records of one member (metadata, target, current assignment), or their tombstones when `m` is null. */
export function shareMemberRecords(groupId: string, memberId: string, m: PersistedShareMember | null): CoordinatorRecord[] {
  return [
    groupRecord(
      ShareRecordType.MEMBER,
      (w) => encodeShareGroupMemberMetadataKey(w, { groupId, memberId }, 0),
      m === null ? null : (w) => encodeShareGroupMemberMetadataValue(w, { rackId: m.rackId, clientId: m.clientId, clientHost: m.clientHost, subscribedTopicNames: m.subscribedTopicNames }, 0),
    ),
    groupRecord(ShareRecordType.TARGET_MEMBER, (w) => encodeShareGroupTargetAssignmentMemberKey(w, { groupId, memberId }, 0), m === null ? null : (w) => encodeShareGroupTargetAssignmentMemberValue(w, { topicPartitions: toWire(m.assignment) }, 0)),
    groupRecord(
      ShareRecordType.CURRENT,
      (w) => encodeShareGroupCurrentMemberAssignmentKey(w, { groupId, memberId }, 0),
      // State 0: STABLE (a share member never waits for revocations).
      m === null ? null : (w) => encodeShareGroupCurrentMemberAssignmentValue(w, { memberEpoch: m.memberEpoch, previousMemberEpoch: m.previousMemberEpoch, state: 0, assignedPartitions: toWire(m.assignment) }, 0),
    ),
  ];
}

/** ShareGroupStatePartitionMetadata: the initialized partitions by topic id (null: tombstone); `topicName` names them. */
export function shareStatePartitionRecord(groupId: string, initialized: ShareAssignment | null, topicName: (topicId: string) => string): CoordinatorRecord {
  return groupRecord(
    ShareRecordType.STATE_PARTITION_METADATA,
    (w) => encodeShareGroupStatePartitionMetadataKey(w, { groupId }, 0),
    initialized === null
      ? null
      : (w) =>
          encodeShareGroupStatePartitionMetadataValue(
            w,
            { initializingTopics: [], initializedTopics: [...initialized].map(([topicId, partitions]) => ({ topicId, topicName: topicName(topicId), partitions })), deletingTopics: [] },
            0,
          ),
  );
}

/** Applies one share group record to `groups`; false when the record type is not a share group's. */
export function replayShareGroupRecord(groups: Map<string, PersistedShareGroup>, type: number, key: Buffer, value: Buffer | null): boolean {
  if (type < ShareRecordType.MEMBER || type > ShareRecordType.STATE_PARTITION_METADATA) return false;
  const { key: r, value: vr, version } = openRecord(key, value);
  const group = (id: string): PersistedShareGroup => entryOf(groups, id, () => ({ groupEpoch: 0, metadataHash: 0n, assignmentEpoch: 0, members: new Map(), initialized: new Map() }));
  const member = (g: PersistedShareGroup, id: string): PersistedShareMember =>
    entryOf(g.members, id, () => ({ rackId: null, clientId: '', clientHost: '', subscribedTopicNames: [], memberEpoch: 0, previousMemberEpoch: 0, assignment: new Map() }));
  switch (type) {
    case ShareRecordType.GROUP: {
      const k = decodeShareGroupMetadataKey(r, 0);
      if (vr === null) groups.delete(k.groupId);
      else {
        const v = decodeShareGroupMetadataValue(vr, version);
        const g = group(k.groupId);
        g.groupEpoch = v.epoch;
        g.metadataHash = v.metadataHash;
      }
      return true;
    }
    case ShareRecordType.MEMBER: {
      const k = decodeShareGroupMemberMetadataKey(r, 0);
      const g = groups.get(k.groupId);
      if (vr === null) {
        g?.members.delete(k.memberId);
        return true;
      }
      const v = decodeShareGroupMemberMetadataValue(vr, version);
      const m = member(g ?? group(k.groupId), k.memberId);
      m.rackId = v.rackId;
      m.clientId = v.clientId;
      m.clientHost = v.clientHost;
      m.subscribedTopicNames = [...v.subscribedTopicNames];
      return true;
    }
    case ShareRecordType.TARGET_METADATA: {
      const k = decodeShareGroupTargetAssignmentMetadataKey(r, 0);
      if (vr !== null) {
        const g = groups.get(k.groupId);
        if (g !== undefined) g.assignmentEpoch = decodeShareGroupTargetAssignmentMetadataValue(vr, version).assignmentEpoch;
      }
      return true;
    }
    case ShareRecordType.TARGET_MEMBER: {
      const k = decodeShareGroupTargetAssignmentMemberKey(r, 0);
      const m = groups.get(k.groupId)?.members.get(k.memberId);
      if (vr !== null && m !== undefined) m.assignment = fromWire(decodeShareGroupTargetAssignmentMemberValue(vr, version).topicPartitions);
      return true;
    }
    case ShareRecordType.STATE_PARTITION_METADATA: {
      const k = decodeShareGroupStatePartitionMetadataKey(r, 0);
      if (vr === null) {
        const g = groups.get(k.groupId);
        if (g !== undefined) g.initialized = new Map();
        return true;
      }
      // Initializing partitions (Kafka writes them before its asynchronous initialization) are not
      // initialized yet: the next heartbeat initializes them again.
      const v = decodeShareGroupStatePartitionMetadataValue(vr, version);
      group(k.groupId).initialized = new Map(v.initializedTopics.map((t) => [t.topicId, [...t.partitions].sort((a, b) => a - b)]));
      return true;
    }
    default: {
      const k = decodeShareGroupCurrentMemberAssignmentKey(r, 0);
      const m = groups.get(k.groupId)?.members.get(k.memberId);
      if (vr === null || m === undefined) return true;
      const v = decodeShareGroupCurrentMemberAssignmentValue(vr, version);
      m.memberEpoch = v.memberEpoch;
      m.previousMemberEpoch = v.previousMemberEpoch;
      m.assignment = fromWire(v.assignedPartitions);
      return true;
    }
  }
}
