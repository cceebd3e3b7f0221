/**
 * What LOG_TRUNCATION asks the source cluster (KIP-1279 spec §8.6): whether it mirrors the topic
 * back from us (a loop), and the last mirrored epoch it holds for the partition as a mirror of us
 * (direct failback). A source without the mirroring APIs (plain Apache Kafka) answers neither:
 * no loop, LME -1.
 */
import { Apis } from '../client/apis.js';
import type { KafkaClient } from '../client/kafka-client.js';
import { ErrorCode } from '../protocol/generated/errors.js';
import { KafkaError, errorCodeOf } from '../protocol/kafka-error.js';
import type { DescribeClusterMirrorsResponse } from '../protocol/generated/messages/describe-cluster-mirrors-response.js';

/** LOG_TRUNCATION's two questions to the source, as a seam (a simulated source answers them too). */
export interface SourceLookups {
  /** Loop check (§8.6 2a). */
  hasMirrorLoop(ourClusterId: string, topicName: string): Promise<boolean>;
  /** LME lookup (§8.6 2b); -1 when none. */
  lastMirrorEpoch(ourClusterId: string, topicId: string, partition: number): Promise<number>;
}

/** The lookups over a Kafka client to the source. */
export function kafkaSourceLookups(source: KafkaClient): SourceLookups {
  return {
    hasMirrorLoop: (id, topic) => hasMirrorLoop(source, id, topic),
    lastMirrorEpoch: (id, topicId, partition) => lookupLastMirrorEpoch(source, id, topicId, partition),
  };
}

/** Loop check (§8.6 2a): a mirror on the source whose source is us and which is not stopped for this topic. */
export async function hasMirrorLoop(source: KafkaClient, ourClusterId: string, topicName: string): Promise<boolean> {
  let res;
  try {
    res = await source.sendIfSupported(Apis.ListClusterMirrors, { includeTopicNames: true });
  } catch (err) {
    throw new KafkaError(errorCodeOf(err), `loop check on the source failed: ${(err as Error).message}`);
  }
  if (res === null || res.errorCode !== 0) return false;
  // TopicNames lists mirroring and paused topics, not stopped ones.
  return res.mirrors.some((m) => m.sourceClusterId === ourClusterId && m.topicNames.includes(topicName));
}

/**
 * LME lookup (§8.6 2b): DescribeClusterMirrors to every source broker with our cluster id and the
 * partition; the max over the answers; -1 when none.
 */
export async function lookupLastMirrorEpoch(source: KafkaClient, ourClusterId: string, topicId: string, partition: number): Promise<number> {
  const md = await source.metadata([]);
  const brokers = md.brokers.length > 0 ? md.brokers.map((b) => b.nodeId) : [null];
  let lme = -1;
  for (const b of brokers) {
    let res: DescribeClusterMirrorsResponse | null;
    try {
      res = await source.sendIfSupported(
        Apis.DescribeClusterMirrors,
        { mirrorNames: [], includeAuthorizedOperations: false, clusterId: ourClusterId, lastMirrorEpochLookups: [{ topicId, partitions: [partition] }] },
        b,
      );
    } catch (err) {
      throw new KafkaError(errorCodeOf(err), `last mirrored epoch lookup on the source failed: ${(err as Error).message}`);
    }
    if (res === null || res.errorCode !== ErrorCode.NONE) continue;
    for (const t of res.lookupResults) {
      if (t.topicId !== topicId) continue;
      for (const p of t.partitions) if (p.partitionIndex === partition && p.lastMirrorEpoch > lme) lme = p.lastMirrorEpoch;
    }
  }
  return lme;
}
