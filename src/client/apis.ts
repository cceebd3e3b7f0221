/**
 * The calls the client makes, each a typed pair of the generated request encoder and response
 * decoder with the versions this client speaks. `KafkaClient.send` picks the highest version both
 * sides support (from the broker's ApiVersions), as Kafka's `NetworkClient` does with
 * `ApiVersions.latestUsableVersion`.
 *
 * Ranges are what the callers are written for: a request input carries only fields every version
 * in its range accepts, and a caller reads only response fields every version in its range has.
 */
import { ApiKey } from '../protocol/generated/api-table.js';
import { encodeMetadataRequest, type MetadataRequestInput } from '../protocol/generated/messages/metadata-request.js';
import { decodeMetadataResponse, type MetadataResponse } from '../protocol/generated/messages/metadata-response.js';
import { encodeFetchRequest, type FetchRequestInput } from '../protocol/generated/messages/fetch-request.js';
import { decodeFetchResponse, type FetchResponse } from '../protocol/generated/messages/fetch-response.js';
import { encodeListOffsetsRequest, type ListOffsetsRequestInput } from '../protocol/generated/messages/list-offsets-request.js';
import { decodeListOffsetsResponse, type ListOffsetsResponse } from '../protocol/generated/messages/list-offsets-response.js';
import { encodeOffsetForLeaderEpochRequest, type OffsetForLeaderEpochRequestInput } from '../protocol/generated/messages/offset-for-leader-epoch-request.js';
import { decodeOffsetForLeaderEpochResponse, type OffsetForLeaderEpochResponse } from '../protocol/generated/messages/offset-for-leader-epoch-response.js';
import { encodeDescribeClusterRequest, type DescribeClusterRequestInput } from '../protocol/generated/messages/describe-cluster-request.js';
import { decodeDescribeClusterResponse, type DescribeClusterResponse } from '../protocol/generated/messages/describe-cluster-response.js';
import { encodeListClusterMirrorsRequest, type ListClusterMirrorsRequestInput } from '../protocol/generated/messages/list-cluster-mirrors-request.js';
import { decodeListClusterMirrorsResponse, type ListClusterMirrorsResponse } from '../protocol/generated/messages/list-cluster-mirrors-response.js';
import { encodeDescribeClusterMirrorsRequest, type DescribeClusterMirrorsRequestInput } from '../protocol/generated/messages/describe-cluster-mirrors-request.js';
import { decodeDescribeClusterMirrorsResponse, type DescribeClusterMirrorsResponse } from '../protocol/generated/messages/describe-cluster-mirrors-response.js';
import { encodeCreateClusterMirrorRequest, type CreateClusterMirrorRequestInput } from '../protocol/generated/messages/create-cluster-mirror-request.js';
import { decodeCreateClusterMirrorResponse, type CreateClusterMirrorResponse } from '../protocol/generated/messages/create-cluster-mirror-response.js';
import { encodeDeleteClusterMirrorRequest, type DeleteClusterMirrorRequestInput } from '../protocol/generated/messages/delete-cluster-mirror-request.js';
import { decodeDeleteClusterMirrorResponse, type DeleteClusterMirrorResponse } from '../protocol/generated/messages/delete-cluster-mirror-response.js';
import { encodeStartMirrorTopicsRequest, type StartMirrorTopicsRequestInput } from '../protocol/generated/messages/start-mirror-topics-request.js';
import { decodeStartMirrorTopicsResponse, type StartMirrorTopicsResponse } from '../protocol/generated/messages/start-mirror-topics-response.js';
import { encodeStopMirrorTopicsRequest, type StopMirrorTopicsRequestInput } from '../protocol/generated/messages/stop-mirror-topics-request.js';
import { decodeStopMirrorTopicsResponse, type StopMirrorTopicsResponse } from '../protocol/generated/messages/stop-mirror-topics-response.js';
import { encodePauseMirrorTopicsRequest, type PauseMirrorTopicsRequestInput } from '../protocol/generated/messages/pause-mirror-topics-request.js';
import { decodePauseMirrorTopicsResponse, type PauseMirrorTopicsResponse } from '../protocol/generated/messages/pause-mirror-topics-response.js';
import { encodeResumeMirrorTopicsRequest, type ResumeMirrorTopicsRequestInput } from '../protocol/generated/messages/resume-mirror-topics-request.js';
import { decodeResumeMirrorTopicsResponse, type ResumeMirrorTopicsResponse } from '../protocol/generated/messages/resume-mirror-topics-response.js';
import { encodeDescribeConfigsRequest, type DescribeConfigsRequestInput } from '../protocol/generated/messages/describe-configs-request.js';
import { decodeDescribeConfigsResponse, type DescribeConfigsResponse } from '../protocol/generated/messages/describe-configs-response.js';
import { encodeIncrementalAlterConfigsRequest, type IncrementalAlterConfigsRequestInput } from '../protocol/generated/messages/incremental-alter-configs-request.js';
import { decodeIncrementalAlterConfigsResponse, type IncrementalAlterConfigsResponse } from '../protocol/generated/messages/incremental-alter-configs-response.js';
import { encodeDescribeAclsRequest, type DescribeAclsRequestInput } from '../protocol/generated/messages/describe-acls-request.js';
import { decodeDescribeAclsResponse, type DescribeAclsResponse } from '../protocol/generated/messages/describe-acls-response.js';
import { encodeCreateAclsRequest, type CreateAclsRequestInput } from '../protocol/generated/messages/create-acls-request.js';
import { decodeCreateAclsResponse, type CreateAclsResponse } from '../protocol/generated/messages/create-acls-response.js';
import { encodeDeleteAclsRequest, type DeleteAclsRequestInput } from '../protocol/generated/messages/delete-acls-request.js';
import { decodeDeleteAclsResponse, type DeleteAclsResponse } from '../protocol/generated/messages/delete-acls-response.js';
import { encodeFindCoordinatorRequest, type FindCoordinatorRequestInput } from '../protocol/generated/messages/find-coordinator-request.js';
import { decodeFindCoordinatorResponse, type FindCoordinatorResponse } from '../protocol/generated/messages/find-coordinator-response.js';
import { encodeListGroupsRequest, type ListGroupsRequestInput } from '../protocol/generated/messages/list-groups-request.js';
import { decodeListGroupsResponse, type ListGroupsResponse } from '../protocol/generated/messages/list-groups-response.js';
import { encodeOffsetFetchRequest, type OffsetFetchRequestInput } from '../protocol/generated/messages/offset-fetch-request.js';
import { decodeOffsetFetchResponse, type OffsetFetchResponse } from '../protocol/generated/messages/offset-fetch-response.js';
import { encodeOffsetCommitRequest, type OffsetCommitRequestInput } from '../protocol/generated/messages/offset-commit-request.js';
import { decodeOffsetCommitResponse, type OffsetCommitResponse } from '../protocol/generated/messages/offset-commit-response.js';
import { encodeDescribeGroupsRequest, type DescribeGroupsRequestInput } from '../protocol/generated/messages/describe-groups-request.js';
import { decodeDescribeGroupsResponse, type DescribeGroupsResponse } from '../protocol/generated/messages/describe-groups-response.js';
import { encodeConsumerGroupDescribeRequest, type ConsumerGroupDescribeRequestInput } from '../protocol/generated/messages/consumer-group-describe-request.js';
import { decodeConsumerGroupDescribeResponse, type ConsumerGroupDescribeResponse } from '../protocol/generated/messages/consumer-group-describe-response.js';
import type { Reader } from '../protocol/reader.js';
import { encodeCreateTopicsRequest, type CreateTopicsRequestInput } from '../protocol/generated/messages/create-topics-request.js';
import { decodeCreateTopicsResponse, type CreateTopicsResponse } from '../protocol/generated/messages/create-topics-response.js';
import { encodeDeleteTopicsRequest, type DeleteTopicsRequestInput } from '../protocol/generated/messages/delete-topics-request.js';
import { decodeDeleteTopicsResponse, type DeleteTopicsResponse } from '../protocol/generated/messages/delete-topics-response.js';
import { encodeCreatePartitionsRequest, type CreatePartitionsRequestInput } from '../protocol/generated/messages/create-partitions-request.js';
import { decodeCreatePartitionsResponse, type CreatePartitionsResponse } from '../protocol/generated/messages/create-partitions-response.js';
import { encodeShareGroupDescribeRequest, type ShareGroupDescribeRequestInput } from '../protocol/generated/messages/share-group-describe-request.js';
import { decodeShareGroupDescribeResponse, type ShareGroupDescribeResponse } from '../protocol/generated/messages/share-group-describe-response.js';
import { encodeDescribeShareGroupOffsetsRequest, type DescribeShareGroupOffsetsRequestInput } from '../protocol/generated/messages/describe-share-group-offsets-request.js';
import { decodeDescribeShareGroupOffsetsResponse, type DescribeShareGroupOffsetsResponse } from '../protocol/generated/messages/describe-share-group-offsets-response.js';
import { encodeAlterShareGroupOffsetsRequest, type AlterShareGroupOffsetsRequestInput } from '../protocol/generated/messages/alter-share-group-offsets-request.js';
import { decodeAlterShareGroupOffsetsResponse, type AlterShareGroupOffsetsResponse } from '../protocol/generated/messages/alter-share-group-offsets-response.js';
import type { Writer } from '../protocol/writer.js';

export interface ApiSpec<Req, Res> {
  readonly apiKey: number;
  /** [min, max] versions this client speaks for the call. */
  readonly versions: readonly [number, number];
  encode(w: Writer, req: Req, version: number): void;
  decode(r: Reader, version: number): Res;
}

function spec<Req, Res>(apiKey: number, min: number, max: number, encode: (w: Writer, req: Req, version: number) => void, decode: (r: Reader, version: number) => Res): ApiSpec<Req, Res> {
  return { apiKey, versions: [min, max], encode, decode };
}

export const Apis = {
  /** Metadata v12: topic ids in the response, topics by name in the request (KIP-516). */
  Metadata: spec<MetadataRequestInput, MetadataResponse>(ApiKey.Metadata, 12, 12, encodeMetadataRequest, decodeMetadataResponse),
  /** Fetch v13-16: topic ids (KIP-516); the consumer form (replica id -1). */
  Fetch: spec<FetchRequestInput, FetchResponse>(ApiKey.Fetch, 13, 16, encodeFetchRequest, decodeFetchResponse),
  ListOffsets: spec<ListOffsetsRequestInput, ListOffsetsResponse>(ApiKey.ListOffsets, 6, 7, encodeListOffsetsRequest, decodeListOffsetsResponse),
  /** OffsetForLeaderEpoch v4: the consumer form (replica id -1). */
  OffsetForLeaderEpoch: spec<OffsetForLeaderEpochRequestInput, OffsetForLeaderEpochResponse>(ApiKey.OffsetForLeaderEpoch, 4, 4, encodeOffsetForLeaderEpochRequest, decodeOffsetForLeaderEpochResponse),
  DescribeCluster: spec<DescribeClusterRequestInput, DescribeClusterResponse>(ApiKey.DescribeCluster, 0, 0, encodeDescribeClusterRequest, decodeDescribeClusterResponse),
  ListClusterMirrors: spec<ListClusterMirrorsRequestInput, ListClusterMirrorsResponse>(ApiKey.ListClusterMirrors, 0, 0, encodeListClusterMirrorsRequest, decodeListClusterMirrorsResponse),
  DescribeClusterMirrors: spec<DescribeClusterMirrorsRequestInput, DescribeClusterMirrorsResponse>(ApiKey.DescribeClusterMirrors, 0, 0, encodeDescribeClusterMirrorsRequest, decodeDescribeClusterMirrorsResponse),
  CreateClusterMirror: spec<CreateClusterMirrorRequestInput, CreateClusterMirrorResponse>(ApiKey.CreateClusterMirror, 0, 0, encodeCreateClusterMirrorRequest, decodeCreateClusterMirrorResponse),
  DeleteClusterMirror: spec<DeleteClusterMirrorRequestInput, DeleteClusterMirrorResponse>(ApiKey.DeleteClusterMirror, 0, 0, encodeDeleteClusterMirrorRequest, decodeDeleteClusterMirrorResponse),
  StartMirrorTopics: spec<StartMirrorTopicsRequestInput, StartMirrorTopicsResponse>(ApiKey.StartMirrorTopics, 0, 0, encodeStartMirrorTopicsRequest, decodeStartMirrorTopicsResponse),
  StopMirrorTopics: spec<StopMirrorTopicsRequestInput, StopMirrorTopicsResponse>(ApiKey.StopMirrorTopics, 0, 0, encodeStopMirrorTopicsRequest, decodeStopMirrorTopicsResponse),
  PauseMirrorTopics: spec<PauseMirrorTopicsRequestInput, PauseMirrorTopicsResponse>(ApiKey.PauseMirrorTopics, 0, 0, encodePauseMirrorTopicsRequest, decodePauseMirrorTopicsResponse),
  ResumeMirrorTopics: spec<ResumeMirrorTopicsRequestInput, ResumeMirrorTopicsResponse>(ApiKey.ResumeMirrorTopics, 0, 0, encodeResumeMirrorTopicsRequest, decodeResumeMirrorTopicsResponse),
  DescribeConfigs: spec<DescribeConfigsRequestInput, DescribeConfigsResponse>(ApiKey.DescribeConfigs, 4, 4, encodeDescribeConfigsRequest, decodeDescribeConfigsResponse),
  IncrementalAlterConfigs: spec<IncrementalAlterConfigsRequestInput, IncrementalAlterConfigsResponse>(ApiKey.IncrementalAlterConfigs, 1, 1, encodeIncrementalAlterConfigsRequest, decodeIncrementalAlterConfigsResponse),
  DescribeAcls: spec<DescribeAclsRequestInput, DescribeAclsResponse>(ApiKey.DescribeAcls, 1, 3, encodeDescribeAclsRequest, decodeDescribeAclsResponse),
  CreateAcls: spec<CreateAclsRequestInput, CreateAclsResponse>(ApiKey.CreateAcls, 1, 3, encodeCreateAclsRequest, decodeCreateAclsResponse),
  DeleteAcls: spec<DeleteAclsRequestInput, DeleteAclsResponse>(ApiKey.DeleteAcls, 1, 3, encodeDeleteAclsRequest, decodeDeleteAclsResponse),
  /** FindCoordinator v4: the batched form (KIP-699). */
  FindCoordinator: spec<FindCoordinatorRequestInput, FindCoordinatorResponse>(ApiKey.FindCoordinator, 4, 4, encodeFindCoordinatorRequest, decodeFindCoordinatorResponse),
  /** ListGroups v3-5: v4 filters by state (KIP-518), v5 by type (KIP-848). */
  ListGroups: spec<ListGroupsRequestInput, ListGroupsResponse>(ApiKey.ListGroups, 3, 5, encodeListGroupsRequest, decodeListGroupsResponse),
  /** OffsetFetch v8: the batched form, several groups per request (KIP-709). */
  OffsetFetch: spec<OffsetFetchRequestInput, OffsetFetchResponse>(ApiKey.OffsetFetch, 8, 8, encodeOffsetFetchRequest, decodeOffsetFetchResponse),
  OffsetCommit: spec<OffsetCommitRequestInput, OffsetCommitResponse>(ApiKey.OffsetCommit, 8, 9, encodeOffsetCommitRequest, decodeOffsetCommitResponse),
  DescribeGroups: spec<DescribeGroupsRequestInput, DescribeGroupsResponse>(ApiKey.DescribeGroups, 5, 5, encodeDescribeGroupsRequest, decodeDescribeGroupsResponse),
  ConsumerGroupDescribe: spec<ConsumerGroupDescribeRequestInput, ConsumerGroupDescribeResponse>(ApiKey.ConsumerGroupDescribe, 0, 0, encodeConsumerGroupDescribeRequest, decodeConsumerGroupDescribeResponse),
  /** ShareGroupDescribe v1 (KIP-932, Kafka 4.1+). */
  ShareGroupDescribe: spec<ShareGroupDescribeRequestInput, ShareGroupDescribeResponse>(ApiKey.ShareGroupDescribe, 1, 1, encodeShareGroupDescribeRequest, decodeShareGroupDescribeResponse),
  /** DescribeShareGroupOffsets v0-1 (KIP-932): share-partition start offsets; v1 adds the lag. */
  DescribeShareGroupOffsets: spec<DescribeShareGroupOffsetsRequestInput, DescribeShareGroupOffsetsResponse>(ApiKey.DescribeShareGroupOffsets, 0, 1, encodeDescribeShareGroupOffsetsRequest, decodeDescribeShareGroupOffsetsResponse),
  /** AlterShareGroupOffsets v0 (KIP-932): sets start offsets of an empty share group. */
  AlterShareGroupOffsets: spec<AlterShareGroupOffsetsRequestInput, AlterShareGroupOffsetsResponse>(ApiKey.AlterShareGroupOffsets, 0, 0, encodeAlterShareGroupOffsetsRequest, decodeAlterShareGroupOffsetsResponse),
  /** CreateTopics v5-7: flexible, the created topic's configs in the answer (KIP-525), v7 its topic id. */
  CreateTopics: spec<CreateTopicsRequestInput, CreateTopicsResponse>(ApiKey.CreateTopics, 5, 7, encodeCreateTopicsRequest, decodeCreateTopicsResponse),
  /** DeleteTopics v4-5: topics by name (v6 adds deletion by topic id, not needed here). */
  DeleteTopics: spec<DeleteTopicsRequestInput, DeleteTopicsResponse>(ApiKey.DeleteTopics, 4, 5, encodeDeleteTopicsRequest, decodeDeleteTopicsResponse),
  CreatePartitions: spec<CreatePartitionsRequestInput, CreatePartitionsResponse>(ApiKey.CreatePartitions, 2, 3, encodeCreatePartitionsRequest, decodeCreatePartitionsResponse),
} as const;
