/**
 * `SourceEndpoint` over the project's Kafka client: the mirror fetcher's calls as generated
 * requests (consumer form: replica id -1, READ_UNCOMMITTED), answers converted to the fetcher's
 * shapes once per partition. A fetched partition's `records` is passed on as the decoder returned
 * it, a slice of the response frame, which the fetcher gives back (`release`) once appended.
 */
import { Apis } from '../client/apis.js';
import type { KafkaClient } from '../client/kafka-client.js';
import type {
  EpochEndOffset,
  EpochRequest,
  FetchRequest,
  FetchResponse,
  ListOffsetsPartitionRequest,
  ListOffsetsPartitionResult,
  SourceEndpoint,
  SourceMetadata,
} from './source-endpoint.js';

/** Kafka's ListOffsetsRequest.CONSUMER_REPLICA_ID / OffsetsForLeaderEpochRequest.CONSUMER_REPLICA_ID. */
const CONSUMER_REPLICA_ID = -1;
const READ_UNCOMMITTED = 0;

export class KafkaSourceEndpoint implements SourceEndpoint {
  constructor(readonly client: KafkaClient) {}

  async metadata(topics: readonly string[]): Promise<SourceMetadata> {
    const md = await this.client.metadata(topics);
    return {
      topics: md.topics.map((t) => ({
        errorCode: t.errorCode,
        name: t.name,
        topicId: t.topicId,
        partitions: t.partitions.map((p) => ({ errorCode: p.errorCode, partition: p.partitionIndex, leaderId: p.leaderId, leaderEpoch: p.leaderEpoch })),
      })),
    };
  }

  async fetch(brokerId: number, req: FetchRequest, fetcherId = 0): Promise<FetchResponse> {
    // The answer's frame is held until the fetcher releases it, so its buffer is read into again.
    const { value: res, release } = await this.client.sendHoldingFrame(
      Apis.Fetch,
      {
        replicaId: CONSUMER_REPLICA_ID,
        maxWaitMs: req.maxWaitMs,
        minBytes: req.minBytes,
        maxBytes: req.maxBytes,
        isolationLevel: READ_UNCOMMITTED,
        sessionId: req.sessionId,
        sessionEpoch: req.sessionEpoch,
        topics: req.topics.map((t) => ({
          topicId: t.topicId,
          partitions: t.partitions.map((p) => ({
            partition: p.partition,
            currentLeaderEpoch: p.currentLeaderEpoch,
            fetchOffset: BigInt(p.fetchOffset),
            lastFetchedEpoch: p.lastFetchedEpoch,
            partitionMaxBytes: p.partitionMaxBytes,
          })),
        })),
        forgottenTopicsData: req.forgotten.map((f) => ({ topicId: f.topicId, partitions: f.partitions })),
      },
      brokerId,
      // Lane 0 is the shared connection the mirror's control requests (Metadata, the lookups of
      // LOG_TRUNCATION, ListOffsets) use: a long poll there would hold each of them up to
      // maxWaitMs. Each fetch loop has a lane of its own, as each Kafka fetcher thread does.
      fetcherId + 1,
    );
    // Present only when leaders moved (NOT_LEADER_OR_FOLLOWER / FENCED_LEADER_EPOCH), KIP-951.
    if (res.nodeEndpoints.length > 0) this.client.learnBrokers(res.nodeEndpoints);
    return {
      errorCode: res.errorCode,
      throttleTimeMs: res.throttleTimeMs,
      sessionId: res.sessionId,
      release,
      topics: res.responses.map((t) => ({
        topicId: t.topicId,
        partitions: t.partitions.map((p) => ({
          partition: p.partitionIndex,
          errorCode: p.errorCode,
          highWatermark: Number(p.highWatermark),
          lastStableOffset: Number(p.lastStableOffset),
          logStartOffset: Number(p.logStartOffset),
          currentLeaderId: p.currentLeader.leaderId,
          currentLeaderEpoch: p.currentLeader.leaderEpoch,
          // The field's default (-1, -1) means no divergence was found.
          divergingEpoch: p.divergingEpoch.epoch >= 0 || p.divergingEpoch.endOffset >= 0n ? { epoch: p.divergingEpoch.epoch, endOffset: Number(p.divergingEpoch.endOffset) } : null,
          records: p.records,
        })),
      })),
    };
  }

  async listOffsets(brokerId: number, parts: readonly ListOffsetsPartitionRequest[]): Promise<ListOffsetsPartitionResult[]> {
    const res = await this.client.send(
      Apis.ListOffsets,
      {
        replicaId: CONSUMER_REPLICA_ID,
        isolationLevel: READ_UNCOMMITTED,
        topics: [...byTopic(parts)].map(([name, ps]) => ({
          name,
          partitions: ps.map((p) => ({ partitionIndex: p.partition, currentLeaderEpoch: p.currentLeaderEpoch, timestamp: BigInt(p.timestamp) })),
        })),
      },
      brokerId,
    );
    return res.topics.flatMap((t) =>
      t.partitions.map((p) => ({ topic: t.name, partition: p.partitionIndex, errorCode: p.errorCode, offset: Number(p.offset), leaderEpoch: p.leaderEpoch })),
    );
  }

  async offsetsForLeaderEpoch(brokerId: number, parts: readonly EpochRequest[]): Promise<EpochEndOffset[]> {
    const res = await this.client.send(
      Apis.OffsetForLeaderEpoch,
      {
        replicaId: CONSUMER_REPLICA_ID,
        topics: [...byTopic(parts)].map(([topic, ps]) => ({
          topic,
          partitions: ps.map((p) => ({ partition: p.partition, currentLeaderEpoch: p.currentLeaderEpoch, leaderEpoch: p.leaderEpoch })),
        })),
      },
      brokerId,
    );
    return res.topics.flatMap((t) =>
      t.partitions.map((p) => ({ topic: t.topic, partition: p.partition, errorCode: p.errorCode, leaderEpoch: p.leaderEpoch, endOffset: Number(p.endOffset) })),
    );
  }
}

function byTopic<T extends { readonly topic: string }>(items: readonly T[]): Map<string, T[]> {
  const m = new Map<string, T[]>();
  for (const it of items) {
    let list = m.get(it.topic);
    if (list === undefined) m.set(it.topic, (list = []));
    list.push(it);
  }
  return m;
}
