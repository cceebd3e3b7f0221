/**
 * The metadata image: what the controller's metadata log says the cluster looks like, rebuilt
 * by replaying the log at start. Plain data, mutated only by `apply*` calls from the controller
 * (on the event loop), read by every handler.
 */

import type { AclEntry } from '../auth/acl-model.js';
import { ConfigResourceType } from '../protocol/config-resource-type.js';
import type { ScramCredential } from './metadata-records.js';

export interface PartitionImage {
  readonly partition: number;
  leader: number;
  leaderEpoch: number;
  partitionEpoch: number;
  replicas: number[];
  isr: number[];
  /** A reassignment in progress (KIP-455): replicas being added, and being removed once they are in the ISR. */
  addingReplicas?: number[];
  removingReplicas?: number[];
}

export interface TopicImage {
  readonly name: string;
  readonly topicId: string;
  readonly partitions: PartitionImage[];
  /** Topic-level overrides (ConfigRecords of resource type TOPIC). */
  readonly configs: Map<string, string>;
  /** Mirror binding (KIP-1279), null when the topic is not mirrored. */
  mirror: { mirrorName: string; desiredState: number; lastStateChangeOffset: number } | null;
}

export class MetadataImage {
  readonly topicsByName = new Map<string, TopicImage>();
  readonly topicsById = new Map<string, TopicImage>();
  /** Broker-level dynamic configs: resource name ('' = cluster default, or node id) → key → value. */
  readonly brokerConfigs = new Map<string, Map<string, string>>();
  /** Other config resources (e.g. CLUSTER_MIRROR): type → name → key → value. */
  readonly otherConfigs = new Map<number, Map<string, Map<string, string>>>();
  /** ACL bindings by id (AccessControlEntryRecord). */
  readonly acls = new Map<string, AclEntry>();
  /** SCRAM credentials: user → mechanism → credential. */
  readonly scram = new Map<string, Map<number, ScramCredential>>();
  /** Client quotas: canonical entity key → entity and its key → value map (ClientQuotaRecord). */
  readonly quotas = new Map<string, { entity: { entityType: string; entityName: string | null }[]; values: Map<string, number> }>();
  /** First producer id not yet handed out in a block (ProducerIdsRecord). */
  nextProducerId = 0;
  /** Offset of the last record applied; -1 for an empty log. */
  offset = -1;

  /** Forgets everything (before a snapshot is loaded into this same image). */
  clear(): void {
    this.topicsByName.clear();
    this.topicsById.clear();
    this.brokerConfigs.clear();
    this.otherConfigs.clear();
    this.acls.clear();
    this.scram.clear();
    this.quotas.clear();
    this.nextProducerId = 0;
    this.offset = -1;
  }

  topic(name: string): TopicImage | undefined {
    return this.topicsByName.get(name);
  }

  applyTopic(name: string, topicId: string): void {
    const t: TopicImage = { name, topicId, partitions: [], configs: new Map(), mirror: null };
    this.topicsByName.set(name, t);
    this.topicsById.set(topicId, t);
  }

  applyPartition(topicId: string, p: PartitionImage): void {
    const t = this.topicsById.get(topicId);
    if (!t) return;
    t.partitions[p.partition] = p;
  }

  applyPartitionChange(
    topicId: string,
    partition: number,
    change: { leader?: number; leaderEpoch?: number; isr?: number[] | null; replicas?: number[] | null; addingReplicas?: number[]; removingReplicas?: number[] },
  ): void {
    const p = this.topicsById.get(topicId)?.partitions[partition];
    if (!p) return;
    if (change.leader !== undefined && change.leader !== -2) {
      p.leader = change.leader;
      // A leader change without an explicit epoch bumps it by one (Kafka's PartitionChangeBuilder).
      if (change.leaderEpoch === undefined || change.leaderEpoch < 0) p.leaderEpoch += 1;
    }
    if (change.leaderEpoch !== undefined && change.leaderEpoch >= 0) p.leaderEpoch = change.leaderEpoch;
    if (change.isr) p.isr = change.isr;
    if (change.replicas) p.replicas = change.replicas;
    if (change.addingReplicas) p.addingReplicas = change.addingReplicas;
    if (change.removingReplicas) p.removingReplicas = change.removingReplicas;
    p.partitionEpoch += 1;
  }

  applyRemoveTopic(topicId: string): void {
    const t = this.topicsById.get(topicId);
    if (!t) return;
    this.topicsById.delete(topicId);
    if (this.topicsByName.get(t.name) === t) this.topicsByName.delete(t.name);
  }

  applyConfig(resourceType: number, resourceName: string, name: string, value: string | null): void {
    if (resourceType === ConfigResourceType.TOPIC) {
      const t = this.topicsByName.get(resourceName);
      if (!t) return;
      if (value === null) t.configs.delete(name);
      else t.configs.set(name, value);
      return;
    }
    let byName: Map<string, Map<string, string>>;
    if (resourceType === ConfigResourceType.BROKER) {
      byName = this.brokerConfigs;
    } else {
      let m = this.otherConfigs.get(resourceType);
      if (!m) this.otherConfigs.set(resourceType, (m = new Map()));
      byName = m;
    }
    let entries = byName.get(resourceName);
    if (!entries) byName.set(resourceName, (entries = new Map()));
    if (value === null) entries.delete(name);
    else entries.set(name, value);
    if (entries.size === 0) byName.delete(resourceName);
  }

  applyMirrorTopicState(topicId: string, mirrorName: string | null, desiredState: number, offset: number): void {
    const t = this.topicsById.get(topicId);
    if (!t) return;
    t.mirror = mirrorName === null ? null : { mirrorName, desiredState, lastStateChangeOffset: offset };
  }
}

/** A stable key for a quota entity: its (type, name) pairs sorted by type. */
export function quotaEntityKey(entity: readonly { entityType: string; entityName: string | null }[]): string {
  return JSON.stringify([...entity].sort((a, b) => (a.entityType < b.entityType ? -1 : 1)).map((e) => [e.entityType, e.entityName]));
}
