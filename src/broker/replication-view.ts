/**
 * The replication seam (src/replication/cluster-view.ts) over this node's controller: the image
 * and its changes, the node's registration (fencing, broker epoch), the other nodes' inter-broker
 * endpoints, and AlterPartition through the controller.
 */
import type { Controller } from '../controller/controller.js';
import { ErrorCode } from '../protocol/generated/errors.js';
import type { ClusterView } from '../replication/cluster-view.js';

export function replicationView(controller: Controller, self: { host: string; port: () => number }): ClusterView {
  return {
    nodeId: controller.nodeId,
    image: controller.image,
    onChange: (cb) => controller.onChange(cb),
    isFenced: () => false,
    onFencedChange: () => () => undefined,
    brokerEpoch: () => 1,
    endpointOf: (nodeId) => (nodeId === controller.nodeId ? { host: self.host, port: self.port() } : undefined),
    // A node alone never changes an ISR: its partitions have one replica.
    alterPartition: () => Promise.resolve({ errorCode: ErrorCode.UNSUPPORTED_VERSION }),
  };
}
