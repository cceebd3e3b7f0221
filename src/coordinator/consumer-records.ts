import { encodeConsumerGroupMetadataKey, decodeConsumerGroupMetadataKey } from '../protocol/generated/messages/consumer-group-metadata-key.js';
import { encodeConsumerGroupMetadataValue, decodeConsumerGroupMetadataValue } from '../protocol/generated/messages/consumer-group-metadata-value.js';
import { encodeConsumerGroupMemberMetadataKey, decodeConsumerGroupMemberMetadataKey } from '../protocol/generated/messages/consumer-group-member-metadata-key.js';
import { encodeConsumerGroupMemberMetadataValue, decodeConsumerGroupMemberMetadataValue } from '../protocol/generated/messages/consumer-group-member-metadata-value.js';
import { encodeConsumerGroupTargetAssignmentMetadataKey, decodeConsumerGroupTargetAssignmentMetadataKey } from '../protocol/generated/messages/consumer-group-target-assignment-metadata-key.js';
import { encodeConsumerGroupTargetAssignmentMetadataValue, decodeConsumerGroupTargetAssignmentMetadataValue } from '../protocol/generated/messages/consumer-group-target-assignment-metadata-value.js';
import { encodeConsumerGroupTargetAssignmentMemberKey, decodeConsumerGroupTargetAssignmentMemberKey } from '../protocol/generated/messages/consumer-group-target-assignment-member-key.js';
import { encodeConsumerGroupTargetAssignmentMemberValue, decodeConsumerGroupTargetAssignmentMemberValue } from '../protocol/generated/messages/consumer-group-target-assignment-member-value.js';
import { encodeConsumerGroupCurrentMemberAssignmentKey, decodeConsumerGroupCurrentMemberAssignmentKey } from '../protocol/generated/messages/consumer-group-current-member-assignment-key.js';
import { encodeConsumerGroupCurrentMemberAssignmentValue, decodeConsumerGroupCurrentMemberAssignmentValue } from '../protocol/generated/messages/consumer-group-current-member-assignment-value.js';
import type { CoordinatorRecord } from './coordinator-batch.js';
import { entryOf, groupRecord, openRecord, topicAssignmentFromWire as fromWire, topicAssignmentToWire as toWire } from './group-records.js';
import { ConsumerGroup } from './consumer-group.js';
import type { Assignment, ConsumerMember } from './consumer-group.js';

/**
 * KIP-848 group records in __consumer_offsets (Kafka's record types 3-8): the group epoch, each
 * member's subscription, the target assignment (its epoch and each member's share) and each
 * member's current assignment. Replaying them rebuilds the group.
 */
const ConsumerRecordType = { GROUP: 3, MEMBER: 5, TARGET_METADATA: 6, TARGET_MEMBER: 7, CURRENT: 8 } as const;

/** The group epoch and the hash of the topic metadata the target was computed from. */
export function groupEpochRecord(groupId: string, epoch: number | null, metadataHash = 0n): CoordinatorRecord {
  return groupRecord(ConsumerRecordType.GROUP, (w) => encodeConsumerGroupMetadataKey(w, { groupId }, 0), epoch === null ? null : (w) => encodeConsumerGroupMetadataValue(w, { epoch, metadataHash }, 0));
}

/** FNV-1a (64-bit) of the subscribed topics' ids and partition counts. */
export function hashMetadata(s: string): bigint {
  let h = 0xcbf29ce484222325n;
  for (const b of Buffer.from(s)) h = BigInt.asIntN(64, BigInt.asUintN(64, (h ^ BigInt(b)) * 0x100000001b3n));
  return h;
}

export function memberRecord(groupId: string, m: ConsumerMember | string): CoordinatorRecord {
  const memberId = typeof m === 'string' ? m : m.memberId;
  return groupRecord(
    ConsumerRecordType.MEMBER,
    (w) => encodeConsumerGroupMemberMetadataKey(w, { groupId, memberId }, 0),
    typeof m === 'string'
      ? null
      : (w) =>
          encodeConsumerGroupMemberMetadataValue(
            w,
            {
              instanceId: m.instanceId,
              rackId: m.rackId,
              clientId: m.clientId,
              clientHost: m.clientHost,
              subscribedTopicNames: m.subscribedTopicNames,
              subscribedTopicRegex: m.subscribedTopicRegex,
              rebalanceTimeoutMs: m.rebalanceTimeoutMs,
              serverAssignor: m.serverAssignor,
            },
            0,
          ),
  );
}

export function targetEpochRecord(groupId: string, assignmentEpoch: number | null): CoordinatorRecord {
  return groupRecord(
    ConsumerRecordType.TARGET_METADATA,
    (w) => encodeConsumerGroupTargetAssignmentMetadataKey(w, { groupId }, 0),
    assignmentEpoch === null ? null : (w) => encodeConsumerGroupTargetAssignmentMetadataValue(w, { assignmentEpoch }, 0),
  );
}

export function targetMemberRecord(groupId: string, memberId: string, a: Assignment | null): CoordinatorRecord {
  return groupRecord(
    ConsumerRecordType.TARGET_MEMBER,
    (w) => encodeConsumerGroupTargetAssignmentMemberKey(w, { groupId, memberId }, 0),
    a === null ? null : (w) => encodeConsumerGroupTargetAssignmentMemberValue(w, { topicPartitions: toWire(a) }, 0),
  );
}

export const MemberState = { UNREVOKED_PARTITIONS: 0, UNRELEASED_PARTITIONS: 1, STABLE: 2 } as const;

export function currentRecord(groupId: string, m: ConsumerMember | string, state = 0): CoordinatorRecord {
  const memberId = typeof m === 'string' ? m : m.memberId;
  return groupRecord(
    ConsumerRecordType.CURRENT,
    (w) => encodeConsumerGroupCurrentMemberAssignmentKey(w, { groupId, memberId }, 0),
    typeof m === 'string'
      ? null
      : (w) =>
          encodeConsumerGroupCurrentMemberAssignmentValue(
            w,
            { memberEpoch: m.memberEpoch, previousMemberEpoch: m.previousMemberEpoch, state, assignedPartitions: toWire(m.assigned), partitionsPendingRevocation: toWire(m.revoking) },
            0,
          ),
  );
}

function emptyMember(memberId: string): ConsumerMember {
  return {
    memberId,
    instanceId: null,
    rackId: null,
    clientId: '',
    clientHost: '',
    subscribedTopicNames: [],
    subscribedTopicRegex: null,
    serverAssignor: null,
    rebalanceTimeoutMs: -1,
    memberEpoch: 0,
    previousMemberEpoch: -1,
    assigned: new Map(),
    revoking: new Map(),
  };
}

/** Applies one KIP-848 record to `groups` during load. Returns false for record types it does not know. */
export function replayConsumerRecord(groups: Map<string, ConsumerGroup>, type: number, key: Buffer, value: Buffer | null): boolean {
  const { key: r, value: vr, version } = openRecord(key, value);
  const group = (id: string): ConsumerGroup => entryOf(groups, id, (gid) => new ConsumerGroup(gid));
  const member = (g: ConsumerGroup, id: string): ConsumerMember => entryOf(g.members, id, emptyMember);
  switch (type) {
    case ConsumerRecordType.GROUP: {
      const k = decodeConsumerGroupMetadataKey(r, 0);
      if (vr === null) groups.delete(k.groupId);
      else {
        const v = decodeConsumerGroupMetadataValue(vr, version);
        const g = group(k.groupId);
        g.groupEpoch = v.epoch;
        g.metadataHash = v.metadataHash;
      }
      return true;
    }
    case ConsumerRecordType.MEMBER: {
      const k = decodeConsumerGroupMemberMetadataKey(r, 0);
      const g = group(k.groupId);
      if (vr === null) {
        const old = g.members.get(k.memberId);
        if (old?.instanceId != null && g.staticMembers.get(old.instanceId) === k.memberId) g.staticMembers.delete(old.instanceId);
        g.members.delete(k.memberId);
        return true;
      }
      const v = decodeConsumerGroupMemberMetadataValue(vr, version);
      const m = member(g, k.memberId);
      m.instanceId = v.instanceId;
      m.rackId = v.rackId;
      m.clientId = v.clientId;
      m.clientHost = v.clientHost;
      m.subscribedTopicNames = v.subscribedTopicNames;
      m.subscribedTopicRegex = v.subscribedTopicRegex;
      m.rebalanceTimeoutMs = v.rebalanceTimeoutMs;
      m.serverAssignor = v.serverAssignor;
      if (v.instanceId !== null) g.staticMembers.set(v.instanceId, k.memberId);
      return true;
    }
    case ConsumerRecordType.TARGET_METADATA: {
      const k = decodeConsumerGroupTargetAssignmentMetadataKey(r, 0);
      if (vr !== null) group(k.groupId).assignmentEpoch = decodeConsumerGroupTargetAssignmentMetadataValue(vr, version).assignmentEpoch;
      return true;
    }
    case ConsumerRecordType.TARGET_MEMBER: {
      const k = decodeConsumerGroupTargetAssignmentMemberKey(r, 0);
      const g = group(k.groupId);
      if (vr === null) g.target.delete(k.memberId);
      else g.target.set(k.memberId, fromWire(decodeConsumerGroupTargetAssignmentMemberValue(vr, version).topicPartitions));
      return true;
    }
    case ConsumerRecordType.CURRENT: {
      const k = decodeConsumerGroupCurrentMemberAssignmentKey(r, 0);
      const g = groups.get(k.groupId);
      if (vr === null || !g) return true;
      const v = decodeConsumerGroupCurrentMemberAssignmentValue(vr, version);
      const m = member(g, k.memberId);
      m.memberEpoch = v.memberEpoch;
      m.previousMemberEpoch = v.previousMemberEpoch;
      m.assigned = fromWire(v.assignedPartitions);
      m.revoking = fromWire(v.partitionsPendingRevocation);
      return true;
    }
    default:
      return false;
  }
}
