/**
 * The replication seam (src/replication/replication-seam.ts) over this node's controller: the
 * image and its changes, the cluster's members, and AlterPartition (the controller's, with
 * Kafka's leader-epoch and partition-epoch fencing, written through the fenced metadata log).
 */
import type { Controller } from '../controller/controller.js';
import { alterPartition } from '../controller/partition-ops.js';
import type { ReplicationSeam } from '../replication/replication-seam.js';

export function replicationView(controller: Controller): ReplicationSeam {
  return {
    nodeId: controller.nodeId,
    image: controller.image,
    onChange: (cb) => controller.onChange(cb),
    cluster: controller.cluster,
    alterPartition: (req) => alterPartition(controller, req),
  };
}
