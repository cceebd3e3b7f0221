/**
 * Kafka metadata records as the controller writes them into `__cluster_metadata-0`: each record
 * value is `uvarint frameVersion (1) | uvarint apiKey | uvarint version | message` (Kafka's
 * `MetadataRecordSerde`), key null, in ordinary uncompressed record batches.
 */
import { Reader } from '../protocol/reader.js';
import { Writer } from '../protocol/writer.js';
import { decodeConfigRecord, encodeConfigRecord, ConfigRecordTypeId } from '../protocol/generated/messages/config-record.js';
import { decodePartitionChangeRecord, encodePartitionChangeRecord, PartitionChangeRecordTypeId } from '../protocol/generated/messages/partition-change-record.js';
import { decodePartitionRecord, encodePartitionRecord, PartitionRecordTypeId } from '../protocol/generated/messages/partition-record.js';
import { decodeRemoveTopicRecord, encodeRemoveTopicRecord, RemoveTopicRecordTypeId } from '../protocol/generated/messages/remove-topic-record.js';
import { decodeTopicRecord, encodeTopicRecord, TopicRecordTypeId } from '../protocol/generated/messages/topic-record.js';
import { decodeProducerIdsRecord, encodeProducerIdsRecord, ProducerIdsRecordTypeId } from '../protocol/generated/messages/producer-ids-record.js';
import { decodeAccessControlEntryRecord, encodeAccessControlEntryRecord, AccessControlEntryRecordTypeId } from '../protocol/generated/messages/access-control-entry-record.js';
import { decodeUserScramCredentialRecord, encodeUserScramCredentialRecord, UserScramCredentialRecordTypeId } from '../protocol/generated/messages/user-scram-credential-record.js';
import { decodeRemoveUserScramCredentialRecord, encodeRemoveUserScramCredentialRecord, RemoveUserScramCredentialRecordTypeId } from '../protocol/generated/messages/remove-user-scram-credential-record.js';
import { decodeClientQuotaRecord, encodeClientQuotaRecord, ClientQuotaRecordTypeId } from '../protocol/generated/messages/client-quota-record.js';
import { decodeRemoveAccessControlEntryRecord, encodeRemoveAccessControlEntryRecord, RemoveAccessControlEntryRecordTypeId } from '../protocol/generated/messages/remove-access-control-entry-record.js';
import { decodeMirrorTopicStateChangeRecord, encodeMirrorTopicStateChangeRecord, MirrorTopicStateChangeRecordTypeId } from '../protocol/generated/messages/mirror-topic-state-change-record.js';
import { DecodeError } from '../protocol/decode-error.js';
import type { AclEntry } from '../auth/acl-model.js';

/** Record type ids, from the schemas (the generated `*TypeId` constants). */
const MetadataRecordType = {
  TOPIC: TopicRecordTypeId,
  PARTITION: PartitionRecordTypeId,
  CONFIG: ConfigRecordTypeId,
  PARTITION_CHANGE: PartitionChangeRecordTypeId,
  REMOVE_TOPIC: RemoveTopicRecordTypeId,
  PRODUCER_IDS: ProducerIdsRecordTypeId,
  CLIENT_QUOTA: ClientQuotaRecordTypeId,
  USER_SCRAM_CREDENTIAL: UserScramCredentialRecordTypeId,
  REMOVE_USER_SCRAM_CREDENTIAL: RemoveUserScramCredentialRecordTypeId,
  ACCESS_CONTROL_ENTRY: AccessControlEntryRecordTypeId,
  REMOVE_ACCESS_CONTROL_ENTRY: RemoveAccessControlEntryRecordTypeId,
  MIRROR_TOPIC_STATE_CHANGE: MirrorTopicStateChangeRecordTypeId,
} as const;

/** A SCRAM credential as Kafka stores it (UserScramCredentialRecord): never the password. */
export interface ScramCredential {
  readonly name: string;
  readonly mechanism: number;
  readonly salt: Buffer;
  readonly storedKey: Buffer;
  readonly serverKey: Buffer;
  readonly iterations: number;
}

export type MetadataRecord =
  | { readonly type: 'topic'; readonly name: string; readonly topicId: string }
  | {
      readonly type: 'partition';
      readonly topicId: string;
      readonly partition: number;
      readonly leader: number;
      readonly leaderEpoch: number;
      readonly partitionEpoch: number;
      readonly replicas: readonly number[];
      readonly isr: readonly number[];
      /** A reassignment in progress (a snapshot of a partition being moved); absent = none. */
      readonly addingReplicas?: readonly number[];
      readonly removingReplicas?: readonly number[];
    }
  | { readonly type: 'config'; readonly resourceType: number; readonly resourceName: string; readonly name: string; readonly value: string | null }
  | {
      readonly type: 'partitionChange';
      readonly topicId: string;
      readonly partition: number;
      /** The new leader epoch; -1 = bump by one if the leader changes, keep otherwise. */
      readonly leaderEpoch: number;
      /** The new leader (-1 = none); absent = unchanged (Kafka's NO_LEADER_CHANGE, -2, on the wire). */
      readonly leader?: number;
      /** The new ISR / replica set; absent = unchanged (null on the wire). */
      readonly isr?: readonly number[];
      readonly replicas?: readonly number[];
      /** A reassignment's replicas being added / removed; [] = none (the reassignment ended). */
      readonly addingReplicas?: readonly number[];
      readonly removingReplicas?: readonly number[];
    }
  | { readonly type: 'removeTopic'; readonly topicId: string }
  | { readonly type: 'producerIds'; readonly brokerId: number; readonly nextProducerId: number }
  | ({ readonly type: 'acl' } & AclEntry)
  | { readonly type: 'removeAcl'; readonly id: string }
  | ({ readonly type: 'scram' } & ScramCredential)
  | { readonly type: 'removeScram'; readonly name: string; readonly mechanism: number }
  | {
      readonly type: 'quota';
      readonly entity: readonly { entityType: string; entityName: string | null }[];
      readonly key: string;
      readonly value: number;
      readonly remove: boolean;
    }
  | { readonly type: 'mirrorTopicState'; readonly topicId: string; readonly mirrorName: string | null; readonly desiredState: number };

const FRAME_VERSION = 1;

export function encodeMetadataRecord(rec: MetadataRecord): Buffer {
  const w = new Writer(256);
  w.uvarint(FRAME_VERSION);
  switch (rec.type) {
    case 'topic':
      w.uvarint(MetadataRecordType.TOPIC).uvarint(0);
      encodeTopicRecord(w, { name: rec.name, topicId: rec.topicId }, 0);
      break;
    case 'partition':
      w.uvarint(MetadataRecordType.PARTITION).uvarint(0);
      encodePartitionRecord(
        w,
        {
          partitionId: rec.partition,
          topicId: rec.topicId,
          replicas: [...rec.replicas],
          isr: [...rec.isr],
          removingReplicas: rec.removingReplicas ? [...rec.removingReplicas] : [],
          addingReplicas: rec.addingReplicas ? [...rec.addingReplicas] : [],
          leader: rec.leader,
          leaderEpoch: rec.leaderEpoch,
          partitionEpoch: rec.partitionEpoch,
        },
        0,
      );
      break;
    case 'config':
      w.uvarint(MetadataRecordType.CONFIG).uvarint(0);
      encodeConfigRecord(w, { resourceType: rec.resourceType, resourceName: rec.resourceName, name: rec.name, value: rec.value }, 0);
      break;
    case 'partitionChange':
      // v3 (KIP-1279) carries the leader epoch explicitly; leader, ISR and replicas as in Kafka's
      // PartitionChangeRecord (-2 / null = unchanged).
      w.uvarint(MetadataRecordType.PARTITION_CHANGE).uvarint(3);
      encodePartitionChangeRecord(
        w,
        {
          partitionId: rec.partition,
          topicId: rec.topicId,
          leaderEpoch: rec.leaderEpoch,
          leader: rec.leader ?? -2,
          isr: rec.isr ? [...rec.isr] : null,
          replicas: rec.replicas ? [...rec.replicas] : null,
          addingReplicas: rec.addingReplicas ? [...rec.addingReplicas] : null,
          removingReplicas: rec.removingReplicas ? [...rec.removingReplicas] : null,
        },
        3,
      );
      break;
    case 'removeTopic':
      w.uvarint(MetadataRecordType.REMOVE_TOPIC).uvarint(0);
      encodeRemoveTopicRecord(w, { topicId: rec.topicId }, 0);
      break;
    case 'producerIds':
      w.uvarint(MetadataRecordType.PRODUCER_IDS).uvarint(0);
      encodeProducerIdsRecord(w, { brokerId: rec.brokerId, brokerEpoch: -1n, nextProducerId: BigInt(rec.nextProducerId) }, 0);
      break;
    case 'acl':
      w.uvarint(MetadataRecordType.ACCESS_CONTROL_ENTRY).uvarint(0);
      encodeAccessControlEntryRecord(w, rec, 0);
      break;
    case 'removeAcl':
      w.uvarint(MetadataRecordType.REMOVE_ACCESS_CONTROL_ENTRY).uvarint(0);
      encodeRemoveAccessControlEntryRecord(w, { id: rec.id }, 0);
      break;
    case 'scram':
      w.uvarint(MetadataRecordType.USER_SCRAM_CREDENTIAL).uvarint(0);
      encodeUserScramCredentialRecord(w, rec, 0);
      break;
    case 'removeScram':
      w.uvarint(MetadataRecordType.REMOVE_USER_SCRAM_CREDENTIAL).uvarint(0);
      encodeRemoveUserScramCredentialRecord(w, { name: rec.name, mechanism: rec.mechanism }, 0);
      break;
    case 'quota':
      w.uvarint(MetadataRecordType.CLIENT_QUOTA).uvarint(0);
      encodeClientQuotaRecord(w, { entity: rec.entity, key: rec.key, value: rec.value, remove: rec.remove }, 0);
      break;
    case 'mirrorTopicState':
      w.uvarint(MetadataRecordType.MIRROR_TOPIC_STATE_CHANGE).uvarint(0);
      encodeMirrorTopicStateChangeRecord(w, { topicId: rec.topicId, mirrorName: rec.mirrorName, desiredState: rec.desiredState }, 0);
      break;
  }
  return w.toBuffer();
}

/** Decodes one record value; returns null for record types this node does not use. */
export function decodeMetadataRecord(value: Buffer): MetadataRecord | null {
  const r = new Reader(value);
  const frame = r.uvarint();
  if (frame !== FRAME_VERSION) throw new DecodeError(`unknown metadata record frame version ${frame}`);
  const apiKey = r.uvarint();
  const version = r.uvarint();
  switch (apiKey) {
    case MetadataRecordType.TOPIC: {
      const m = decodeTopicRecord(r, version);
      return { type: 'topic', name: m.name, topicId: m.topicId };
    }
    case MetadataRecordType.PARTITION: {
      const m = decodePartitionRecord(r, version);
      return {
        type: 'partition',
        topicId: m.topicId,
        partition: m.partitionId,
        leader: m.leader,
        leaderEpoch: m.leaderEpoch,
        partitionEpoch: m.partitionEpoch,
        replicas: m.replicas,
        isr: m.isr,
        ...(m.addingReplicas.length > 0 ? { addingReplicas: m.addingReplicas } : {}),
        ...(m.removingReplicas.length > 0 ? { removingReplicas: m.removingReplicas } : {}),
      };
    }
    case MetadataRecordType.CONFIG: {
      const m = decodeConfigRecord(r, version);
      return { type: 'config', resourceType: m.resourceType, resourceName: m.resourceName, name: m.name, value: m.value };
    }
    case MetadataRecordType.PARTITION_CHANGE: {
      const m = decodePartitionChangeRecord(r, version);
      return {
        type: 'partitionChange',
        topicId: m.topicId,
        partition: m.partitionId,
        leaderEpoch: m.leaderEpoch,
        ...(m.leader !== -2 ? { leader: m.leader } : {}),
        ...(m.isr !== null ? { isr: m.isr } : {}),
        ...(m.replicas !== null ? { replicas: m.replicas } : {}),
        ...(m.addingReplicas !== null ? { addingReplicas: m.addingReplicas } : {}),
        ...(m.removingReplicas !== null ? { removingReplicas: m.removingReplicas } : {}),
      };
    }
    case MetadataRecordType.REMOVE_TOPIC: {
      const m = decodeRemoveTopicRecord(r, version);
      return { type: 'removeTopic', topicId: m.topicId };
    }
    case MetadataRecordType.PRODUCER_IDS: {
      const m = decodeProducerIdsRecord(r, version);
      return { type: 'producerIds', brokerId: m.brokerId, nextProducerId: Number(m.nextProducerId) };
    }
    case MetadataRecordType.ACCESS_CONTROL_ENTRY: {
      const m = decodeAccessControlEntryRecord(r, version);
      return {
        type: 'acl',
        id: m.id,
        resourceType: m.resourceType,
        resourceName: m.resourceName,
        patternType: m.patternType,
        principal: m.principal,
        host: m.host,
        operation: m.operation,
        permissionType: m.permissionType,
      };
    }
    case MetadataRecordType.REMOVE_ACCESS_CONTROL_ENTRY:
      return { type: 'removeAcl', id: decodeRemoveAccessControlEntryRecord(r, version).id };
    case MetadataRecordType.USER_SCRAM_CREDENTIAL: {
      const m = decodeUserScramCredentialRecord(r, version);
      return { type: 'scram', name: m.name, mechanism: m.mechanism, salt: Buffer.from(m.salt), storedKey: Buffer.from(m.storedKey), serverKey: Buffer.from(m.serverKey), iterations: m.iterations };
    }
    case MetadataRecordType.REMOVE_USER_SCRAM_CREDENTIAL: {
      const m = decodeRemoveUserScramCredentialRecord(r, version);
      return { type: 'removeScram', name: m.name, mechanism: m.mechanism };
    }
    case MetadataRecordType.CLIENT_QUOTA: {
      const m = decodeClientQuotaRecord(r, version);
      return { type: 'quota', entity: m.entity.map((e) => ({ entityType: e.entityType, entityName: e.entityName })), key: m.key, value: m.value, remove: m.remove };
    }
    case MetadataRecordType.MIRROR_TOPIC_STATE_CHANGE: {
      const m = decodeMirrorTopicStateChangeRecord(r, version);
      return { type: 'mirrorTopicState', topicId: m.topicId, mirrorName: m.mirrorName, desiredState: m.desiredState };
    }
    default:
      return null;
  }
}
