/**
 * The fetcher's hand-written codecs (fixed versions) cross-checked against the generated,
 * schema-driven codecs: what we encode decodes as intended, and what a broker encodes we read
 * right, including tagged fields (CurrentLeader, NodeEndpoints) and record slices kept by
 * reference.
 */
import { describe, expect, it } from 'vitest';
import {
  decodeDescribeClusterResponse,
  decodeFetchResponse,
  decodeListOffsetsResponse,
  decodeMetadataResponse,
  decodeOffsetForLeaderEpochResponse,
  encodeFetchRequest,
  encodeListOffsetsRequest,
  encodeMetadataRequest,
  encodeOffsetForLeaderEpochRequest,
} from '../../src/fetcher/source-protocol.js';
import { decodeDescribeClusterRequest } from '../../src/protocol/generated/messages/describe-cluster-request.js';
import { encodeDescribeClusterResponse } from '../../src/protocol/generated/messages/describe-cluster-response.js';
import { decodeFetchRequest } from '../../src/protocol/generated/messages/fetch-request.js';
import { encodeFetchResponse } from '../../src/protocol/generated/messages/fetch-response.js';
import { decodeListOffsetsRequest } from '../../src/protocol/generated/messages/list-offsets-request.js';
import { encodeListOffsetsResponse } from '../../src/protocol/generated/messages/list-offsets-response.js';
import { decodeMetadataRequest } from '../../src/protocol/generated/messages/metadata-request.js';
import { encodeMetadataResponse } from '../../src/protocol/generated/messages/metadata-response.js';
import { decodeOffsetForLeaderEpochRequest } from '../../src/protocol/generated/messages/offset-for-leader-epoch-request.js';
import { encodeOffsetForLeaderEpochResponse } from '../../src/protocol/generated/messages/offset-for-leader-epoch-response.js';
import { Reader } from '../../src/protocol/reader.js';
import { Writer } from '../../src/protocol/writer.js';

const T1 = '0f0e0d0c-0b0a-0908-0706-050403020100';

function bytes(fn: (w: Writer) => void): Buffer {
  const w = new Writer();
  fn(w);
  return w.toBuffer();
}

describe('source protocol codecs against the generated codecs', () => {
  for (const version of [13, 15, 16]) {
    it(`Fetch v${version} request is the consumer form`, () => {
      const buf = bytes((w) =>
        encodeFetchRequest(
          w,
          {
            maxWaitMs: 500,
            minBytes: 1,
            maxBytes: 1 << 20,
            sessionId: 7,
            sessionEpoch: 3,
            topics: [{ topicId: T1, partitions: [{ partition: 2, currentLeaderEpoch: 5, fetchOffset: 1234, partitionMaxBytes: 65536 }] }],
            forgotten: [{ topicId: T1, partitions: [4, 9] }],
          },
          version,
        ),
      );
      const r = new Reader(buf);
      const req = decodeFetchRequest(r, version);
      expect(r.remaining).toBe(0);
      expect(req.replicaId).toBe(-1);
      if (version >= 15) expect(req.replicaState.replicaId).toBe(-1);
      expect(req).toMatchObject({ maxWaitMs: 500, minBytes: 1, maxBytes: 1 << 20, isolationLevel: 0, sessionId: 7, sessionEpoch: 3, rackId: '' });
      expect(req.topics[0]?.topicId).toBe(T1);
      expect(req.topics[0]?.partitions[0]).toMatchObject({ partition: 2, currentLeaderEpoch: 5, fetchOffset: 1234n, lastFetchedEpoch: -1, partitionMaxBytes: 65536 });
      expect(req.forgottenTopicsData).toMatchObject([{ topicId: T1, partitions: [4, 9] }]);
    });
  }

  it('Fetch v16 response: records stay a slice, CurrentLeader and NodeEndpoints are read', () => {
    const records = Buffer.alloc(300, 7);
    const buf = bytes((w) =>
      encodeFetchResponse(
        w,
        {
          throttleTimeMs: 0,
          errorCode: 0,
          sessionId: 99,
          responses: [
            {
              topicId: T1,
              partitions: [
                { partitionIndex: 0, errorCode: 0, highWatermark: 500n, lastStableOffset: 490n, logStartOffset: 10n, abortedTransactions: null, preferredReadReplica: -1, records },
                { partitionIndex: 1, errorCode: 6, highWatermark: -1n, currentLeader: { leaderId: 3, leaderEpoch: 8 }, abortedTransactions: null, records: null },
              ],
            },
          ],
          nodeEndpoints: [{ nodeId: 3, host: 'broker-3', port: 9093, rack: null }],
        },
        16,
      ),
    );
    const res = decodeFetchResponse(new Reader(buf), 16);
    expect(res.sessionId).toBe(99);
    const [p0, p1] = res.topics[0]!.partitions;
    expect(p0).toMatchObject({ partition: 0, errorCode: 0, highWatermark: 500, lastStableOffset: 490, logStartOffset: 10, currentLeaderId: -1 });
    expect(p0!.records!.equals(records)).toBe(true);
    expect(p0!.records!.buffer).toBe(buf.buffer); // a view into the response, not a copy
    expect(p1).toMatchObject({ partition: 1, errorCode: 6, currentLeaderId: 3, currentLeaderEpoch: 8, records: null });
    expect(res.nodeEndpoints).toEqual([{ nodeId: 3, host: 'broker-3', port: 9093 }]);
  });

  it('Metadata v12', () => {
    const req = decodeMetadataRequest(new Reader(bytes((w) => encodeMetadataRequest(w, ['a', 'b']))), 12);
    expect(req.topics?.map((t) => t.name)).toEqual(['a', 'b']);
    expect(req.allowAutoTopicCreation).toBe(false);
    expect(decodeMetadataRequest(new Reader(bytes((w) => encodeMetadataRequest(w, null))), 12).topics).toBeNull();
    const res = decodeMetadataResponse(
      new Reader(
        bytes((w) =>
          encodeMetadataResponse(
            w,
            {
              brokers: [{ nodeId: 1, host: 'h', port: 1, rack: 'r1' }],
              clusterId: 'cid',
              controllerId: 1,
              topics: [{ errorCode: 0, name: 'a', topicId: T1, isInternal: false, partitions: [{ errorCode: 0, partitionIndex: 0, leaderId: 1, leaderEpoch: 4, replicaNodes: [1], isrNodes: [1], offlineReplicas: [] }] }],
            },
            12,
          ),
        ),
      ),
    );
    expect(res).toEqual({
      brokers: [{ nodeId: 1, host: 'h', port: 1 }],
      clusterId: 'cid',
      controllerId: 1,
      topics: [{ errorCode: 0, name: 'a', topicId: T1, isInternal: false, partitions: [{ errorCode: 0, partition: 0, leaderId: 1, leaderEpoch: 4 }] }],
    });
  });

  it('ListOffsets v7 and OffsetForLeaderEpoch v4 (consumer form)', () => {
    const lo = decodeListOffsetsRequest(new Reader(bytes((w) => encodeListOffsetsRequest(w, [{ topic: 't', partition: 1, currentLeaderEpoch: 2, timestamp: -2 }]))), 7);
    expect(lo).toMatchObject({ replicaId: -1, isolationLevel: 0, topics: [{ name: 't', partitions: [{ partitionIndex: 1, currentLeaderEpoch: 2, timestamp: -2n }] }] });
    const lor = decodeListOffsetsResponse(
      new Reader(bytes((w) => encodeListOffsetsResponse(w, { topics: [{ name: 't', partitions: [{ partitionIndex: 1, errorCode: 0, timestamp: -1n, offset: 42n, leaderEpoch: 3 }] }] }, 7))),
    );
    expect(lor).toEqual([{ topic: 't', partition: 1, errorCode: 0, offset: 42, leaderEpoch: 3 }]);
    const oe = decodeOffsetForLeaderEpochRequest(new Reader(bytes((w) => encodeOffsetForLeaderEpochRequest(w, [{ topic: 't', partition: 0, currentLeaderEpoch: 9, leaderEpoch: 7 }]))), 4);
    expect(oe).toMatchObject({ replicaId: -1, topics: [{ topic: 't', partitions: [{ partition: 0, currentLeaderEpoch: 9, leaderEpoch: 7 }] }] });
    const oer = decodeOffsetForLeaderEpochResponse(
      new Reader(bytes((w) => encodeOffsetForLeaderEpochResponse(w, { topics: [{ topic: 't', partitions: [{ errorCode: 0, partition: 0, leaderEpoch: 6, endOffset: 100n }] }] }, 4))),
    );
    expect(oer).toEqual([{ topic: 't', partition: 0, errorCode: 0, leaderEpoch: 6, endOffset: 100 }]);
  });

  it('DescribeCluster v0', () => {
    expect(decodeDescribeClusterRequest(new Reader(bytes((w) => w.bool(false).uvarint(0))), 0).includeClusterAuthorizedOperations).toBe(false);
    const res = decodeDescribeClusterResponse(
      new Reader(bytes((w) => encodeDescribeClusterResponse(w, { errorCode: 0, errorMessage: null, clusterId: 'abc', controllerId: 2, brokers: [{ brokerId: 2, host: 'x', port: 9, rack: null }] }, 0))),
    );
    expect(res).toEqual({ errorCode: 0, errorMessage: null, clusterId: 'abc', controllerId: 2, brokers: [{ nodeId: 2, host: 'x', port: 9 }] });
  });
});
