/**
 * The seam between the mirror fetcher and the source cluster (Kafka's "leader endpoint"). The
 * real implementation is `SourceClient`; every call is addressed to a source broker by id, the
 * way AbstractFetcherThread talks to one leader at a time.
 */
import type {
  DescribeClusterResult,
  EpochEndOffset,
  EpochRequest,
  FetchRequest,
  FetchResponse,
  ListOffsetsPartitionRequest,
  ListOffsetsPartitionResult,
  MetadataResult,
} from './source-protocol.js';

export interface SourceEndpoint {
  /** Metadata for the named topics (null = all topics); also refreshes the known broker list. */
  metadata(topics: readonly string[] | null): Promise<MetadataResult>;
  /** Consumer-form Fetch (replica id -1, READ_UNCOMMITTED, topic ids) to one source broker. */
  fetch(brokerId: number, req: FetchRequest): Promise<FetchResponse>;
  listOffsets(brokerId: number, parts: readonly ListOffsetsPartitionRequest[]): Promise<ListOffsetsPartitionResult[]>;
  /** OffsetsForLeaderEpoch in the consumer form (replica id -1). */
  offsetsForLeaderEpoch(brokerId: number, parts: readonly EpochRequest[]): Promise<EpochEndOffset[]>;
  describeCluster(): Promise<DescribeClusterResult>;
  close(): void;
}
