/**
 * The replication seam (src/replication/cluster-view.ts) over this node's controller: the image
 * and its changes, the node's registration (fencing, broker epoch), the other nodes' inter-broker
 * endpoints, and AlterPartition (the controller's, with Kafka's leader-epoch and partition-epoch
 * fencing, written through the fenced metadata log).
 */
import type { Controller } from '../controller/controller.js';
import { alterPartition } from '../controller/partition-ops.js';
import type { ClusterView } from '../replication/cluster-view.js';

export function replicationView(controller: Controller, self: { host: string; port: () => number }): ClusterView {
  const cluster = controller.cluster;
  return {
    nodeId: controller.nodeId,
    image: controller.image,
    onChange: (cb) => controller.onChange(cb),
    isFenced: () => cluster.fenced,
    onFencedChange: (cb) => {
      const offs = [cluster.on('fenced', () => cb(true)), cluster.on('unfenced', () => cb(false))];
      return () => offs.forEach((off) => off());
    },
    brokerEpoch: () => cluster.brokerEpoch(),
    endpointOf: (nodeId) => {
      if (nodeId === controller.nodeId) return { host: self.host, port: self.port() };
      const b = cluster.liveBrokers().find((x) => x.nodeId === nodeId);
      return b === undefined ? undefined : { host: b.host, port: b.port };
    },
    alterPartition: async (req) => {
      const r = await alterPartition(controller, { topicId: req.topicId, partition: req.partition, leaderId: controller.nodeId, leaderEpoch: req.leaderEpoch, partitionEpoch: req.partitionEpoch, newIsr: req.isr });
      return r.errorCode === 0 && 'partition' in r ? { errorCode: 0, partition: r.partition } : { errorCode: r.errorCode };
    },
  };
}
