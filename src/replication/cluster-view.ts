/**
 * What replication needs of the cluster, as one narrow seam: the metadata image and its changes,
 * whether this node is fenced, its broker epoch, the inter-broker endpoint of every live node,
 * and AlterPartition to the active controller (Kafka's AlterPartitionManager). The node builds
 * it over its controller; on one node nothing here is ever asked to change an ISR.
 */
import type { MetadataListener } from '../controller/controller.js';
import type { MetadataImage, PartitionImage } from '../controller/metadata-image.js';

export interface ReplicaEndpoint {
  readonly host: string;
  readonly port: number;
}

/** One AlterPartition entry: the leader proposes a new ISR at its leader and partition epochs. */
export interface AlterPartitionRequest {
  readonly topicId: string;
  readonly partition: number;
  readonly leaderEpoch: number;
  readonly partitionEpoch: number;
  readonly isr: readonly number[];
}

export interface AlterPartitionResult {
  /** 0, or FENCED_LEADER_EPOCH, NOT_LEADER_OR_FOLLOWER, INVALID_UPDATE_VERSION, INELIGIBLE_REPLICA, ... */
  readonly errorCode: number;
  /** The partition as the controller wrote it, when it succeeded. */
  readonly partition?: PartitionImage;
}

export interface ClusterView {
  readonly nodeId: number;
  readonly image: MetadataImage;
  /** Applied metadata records, on every node for every record. */
  onChange(cb: MetadataListener): () => void;
  /** True once this node's registration lease is gone: it may lead nothing. */
  isFenced(): boolean;
  /** Called when `isFenced()` changes. */
  onFencedChange(cb: (fenced: boolean) => void): () => void;
  /** This node's broker epoch (sent as the replica epoch of follower fetches, v15+). */
  brokerEpoch(): number;
  /** The inter-broker endpoint of a live node, undefined when it is not registered. */
  endpointOf(nodeId: number): ReplicaEndpoint | undefined;
  alterPartition(req: AlterPartitionRequest): Promise<AlterPartitionResult>;
}
