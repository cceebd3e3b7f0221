/**
 * DescribeQuorum (key 55), v0-2.
 *
 * Behavior: a node alone is a quorum of one: it leads `__cluster_metadata-0` at epoch 1 (the
 * epoch its metadata batches carry), is the only voter, and its log end offset is the high
 * watermark (every metadata write is fsynced before it is applied). In a cluster on etcd the
 * consensus is etcd's; what is reported is Fjord's view of it: the leader is the active
 * controller, the leader epoch its election epoch (the election key's create revision), the
 * voters every live node (each may be elected), each at the log end offset this node has applied
 * (etcd commits before any node applies, so the high watermark is that offset). Any other
 * topic-partition → UNKNOWN_TOPIC_OR_PARTITION, as a KRaft controller answers for partitions it
 * does not host.
 */
import { ErrorCode } from '../../protocol/generated/errors.js';
import { decodeDescribeQuorumRequest, type DescribeQuorumRequest } from '../../protocol/generated/messages/describe-quorum-request.js';
import { encodeDescribeQuorumResponse, type DescribeQuorumResponseInput } from '../../protocol/generated/messages/describe-quorum-response.js';
import type { ApiHandler } from '../../server/api-handler.js';
import type { BrokerContext } from '../broker-context.js';

const METADATA_TOPIC = '__cluster_metadata';
const ZERO_UUID = '00000000-0000-0000-0000-000000000000';

export function describeQuorumHandler(ctx: BrokerContext): ApiHandler<DescribeQuorumRequest, DescribeQuorumResponseInput> {
  return {
    apiKey: 55,
    minVersion: 0,
    maxVersion: 2,
    decode: decodeDescribeQuorumRequest,
    encode: encodeDescribeQuorumResponse,
    handle(rc, req) {
      const v = rc.apiVersion;
      const now = BigInt(Date.now());
      const end = BigInt(ctx.image.offset + 1);
      const voter = (id: number): { replicaId: number; replicaDirectoryId?: string; logEndOffset: bigint; lastFetchTimestamp: bigint; lastCaughtUpTimestamp: bigint } => ({
        replicaId: id,
        ...(v >= 2 ? { replicaDirectoryId: ZERO_UUID } : {}),
        logEndOffset: end,
        lastFetchTimestamp: now,
        lastCaughtUpTimestamp: now,
      });
      const members = ctx.cluster.liveBrokers();
      const voters = members.map((b) => voter(b.nodeId));
      const leaderId = ctx.cluster.controllerId();
      const leaderEpoch = ctx.cluster.controllerEpoch();
      const topics = req.topics.map((t) => ({
        topicName: t.topicName,
        partitions: t.partitions.map((p) =>
          t.topicName === METADATA_TOPIC && p.partitionIndex === 0
            ? { partitionIndex: 0, errorCode: ErrorCode.NONE, errorMessage: null, leaderId, leaderEpoch, highWatermark: end, currentVoters: voters, observers: [] }
            : { partitionIndex: p.partitionIndex, errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, errorMessage: null, leaderId: -1, leaderEpoch: -1, highWatermark: -1n, currentVoters: [], observers: [] },
        ),
      }));
      return {
        errorCode: ErrorCode.NONE,
        errorMessage: null,
        topics,
        // One node reaches its embedded controller on every listener: the one asked names itself,
        // as DescribeCluster answers with the address of the listener it was asked on.
        ...(v >= 2
          ? {
              nodes: ctx.cluster.distributed
                ? members.map((b) => ({ nodeId: b.nodeId, listeners: b.endpoints.map((e) => ({ name: e.name, host: e.host, port: e.port })) }))
                : [{ nodeId: ctx.nodeId, listeners: [{ name: rc.listener?.name ?? 'PLAINTEXT', host: rc.listener?.host ?? ctx.host, port: rc.listener?.port ?? ctx.port }] }],
            }
          : {}),
      };
    },
  };
}
