/**
 * The replication seam (src/replication/cluster-view.ts) over this node's controller: the image
 * and its changes, the node's registration (fencing, broker epoch), the other nodes' inter-broker
 * endpoints, and AlterPartition.
 *
 * AlterPartition is applied through the controller's fenced metadata write with Kafka's
 * validation (ReplicationControlManager.alterPartition): the partition must exist
 * (UNKNOWN_TOPIC_OR_PARTITION), this node must be its leader (NOT_LEADER_OR_FOLLOWER) at the
 * current leader epoch (FENCED_LEADER_EPOCH), the partition epoch must match
 * (INVALID_UPDATE_VERSION), the new ISR must hold the leader and only replicas
 * (INVALID_REQUEST), and every member added must be a live broker (INELIGIBLE_REPLICA). The
 * write is validated against the image at the metadata log's last offset and committed only if
 * that offset is still the last, so two leaders can never both change one partition.
 */
import type { Controller } from '../controller/controller.js';
import { ErrorCode } from '../protocol/generated/errors.js';
import type { AlterPartitionRequest, AlterPartitionResult, ClusterView } from '../replication/cluster-view.js';

export function replicationView(controller: Controller, self: { host: string; port: () => number }): ClusterView {
  const cluster = controller.cluster;
  const alterPartition = async (req: AlterPartitionRequest): Promise<AlterPartitionResult> => {
    let refused: number = ErrorCode.NONE;
    const r = await controller.write((img) => {
      const p = img.topicsById.get(req.topicId)?.partitions[req.partition];
      const fail = (code: number): [] => {
        refused = code;
        return [];
      };
      if (p === undefined) return fail(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
      if (p.leader !== controller.nodeId) return fail(ErrorCode.NOT_LEADER_OR_FOLLOWER);
      if (req.leaderEpoch !== p.leaderEpoch) return fail(ErrorCode.FENCED_LEADER_EPOCH);
      if (req.partitionEpoch !== p.partitionEpoch) return fail(ErrorCode.INVALID_UPDATE_VERSION);
      if (!req.isr.includes(p.leader) || req.isr.some((id) => !p.replicas.includes(id))) return fail(ErrorCode.INVALID_REQUEST);
      if (req.isr.some((id) => !p.isr.includes(id) && !cluster.isEligible(id))) return fail(ErrorCode.INELIGIBLE_REPLICA);
      refused = ErrorCode.NONE;
      return [{ type: 'partitionChange', topicId: req.topicId, partition: req.partition, leaderEpoch: p.leaderEpoch, isr: [...req.isr] }];
    });
    if (r.errorCode !== ErrorCode.NONE) return { errorCode: r.errorCode };
    if (refused !== ErrorCode.NONE) return { errorCode: refused };
    const p = controller.image.topicsById.get(req.topicId)?.partitions[req.partition];
    return p === undefined ? { errorCode: ErrorCode.NONE } : { errorCode: ErrorCode.NONE, partition: p };
  };
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
    alterPartition,
  };
}
