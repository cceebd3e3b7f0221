/**
 * AlterPartition (key 56), v2-3: a partition leader changes its ISR.
 *
 * Behavior (Kafka's ReplicationControlManager.alterPartition), through the same
 * `alterPartition` the node's own leaders call:
 * - BrokerEpoch must be the sender's current registration (else STALE_BROKER_EPOCH for the
 *   whole request); the sender must lead the partition at the current leader epoch
 *   (FENCED_LEADER_EPOCH when older, NOT_LEADER_OR_FOLLOWER otherwise) and name the current
 *   partition epoch (INVALID_UPDATE_VERSION).
 * - The new ISR holds replicas only, includes the leader, and every added member is a live,
 *   unfenced broker whose broker epoch (v3 NewIsrWithEpochs) is its current one
 *   (INELIGIBLE_REPLICA).
 * - The answer carries the partition as the controller now has it (leader, epochs, ISR).
 * Any node serves it: the change is a metadata write validated at the log's last offset.
 */
import { ErrorCode } from '../../protocol/generated/errors.js';
import { decodeAlterPartitionRequest, type AlterPartitionRequest } from '../../protocol/generated/messages/alter-partition-request.js';
import { encodeAlterPartitionResponse, type AlterPartitionResponseInput } from '../../protocol/generated/messages/alter-partition-response.js';
import type { ApiHandler } from '../../server/api-handler.js';
import type { BrokerContext } from '../broker-context.js';
import { alterPartition } from '../../controller/partition-ops.js';

export function alterPartitionHandler(ctx: BrokerContext): ApiHandler<AlterPartitionRequest, AlterPartitionResponseInput> {
  return {
    apiKey: 56,
    minVersion: 2,
    maxVersion: 3,
    decode: decodeAlterPartitionRequest,
    encode: encodeAlterPartitionResponse,
    async handle(rc, req) {
      const cluster = ctx.cluster;
      const sender = cluster.liveBrokers().find((b) => b.nodeId === req.brokerId);
      if (req.brokerEpoch !== -1n && (!sender || BigInt(sender.brokerEpoch) !== req.brokerEpoch)) {
        return { throttleTimeMs: 0, errorCode: ErrorCode.STALE_BROKER_EPOCH, topics: [] };
      }
      const topics = [];
      for (const t of req.topics) {
        const partitions = [];
        for (const p of t.partitions) {
          const isr = rc.apiVersion >= 3 ? p.newIsrWithEpochs.map((b) => b.brokerId) : p.newIsr;
          const staleMember =
            rc.apiVersion >= 3 &&
            p.newIsrWithEpochs.some((b) => b.brokerEpoch !== -1n && BigInt(cluster.liveBrokers().find((x) => x.nodeId === b.brokerId)?.brokerEpoch ?? -2) !== b.brokerEpoch);
          const r = staleMember
            ? { errorCode: ErrorCode.INELIGIBLE_REPLICA, errorMessage: 'A new ISR member has a stale broker epoch.' }
            : await alterPartition(ctx.controller, { topicId: t.topicId, partition: p.partitionIndex, leaderId: req.brokerId, leaderEpoch: p.leaderEpoch, partitionEpoch: p.partitionEpoch, newIsr: isr });
          partitions.push(
            'partition' in r
              ? { partitionIndex: p.partitionIndex, errorCode: ErrorCode.NONE, leaderId: r.partition.leader, leaderEpoch: r.partition.leaderEpoch, isr: r.partition.isr, leaderRecoveryState: 0, partitionEpoch: r.partition.partitionEpoch }
              : { partitionIndex: p.partitionIndex, errorCode: r.errorCode, leaderId: -1, leaderEpoch: -1, isr: [], leaderRecoveryState: 0, partitionEpoch: -1 },
          );
        }
        topics.push({ topicId: t.topicId, partitions });
      }
      return { throttleTimeMs: 0, errorCode: ErrorCode.NONE, topics };
    },
  };
}
