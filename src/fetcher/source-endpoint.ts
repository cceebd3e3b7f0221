/**
 * The seam between the mirror fetcher and the source cluster (Kafka's `LeaderEndpoint`): every
 * call is addressed to a source broker by id, the way AbstractFetcherThread talks to one leader
 * at a time. The real implementation is `KafkaSourceEndpoint` (./kafka-source-endpoint.ts) over
 * the project's Kafka client; tests script a double.
 *
 * The shapes are the fetcher's own, offsets as numbers: converted once per partition from the
 * generated types, never per record. A fetched partition's `records` is a slice of the response
 * frame.
 */

interface SourcePartitionLeader {
  readonly errorCode: number;
  readonly partition: number;
  readonly leaderId: number;
  readonly leaderEpoch: number;
}

interface SourceTopicMetadata {
  readonly errorCode: number;
  readonly name: string | null;
  readonly topicId: string;
  readonly partitions: readonly SourcePartitionLeader[];
}

export interface SourceMetadata {
  readonly topics: readonly SourceTopicMetadata[];
}

export interface FetchPartitionRequest {
  readonly partition: number;
  readonly currentLeaderEpoch: number;
  readonly fetchOffset: number;
  /**
   * Fetch v12+ LastFetchedEpoch: the epoch of the last batch in the local log, -1 when it has
   * none. The source checks it against its own epochs and answers a DivergingEpoch when the
   * local log holds history the source does not (Kafka's Partition.fetchRecords).
   */
  readonly lastFetchedEpoch: number;
  readonly partitionMaxBytes: number;
}

interface FetchTopicRequest {
  readonly topicId: string;
  readonly partitions: readonly FetchPartitionRequest[];
}

export interface FetchRequest {
  readonly maxWaitMs: number;
  readonly minBytes: number;
  readonly maxBytes: number;
  readonly sessionId: number;
  readonly sessionEpoch: number;
  readonly topics: readonly FetchTopicRequest[];
  readonly forgotten: readonly { readonly topicId: string; readonly partitions: readonly number[] }[];
}

export interface FetchPartitionResponse {
  readonly partition: number;
  readonly errorCode: number;
  readonly highWatermark: number;
  readonly lastStableOffset: number;
  readonly logStartOffset: number;
  /** From the CurrentLeader tagged field (KIP-951); -1 when absent. */
  readonly currentLeaderId: number;
  readonly currentLeaderEpoch: number;
  /**
   * The DivergingEpoch field: the largest source epoch at or below the LastFetchedEpoch asked
   * with, and where it ends on the source; null when the source found no divergence.
   */
  readonly divergingEpoch: { readonly epoch: number; readonly endOffset: number } | null;
  /** Whole and partial batches exactly as the source sent them (a slice of the frame). */
  readonly records: Buffer | null;
}

interface FetchTopicResponse {
  readonly topicId: string;
  readonly partitions: readonly FetchPartitionResponse[];
}

export interface FetchResponse {
  readonly errorCode: number;
  /** How long the broker delayed the answer for a quota (ms); 0 when it did not. */
  readonly throttleTimeMs?: number;
  readonly sessionId: number;
  readonly topics: readonly FetchTopicResponse[];
  /**
   * Called once nothing uses the answer's `records` any more (every append of them finished): the
   * endpoint may then read a later answer into the same memory. Absent when it would not reuse it.
   */
  readonly release?: () => void;
}

export interface ListOffsetsPartitionRequest {
  readonly topic: string;
  readonly partition: number;
  readonly currentLeaderEpoch: number;
  /** -2 earliest, -1 latest, or a timestamp. */
  readonly timestamp: number;
}

export interface ListOffsetsPartitionResult {
  readonly topic: string;
  readonly partition: number;
  readonly errorCode: number;
  readonly offset: number;
  readonly leaderEpoch: number;
}

export interface EpochRequest {
  readonly topic: string;
  readonly partition: number;
  readonly currentLeaderEpoch: number;
  readonly leaderEpoch: number;
}

export interface EpochEndOffset {
  readonly topic: string;
  readonly partition: number;
  readonly errorCode: number;
  readonly leaderEpoch: number;
  readonly endOffset: number;
}

export interface SourceEndpoint {
  /** Leaders of the named topics' partitions. */
  metadata(topics: readonly string[]): Promise<SourceMetadata>;
  /**
   * Consumer-form Fetch (replica id -1, READ_UNCOMMITTED, topic ids) to one source broker, on the
   * connection of fetch loop `fetcherId` (each loop has its own, as each Kafka fetcher thread does).
   */
  fetch(brokerId: number, req: FetchRequest, fetcherId?: number): Promise<FetchResponse>;
  listOffsets(brokerId: number, parts: readonly ListOffsetsPartitionRequest[]): Promise<ListOffsetsPartitionResult[]>;
  /** OffsetsForLeaderEpoch in the consumer form (replica id -1). */
  offsetsForLeaderEpoch(brokerId: number, parts: readonly EpochRequest[]): Promise<EpochEndOffset[]>;
}
