/**
 * The versions Kafka 4.4 added that the node serves, spoken over raw sockets to a real node:
 * ApiVersions v5 (KIP-1242 cluster and node checks), ListOffsets v11 (earliest pending upload,
 * KIP-1023, and the version each special timestamp needs), DescribeLogDirs v5 (IsCordoned) and
 * DeleteGroups v3 (per-group ErrorMessage).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrorCode } from '../../src/protocol/generated/errors.js';
import { encodeApiVersionsRequest, type ApiVersionsRequestInput } from '../../src/protocol/generated/messages/api-versions-request.js';
import { decodeApiVersionsResponse } from '../../src/protocol/generated/messages/api-versions-response.js';
import { encodeCreateTopicsRequest } from '../../src/protocol/generated/messages/create-topics-request.js';
import { decodeCreateTopicsResponse } from '../../src/protocol/generated/messages/create-topics-response.js';
import { encodeDeleteGroupsRequest } from '../../src/protocol/generated/messages/delete-groups-request.js';
import { decodeDeleteGroupsResponse } from '../../src/protocol/generated/messages/delete-groups-response.js';
import { encodeDescribeLogDirsRequest } from '../../src/protocol/generated/messages/describe-log-dirs-request.js';
import { decodeDescribeLogDirsResponse } from '../../src/protocol/generated/messages/describe-log-dirs-response.js';
import { encodeListOffsetsRequest } from '../../src/protocol/generated/messages/list-offsets-request.js';
import { decodeListOffsetsResponse } from '../../src/protocol/generated/messages/list-offsets-response.js';
import { encodeMetadataRequest } from '../../src/protocol/generated/messages/metadata-request.js';
import { decodeMetadataResponse } from '../../src/protocol/generated/messages/metadata-response.js';
import { encodeOffsetCommitRequest } from '../../src/protocol/generated/messages/offset-commit-request.js';
import { decodeOffsetCommitResponse } from '../../src/protocol/generated/messages/offset-commit-response.js';
import { encodeProduceRequest } from '../../src/protocol/generated/messages/produce-request.js';
import { decodeProduceResponse } from '../../src/protocol/generated/messages/produce-response.js';
import { buildRecordBatch } from '../../src/protocol/records.js';
import { waitFor } from '../helpers/wait.js';
import { startNode, type RunningNode } from '../helpers/node.js';
import { WireClient } from './wire.js';

let node: RunningNode;
let c: WireClient;
let clusterId: string;

beforeAll(async () => {
  node = await startNode({ overrides: { 'num.partitions': 1 } });
  c = await WireClient.connect(node.port);
  const md = decodeMetadataResponse(await c.call(3, 12, (w) => encodeMetadataRequest(w, { topics: [], allowAutoTopicCreation: false }, 12)), 12);
  clusterId = md.clusterId!;
  const topics = ['offsets44', 'logdirs44'].map((name) => ({ name, numPartitions: 1, replicationFactor: 1 }));
  const ct = decodeCreateTopicsResponse(await c.call(19, 7, (w) => encodeCreateTopicsRequest(w, { topics, timeoutMs: 5000 }, 7)), 7);
  expect(ct.topics.map((t) => t.errorCode)).toEqual([0, 0]);
}, 180_000);
afterAll(async () => {
  c?.close();
  await node?.destroy();
});

async function apiVersions(v: number, req: ApiVersionsRequestInput): Promise<ReturnType<typeof decodeApiVersionsResponse>> {
  return decodeApiVersionsResponse(await c.call(18, v, (w) => encodeApiVersionsRequest(w, { clientSoftwareName: 'wire-test', clientSoftwareVersion: '1.0', ...req }, v)), v);
}

describe('ApiVersions v5 (KIP-1242)', () => {
  it('advertises the Kafka 4.4 versions served', async () => {
    const res = await apiVersions(5, {});
    expect(res.errorCode).toBe(ErrorCode.NONE);
    const max = new Map(res.apiKeys.map((k) => [k.apiKey, k.maxVersion]));
    expect(max.get(18)).toBe(5);
    expect(max.get(2)).toBe(11);
    expect(max.get(35)).toBe(5);
    expect(max.get(42)).toBe(3);
  });

  it("answers a client that names this node's cluster and node id", async () => {
    const res = await apiVersions(5, { clusterId, nodeId: 1 });
    expect(res.errorCode).toBe(ErrorCode.NONE);
    expect(res.apiKeys.length).toBeGreaterThan(30);
  });

  it('tells a client that expected another cluster or node to bootstrap again', async () => {
    for (const req of [{ clusterId: 'another-cluster-id', nodeId: 1 }, { clusterId, nodeId: 2 }]) {
      const res = await apiVersions(5, req);
      expect(res.errorCode, JSON.stringify(req)).toBe(ErrorCode.REBOOTSTRAP_REQUIRED);
      expect(res.apiKeys).toEqual([]);
    }
    // The same ids at v4 are not on the wire, so they are not checked.
    expect((await apiVersions(4, { clusterId: 'another-cluster-id', nodeId: 2 })).errorCode).toBe(ErrorCode.NONE);
  });

  it('refuses a cluster id without a node id and the other way round, and keeps the connection', async () => {
    expect((await apiVersions(5, { clusterId })).errorCode).toBe(ErrorCode.INVALID_REQUEST);
    expect((await apiVersions(5, { nodeId: 1 })).errorCode).toBe(ErrorCode.INVALID_REQUEST);
    expect((await apiVersions(5, {})).errorCode).toBe(ErrorCode.NONE);
  });
});

describe('ListOffsets v11 (KIP-1023)', () => {
  it('answers earliest pending upload (-6) with no offset, as Kafka without tiered storage does, next to earliest and latest', async () => {
    const batch = buildRecordBatch({ records: [0, 1, 2].map((i) => ({ value: Buffer.from(`v${i}`) })) });
    const pr = decodeProduceResponse(
      await c.call(0, 11, (w) => encodeProduceRequest(w, { transactionalId: null, acks: -1, timeoutMs: 5000, topicData: [{ name: 'offsets44', partitionData: [{ index: 0, records: batch }] }] }, 11)),
      11,
    );
    expect(pr.responses[0]!.partitionResponses[0]!.errorCode).toBe(0);
    const ask = async (v: number, timestamp: bigint) => {
      const r = await c.call(2, v, (w) =>
        encodeListOffsetsRequest(w, { replicaId: -1, isolationLevel: 0, timeoutMs: 5000, topics: [{ name: 'offsets44', partitions: [{ partitionIndex: 0, currentLeaderEpoch: -1, timestamp }] }] }, v),
      );
      const p = decodeListOffsetsResponse(r, v).topics[0]!.partitions[0]!;
      return { errorCode: p.errorCode, offset: Number(p.offset), timestamp: Number(p.timestamp), leaderEpoch: p.leaderEpoch };
    };
    expect(await ask(11, -6n)).toEqual({ errorCode: 0, offset: -1, timestamp: -1, leaderEpoch: -1 });
    expect(await ask(11, -2n)).toMatchObject({ errorCode: 0, offset: 0 });
    expect(await ask(11, -1n)).toMatchObject({ errorCode: 0, offset: 3 });
    expect(await ask(10, -5n)).toEqual({ errorCode: 0, offset: -1, timestamp: -1, leaderEpoch: -1 });
  });

  it('answers UNSUPPORTED_VERSION for a special timestamp older than its version, or an unknown negative one', async () => {
    for (const [v, ts] of [[10, -6n], [8, -5n], [7, -4n], [6, -3n], [11, -7n]] as const) {
      const r = await c.call(2, v, (w) =>
        encodeListOffsetsRequest(w, { replicaId: -1, isolationLevel: 0, timeoutMs: 5000, topics: [{ name: 'offsets44', partitions: [{ partitionIndex: 0, currentLeaderEpoch: -1, timestamp: ts }] }] }, v),
      );
      expect(decodeListOffsetsResponse(r, v).topics[0]!.partitions[0]!.errorCode, `v${v} ${ts}`).toBe(ErrorCode.UNSUPPORTED_VERSION);
    }
  });
});

describe('DescribeLogDirs v5', () => {
  it('reports the directory, its partitions and sizes, and that it is not cordoned', async () => {
    const describe = async (): Promise<ReturnType<typeof decodeDescribeLogDirsResponse>> =>
      decodeDescribeLogDirsResponse(await c.call(35, 5, (w) => encodeDescribeLogDirsRequest(w, { topics: [{ topic: 'logdirs44', partitions: [0] }] }, 5)), 5);
    // CreateTopics answers once the topic is in the metadata; the node opens its log right after.
    await waitFor('the new partition in its log dir', async () => ((await describe()).results[0]?.topics.length ?? 0) > 0);
    const res = await describe();
    expect(res.errorCode).toBe(0);
    expect(res.results).toHaveLength(1);
    const dir = res.results[0]!;
    expect(dir).toMatchObject({ errorCode: 0, logDir: node.dataDir, isCordoned: false });
    expect(dir.totalBytes).toBeGreaterThan(0n);
    expect(dir.topics.map((t) => ({ name: t.name, partitions: t.partitions.map((p) => p.partitionIndex) }))).toEqual([{ name: 'logdirs44', partitions: [0] }]);
  });
});

describe('DeleteGroups v3', () => {
  it('deletes an empty group and answers an unknown one with GROUP_ID_NOT_FOUND, with a null ErrorMessage', async () => {
    // A simple (generation -1) commit creates an empty group holding an offset.
    const oc = decodeOffsetCommitResponse(
      await c.call(8, 8, (w) =>
        encodeOffsetCommitRequest(w, { groupId: 'delete44', generationIdOrMemberEpoch: -1, memberId: '', topics: [{ name: 'offsets44', partitions: [{ partitionIndex: 0, committedOffset: 1n, committedMetadata: null }] }] }, 8),
      ),
      8,
    );
    expect(oc.topics[0]!.partitions[0]!.errorCode).toBe(0);
    const r = await c.call(42, 3, (w) => encodeDeleteGroupsRequest(w, { groupsNames: ['delete44', 'no-such-group-44'] }, 3));
    const res = decodeDeleteGroupsResponse(r, 3);
    expect(res.results.map((g) => ({ groupId: g.groupId, errorCode: g.errorCode, errorMessage: g.errorMessage }))).toEqual([
      { groupId: 'delete44', errorCode: ErrorCode.NONE, errorMessage: null },
      { groupId: 'no-such-group-44', errorCode: ErrorCode.GROUP_ID_NOT_FOUND, errorMessage: null },
    ]);
  });
});
