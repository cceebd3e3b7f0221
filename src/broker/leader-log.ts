/**
 * The log of a partition for a request only its leader answers (ListOffsets,
 * OffsetForLeaderEpoch), checked in the order of Kafka's ReplicaManager.getPartitionOrException
 * and Partition.localLogWithEpochOrThrow: a partition this node does not lead unfenced is
 * NOT_LEADER_OR_FOLLOWER, an unknown one (or one without a log here) UNKNOWN_TOPIC_OR_PARTITION,
 * a current leader epoch older than the partition's FENCED_LEADER_EPOCH and a newer one
 * UNKNOWN_LEADER_EPOCH (-1: the client sent none, nothing to check).
 */
import type { PartitionImage, TopicImage } from '../controller/metadata-image.js';
import { ErrorCode } from '../protocol/generated/errors.js';
import type { PartitionLog } from '../storage/partition-log.js';
import type { BrokerContext } from './broker-context.js';

interface LeaderLog {
  readonly part: PartitionImage;
  readonly log: PartitionLog;
}

/** The partition and its log, or the error code to answer with. */
export async function leaderLog(ctx: BrokerContext, topic: TopicImage | undefined, topicName: string, partition: number, currentLeaderEpoch: number): Promise<LeaderLog | number> {
  const part = topic?.partitions[partition];
  const replication = ctx.replicas.replication;
  if (part && replication !== null && (part.leader !== ctx.nodeId || replication.fenced)) return ErrorCode.NOT_LEADER_OR_FOLLOWER;
  const log = part ? (ctx.replicas.getLog(topicName, partition) ?? (await ctx.replicas.ensureLog(topicName, partition))) : undefined;
  if (!part || !log) return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION;
  // Only -1 means "no epoch" (Kafka's Partition.checkCurrentLeaderEpoch): any other value below the
  // partition's epoch, a negative one included, is fenced.
  if (currentLeaderEpoch !== -1 && currentLeaderEpoch < part.leaderEpoch) return ErrorCode.FENCED_LEADER_EPOCH;
  if (currentLeaderEpoch > part.leaderEpoch) return ErrorCode.UNKNOWN_LEADER_EPOCH;
  return { part, log };
}
