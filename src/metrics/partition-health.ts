/**
 * Partition health from the metadata image alone, so the numbers are right on one node and on a
 * replicated cluster alike, as Kafka's ReplicaManager and controller gauges define them:
 *
 * - UnderReplicatedPartitions: led here, ISR smaller than the replica set (Partition.isUnderReplicated);
 * - UnderMinIsrPartitionCount: led here, ISR smaller than min.insync.replicas (isUnderMinIsr);
 * - AtMinIsrPartitionCount: led here, ISR exactly min.insync.replicas (isAtMinIsr);
 * - OfflinePartitionsCount: no leader (-1), cluster-wide, as the active controller counts it.
 *
 * IsrShrinksPerSec / IsrExpandsPerSec (`kafka_server_replicamanager_isrshrinks_total`,
 * `..._isrexpands_total`): counted on each metadata change by comparing the ISR of every partition
 * led here with the one seen before, so a PartitionChangeRecord (or a re-sent PartitionRecord)
 * that shrinks or grows an ISR counts once, on the node that leads the partition, as Kafka's
 * Partition.shrinkIsr/expandIsr count on the leader.
 */
import { Counter, type Registry } from 'prom-client';
import type { MetadataListener } from '../controller/controller.js';
import type { MetadataImage } from '../controller/metadata-image.js';

interface PartitionHealth {
  /** Partitions with a replica on this node. */
  readonly hosted: number;
  readonly leaders: number;
  readonly underReplicated: number;
  readonly underMinIsr: number;
  readonly atMinIsr: number;
  readonly offline: number;
  readonly partitions: number;
}

/** The topic's min.insync.replicas: its override, else the cluster default, else Kafka's 1. */
export function minInsyncReplicas(image: MetadataImage, topicConfigs: ReadonlyMap<string, string>): number {
  return Number(topicConfigs.get('min.insync.replicas') ?? image.brokerConfigs.get('')?.get('min.insync.replicas') ?? '1');
}

export function partitionHealth(image: MetadataImage, nodeId: number): PartitionHealth {
  let hosted = 0;
  let leaders = 0;
  let underReplicated = 0;
  let underMinIsr = 0;
  let atMinIsr = 0;
  let offline = 0;
  let partitions = 0;
  for (const t of image.topicsByName.values()) {
    const minIsr = minInsyncReplicas(image, t.configs);
    for (const p of t.partitions) {
      partitions++;
      if (p.leader < 0) offline++;
      if (p.replicas.includes(nodeId)) hosted++;
      if (p.leader !== nodeId) continue;
      leaders++;
      if (p.isr.length < p.replicas.length) underReplicated++;
      if (p.isr.length < minIsr) underMinIsr++;
      else if (p.isr.length === minIsr) atMinIsr++;
    }
  }
  return { hosted, leaders, underReplicated, underMinIsr, atMinIsr, offline, partitions };
}

/** Subscribes to metadata changes (the controller's onChange); returns the unsubscribe. */
type MetadataSubscription = (listener: MetadataListener) => () => void;

export class IsrChangeCounter {
  /** ISR size per partition led here, as last seen: `topicId:partition` → size. */
  private readonly seen = new Map<string, number>();
  private readonly unsubscribe: () => void;

  constructor(
    private readonly image: MetadataImage,
    private readonly nodeId: number,
    register: Registry,
    onChange: MetadataSubscription,
  ) {
    const shrinks = new Counter({ name: 'kafka_server_replicamanager_isrshrinks_total', help: 'ISR shrinks of partitions led here (Kafka ReplicaManager IsrShrinksPerSec).', registers: [register] });
    const expands = new Counter({ name: 'kafka_server_replicamanager_isrexpands_total', help: 'ISR expansions of partitions led here (Kafka ReplicaManager IsrExpandsPerSec).', registers: [register] });
    this.scan(() => undefined, () => undefined);
    this.unsubscribe = onChange((records, removed) => {
      for (const t of removed.values()) for (const p of t.partitions) this.seen.delete(`${t.topicId}:${p.partition}`);
      if (records.some((r) => r.type === 'partition' || r.type === 'partitionChange')) this.scan(() => shrinks.inc(), () => expands.inc());
    });
  }

  /** Compares every partition led here with what was seen; a partition new to this node only counts from now on. */
  private scan(shrank: () => void, grew: () => void): void {
    const present = new Set<string>();
    for (const t of this.image.topicsById.values()) {
      for (const p of t.partitions) {
        if (p.leader !== this.nodeId) continue;
        const key = `${t.topicId}:${p.partition}`;
        present.add(key);
        const before = this.seen.get(key);
        if (before !== undefined && p.isr.length < before) shrank();
        else if (before !== undefined && p.isr.length > before) grew();
        this.seen.set(key, p.isr.length);
      }
    }
    for (const key of this.seen.keys()) if (!present.has(key)) this.seen.delete(key);
  }

  close(): void {
    this.unsubscribe();
  }
}
