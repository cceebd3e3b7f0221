/**
 * The few Kafka requests the mirror speaks to a source cluster, encoded and decoded by hand at
 * fixed versions so the fetcher depends on nothing but the wire primitives:
 *   ApiVersions v3, Metadata v12, Fetch v13-16 (topic ids), ListOffsets v7,
 *   OffsetForLeaderEpoch v4 (replica id -1: the consumer form), DescribeCluster v0.
 * Every one is a flexible version, so requests use header v2 (ApiVersions responses use header v0,
 * every other response header v1). Sources must be Kafka 3.1+ (Fetch v13) or Fjord.
 *
 * Fetch responses keep each partition's `records` as a subarray of the response frame: no copy,
 * no record decoding (the mirror path walks batch headers only).
 */
import { Reader } from '../protocol/reader.js';
import type { Writer } from '../protocol/writer.js';

export const API = {
  FETCH: 1,
  LIST_OFFSETS: 2,
  METADATA: 3,
  OFFSET_FOR_LEADER_EPOCH: 23,
  API_VERSIONS: 18,
  DESCRIBE_CLUSTER: 60,
  LIST_CLUSTER_MIRRORS: 98,
  DESCRIBE_CLUSTER_MIRRORS: 99,
} as const;

/** Versions this client can speak, per API: [min, max]. */
export const CLIENT_VERSIONS: ReadonlyMap<number, readonly [number, number]> = new Map([
  [API.API_VERSIONS, [3, 3]],
  [API.METADATA, [12, 12]],
  [API.FETCH, [13, 16]],
  [API.LIST_OFFSETS, [7, 7]],
  [API.OFFSET_FOR_LEADER_EPOCH, [4, 4]],
  [API.DESCRIBE_CLUSTER, [0, 0]],
]);

const n64 = (r: Reader): number => Number(r.int64());
const w64 = (w: Writer, v: number): Writer => w.int64(BigInt(v));

function skipTags(r: Reader): void {
  r.taggedFields();
}

function compactArray<T>(r: Reader, read: (r: Reader) => T): T[] {
  const n = r.compactArrayLength();
  const out: T[] = [];
  for (let i = 0; i < n; i++) out.push(read(r));
  return out;
}

function writeArray<T>(w: Writer, items: readonly T[], write: (w: Writer, item: T) => void): void {
  w.uvarint(items.length + 1);
  for (const it of items) write(w, it);
}

// ---------------------------------------------------------------------------------------------
// ApiVersions v3

export interface ApiVersionRange {
  readonly apiKey: number;
  readonly minVersion: number;
  readonly maxVersion: number;
}

export function encodeApiVersionsRequest(w: Writer): void {
  w.compactString('fjord-mirror').compactString('0.1.0').uvarint(0);
}

export function decodeApiVersionsResponse(r: Reader): { errorCode: number; apiKeys: ApiVersionRange[] } {
  const errorCode = r.int16();
  if (errorCode !== 0) return { errorCode, apiKeys: [] };
  const apiKeys = compactArray(r, (r) => {
    const v = { apiKey: r.int16(), minVersion: r.int16(), maxVersion: r.int16() };
    skipTags(r);
    return v;
  });
  r.int32();
  skipTags(r);
  return { errorCode, apiKeys };
}

// ---------------------------------------------------------------------------------------------
// Metadata v12

export interface MetadataBroker {
  readonly nodeId: number;
  readonly host: string;
  readonly port: number;
}

export interface MetadataPartition {
  readonly errorCode: number;
  readonly partition: number;
  readonly leaderId: number;
  readonly leaderEpoch: number;
}

export interface MetadataTopic {
  readonly errorCode: number;
  readonly name: string | null;
  readonly topicId: string;
  readonly isInternal: boolean;
  readonly partitions: MetadataPartition[];
}

export interface MetadataResult {
  readonly brokers: MetadataBroker[];
  readonly clusterId: string | null;
  readonly controllerId: number;
  readonly topics: MetadataTopic[];
}

/** `topics` null = all topics. */
export function encodeMetadataRequest(w: Writer, topics: readonly string[] | null): void {
  if (topics === null) w.uvarint(0);
  else
    writeArray(w, topics, (w, t) => {
      w.uuid('00000000-0000-0000-0000-000000000000').compactNullableString(t).uvarint(0);
    });
  w.bool(false).bool(false).uvarint(0);
}

export function decodeMetadataResponse(r: Reader): MetadataResult {
  r.int32();
  const brokers = compactArray(r, (r) => {
    const b = { nodeId: r.int32(), host: r.compactString(), port: r.int32() };
    r.compactNullableString();
    skipTags(r);
    return b;
  });
  const clusterId = r.compactNullableString();
  const controllerId = r.int32();
  const topics = compactArray(r, (r) => {
    const errorCode = r.int16();
    const name = r.compactNullableString();
    const topicId = r.uuid();
    const isInternal = r.bool();
    const partitions = compactArray(r, (r) => {
      const p = { errorCode: r.int16(), partition: r.int32(), leaderId: r.int32(), leaderEpoch: r.int32() };
      compactArray(r, (r) => r.int32());
      compactArray(r, (r) => r.int32());
      compactArray(r, (r) => r.int32());
      skipTags(r);
      return p;
    });
    r.int32();
    skipTags(r);
    return { errorCode, name, topicId, isInternal, partitions };
  });
  skipTags(r);
  return { brokers, clusterId, controllerId, topics };
}

// ---------------------------------------------------------------------------------------------
// Fetch v13-16 (consumer form: replica id -1 / no ReplicaState, READ_UNCOMMITTED)

export interface FetchPartitionRequest {
  readonly partition: number;
  readonly currentLeaderEpoch: number;
  readonly fetchOffset: number;
  readonly partitionMaxBytes: number;
}

export interface FetchTopicRequest {
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
  readonly forgotten: readonly { topicId: string; partitions: readonly number[] }[];
}

export function encodeFetchRequest(w: Writer, req: FetchRequest, version: number): void {
  if (version < 15) w.int32(-1);
  w.int32(req.maxWaitMs).int32(req.minBytes).int32(req.maxBytes).int8(0);
  w.int32(req.sessionId).int32(req.sessionEpoch);
  writeArray(w, req.topics, (w, t) => {
    w.uuid(t.topicId);
    writeArray(w, t.partitions, (w, p) => {
      w.int32(p.partition).int32(p.currentLeaderEpoch);
      w64(w, p.fetchOffset);
      w.int32(-1); // LastFetchedEpoch: the mirror truncates with OffsetsForLeaderEpoch instead
      w64(w, -1);
      w.int32(p.partitionMaxBytes).uvarint(0);
    });
    w.uvarint(0);
  });
  writeArray(w, req.forgotten, (w, f) => {
    w.uuid(f.topicId);
    writeArray(w, f.partitions, (w, p) => void w.int32(p));
    w.uvarint(0);
  });
  w.compactString('').uvarint(0);
}

export interface FetchPartitionResponse {
  readonly partition: number;
  readonly errorCode: number;
  readonly highWatermark: number;
  readonly lastStableOffset: number;
  readonly logStartOffset: number;
  /** From the CurrentLeader tagged field; -1 when absent. */
  readonly currentLeaderId: number;
  readonly currentLeaderEpoch: number;
  /** Whole and partial batches exactly as the source sent them (a slice of the frame). */
  readonly records: Buffer | null;
}

export interface FetchTopicResponse {
  readonly topicId: string;
  readonly partitions: FetchPartitionResponse[];
}

export interface FetchResponse {
  readonly errorCode: number;
  readonly sessionId: number;
  readonly topics: FetchTopicResponse[];
  readonly nodeEndpoints: MetadataBroker[];
}

export function decodeFetchResponse(r: Reader, version: number): FetchResponse {
  r.int32();
  const errorCode = r.int16();
  const sessionId = r.int32();
  const topics = compactArray(r, (r) => {
    const topicId = r.uuid();
    const partitions = compactArray(r, (r): FetchPartitionResponse => {
      const partition = r.int32();
      const pErr = r.int16();
      const highWatermark = n64(r);
      const lastStableOffset = n64(r);
      const logStartOffset = n64(r);
      compactArray(r, (r) => {
        r.int64();
        r.int64();
        skipTags(r);
        return 0;
      });
      r.int32();
      const records = r.compactNullableBytes();
      let currentLeaderId = -1;
      let currentLeaderEpoch = -1;
      const tags = r.taggedFields();
      const leader = tags?.get(1);
      if (leader !== undefined && leader.length >= 8) {
        currentLeaderId = leader.readInt32BE(0);
        currentLeaderEpoch = leader.readInt32BE(4);
      }
      return { partition, errorCode: pErr, highWatermark, lastStableOffset, logStartOffset, currentLeaderId, currentLeaderEpoch, records };
    });
    skipTags(r);
    return { topicId, partitions };
  });
  const nodeEndpoints: MetadataBroker[] = [];
  const tags = r.taggedFields();
  const endpoints = version >= 16 ? tags?.get(0) : undefined;
  if (endpoints !== undefined) {
    // Present only when leaders moved (NOT_LEADER_OR_FOLLOWER / FENCED_LEADER_EPOCH).
    const er = new Reader(endpoints);
    for (const b of compactArray(er, (er) => {
      const e = { nodeId: er.int32(), host: er.compactString(), port: er.int32() };
      er.compactNullableString();
      skipTags(er);
      return e;
    }))
      nodeEndpoints.push(b);
  }
  return { errorCode, sessionId, topics, nodeEndpoints };
}

// ---------------------------------------------------------------------------------------------
// ListOffsets v7

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

export function encodeListOffsetsRequest(w: Writer, parts: readonly ListOffsetsPartitionRequest[]): void {
  w.int32(-1).int8(0);
  const byTopic = groupBy(parts, (p) => p.topic);
  writeArray(w, [...byTopic], (w, [topic, ps]) => {
    w.compactString(topic);
    writeArray(w, ps, (w, p) => {
      w.int32(p.partition).int32(p.currentLeaderEpoch);
      w64(w, p.timestamp).uvarint(0);
    });
    w.uvarint(0);
  });
  w.uvarint(0);
}

export function decodeListOffsetsResponse(r: Reader): ListOffsetsPartitionResult[] {
  r.int32();
  const out: ListOffsetsPartitionResult[] = [];
  compactArray(r, (r) => {
    const topic = r.compactString();
    compactArray(r, (r) => {
      const partition = r.int32();
      const errorCode = r.int16();
      r.int64();
      const offset = n64(r);
      const leaderEpoch = r.int32();
      skipTags(r);
      out.push({ topic, partition, errorCode, offset, leaderEpoch });
      return 0;
    });
    skipTags(r);
    return 0;
  });
  skipTags(r);
  return out;
}

// ---------------------------------------------------------------------------------------------
// OffsetForLeaderEpoch v4 (replica id -1)

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

export function encodeOffsetForLeaderEpochRequest(w: Writer, parts: readonly EpochRequest[]): void {
  w.int32(-1);
  writeArray(w, [...groupBy(parts, (p) => p.topic)], (w, [topic, ps]) => {
    w.compactString(topic);
    writeArray(w, ps, (w, p) => void w.int32(p.partition).int32(p.currentLeaderEpoch).int32(p.leaderEpoch).uvarint(0));
    w.uvarint(0);
  });
  w.uvarint(0);
}

export function decodeOffsetForLeaderEpochResponse(r: Reader): EpochEndOffset[] {
  r.int32();
  const out: EpochEndOffset[] = [];
  compactArray(r, (r) => {
    const topic = r.compactString();
    compactArray(r, (r) => {
      const errorCode = r.int16();
      const partition = r.int32();
      const leaderEpoch = r.int32();
      const endOffset = n64(r);
      skipTags(r);
      out.push({ topic, partition, errorCode, leaderEpoch, endOffset });
      return 0;
    });
    skipTags(r);
    return 0;
  });
  skipTags(r);
  return out;
}

// ---------------------------------------------------------------------------------------------
// DescribeCluster v0

export interface DescribeClusterResult {
  readonly errorCode: number;
  readonly errorMessage: string | null;
  readonly clusterId: string;
  readonly controllerId: number;
  readonly brokers: MetadataBroker[];
}

export function encodeDescribeClusterRequest(w: Writer): void {
  w.bool(false).uvarint(0);
}

export function decodeDescribeClusterResponse(r: Reader): DescribeClusterResult {
  r.int32();
  const errorCode = r.int16();
  const errorMessage = r.compactNullableString();
  const clusterId = r.compactString();
  const controllerId = r.int32();
  const brokers = compactArray(r, (r) => {
    const b = { nodeId: r.int32(), host: r.compactString(), port: r.int32() };
    r.compactNullableString();
    skipTags(r);
    return b;
  });
  r.int32();
  skipTags(r);
  return { errorCode, errorMessage, clusterId, controllerId, brokers };
}

function groupBy<T>(items: readonly T[], key: (t: T) => string): Map<string, T[]> {
  const m = new Map<string, T[]>();
  for (const it of items) {
    const k = key(it);
    let list = m.get(k);
    if (list === undefined) m.set(k, (list = []));
    list.push(it);
  }
  return m;
}
