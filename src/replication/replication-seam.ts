/**
 * What replication needs of the cluster, as one narrow seam: the metadata image and its changes,
 * the cluster's members as this node sees them (its own fencing and broker epoch, the live
 * registrations and their inter-broker endpoints: the controller room's one `ClusterView`), and
 * AlterPartition to the active controller (Kafka's AlterPartitionManager), with the controller's
 * own request and result types. The node builds it over its controller; on one node nothing here
 * is ever asked to change an ISR.
 */
import type { ClusterView } from '../controller/cluster-view.js';
import type { MetadataListener } from '../controller/controller.js';
import type { MetadataImage } from '../controller/metadata-image.js';
import type { AlterPartitionRequest, AlterPartitionResult } from '../controller/partition-ops.js';

export interface ReplicaEndpoint {
  readonly host: string;
  readonly port: number;
}

export interface ReplicationSeam {
  readonly nodeId: number;
  readonly image: MetadataImage;
  /** Applied metadata records, on every node for every record. */
  onChange(cb: MetadataListener): () => void;
  readonly cluster: ClusterView;
  alterPartition(req: AlterPartitionRequest): Promise<AlterPartitionResult>;
}

/** The inter-broker endpoint of a live node, undefined while it is not registered. */
export function replicaEndpoint(cluster: ClusterView, nodeId: number): ReplicaEndpoint | undefined {
  const b = cluster.liveBrokers().find((x) => x.nodeId === nodeId);
  return b === undefined ? undefined : { host: b.host, port: b.port };
}

/** Calls `cb` whenever this node's fencing changes. */
export function onFencingChange(cluster: ClusterView, cb: () => void): () => void {
  const offs = [cluster.on('fenced', cb), cluster.on('unfenced', cb)];
  return () => offs.forEach((off) => off());
}
