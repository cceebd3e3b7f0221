/**
 * Fetch v12+ LastFetchedEpoch on a real node, with raw generated-codec requests, answered as
 * Kafka's Partition.fetchRecords does: no divergence when the epoch ends at or after the fetch
 * offset; a DivergingEpoch (the largest epoch at or below the one asked for, and where it ends)
 * with no records when it ends before. The mirror fetcher's truncation on the fetch response
 * relies on both when a Fjord node is its source.
 */
import { Kafka, logLevel } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KafkaConnection } from '../../src/client/kafka-connection.js';
import { ErrorCode } from '../../src/protocol/generated/errors.js';
import { encodeFetchRequest } from '../../src/protocol/generated/messages/fetch-request.js';
import { decodeFetchResponse, type FetchResponsePartitionData } from '../../src/protocol/generated/messages/fetch-response.js';
import { encodeMetadataRequest } from '../../src/protocol/generated/messages/metadata-request.js';
import { decodeMetadataResponse } from '../../src/protocol/generated/messages/metadata-response.js';
import { startNode, type RunningNode } from '../helpers/node.js';

const TOPIC = 'epochs';
const ZERO = '00000000-0000-0000-0000-000000000000';
let node: RunningNode;
let topicId = ZERO;
let leaderEpoch = -1;

beforeAll(async () => {
  node = await startNode();
  const k = new Kafka({ clientId: 'last-fetched-epoch', brokers: [node.bootstrap], logLevel: logLevel.NOTHING, retry: { retries: 3 } });
  const admin = k.admin();
  await admin.connect();
  await admin.createTopics({ topics: [{ topic: TOPIC, numPartitions: 1 }], waitForLeaders: true });
  await admin.disconnect();
  const p = k.producer({ allowAutoTopicCreation: false });
  await p.connect();
  await p.send({ topic: TOPIC, acks: -1, messages: ['a', 'b', 'c'].map((value) => ({ partition: 0, value })) });
  await p.disconnect();
  const c = await KafkaConnection.connect({ host: '127.0.0.1', port: node.port, clientId: 'md' });
  try {
    const md = await c.request(3, 12, (w) => encodeMetadataRequest(w, { topics: [{ topicId: ZERO, name: TOPIC }], allowAutoTopicCreation: false, includeTopicAuthorizedOperations: false }, 12), (r) => decodeMetadataResponse(r, 12));
    topicId = md.topics[0]!.topicId;
    leaderEpoch = md.topics[0]!.partitions[0]!.leaderEpoch;
  } finally {
    c.close();
  }
}, 120_000);

afterAll(async () => {
  await node?.destroy();
});

async function fetchWith(fetchOffset: number, lastFetchedEpoch: number): Promise<FetchResponsePartitionData> {
  const version = 13;
  const c = await KafkaConnection.connect({ host: '127.0.0.1', port: node.port, clientId: 'last-fetched-epoch' });
  try {
    const res = await c.request(
      1,
      version,
      (w) =>
        encodeFetchRequest(
          w,
          {
            replicaId: -1,
            maxWaitMs: 0,
            minBytes: 1,
            maxBytes: 1 << 20,
            isolationLevel: 0,
            sessionId: 0,
            sessionEpoch: -1,
            topics: [{ topicId, partitions: [{ partition: 0, currentLeaderEpoch: leaderEpoch, fetchOffset: BigInt(fetchOffset), lastFetchedEpoch, logStartOffset: -1n, partitionMaxBytes: 1 << 20 }] }],
            forgottenTopicsData: [],
            rackId: '',
          },
          version,
        ),
      (r) => decodeFetchResponse(r, version),
    );
    const p = res.responses[0]?.partitions[0];
    if (!p) throw new Error('no partition in the response');
    return p;
  } finally {
    c.close();
  }
}

describe('Fetch LastFetchedEpoch', () => {
  it('no divergence where the epoch reaches the fetch offset', async () => {
    const p = await fetchWith(3, leaderEpoch);
    expect(p.errorCode).toBe(ErrorCode.NONE);
    expect(p.divergingEpoch).toEqual({ epoch: -1, endOffset: -1n });
  });

  it('a DivergingEpoch where the epoch ends before the fetch offset', async () => {
    const p = await fetchWith(5, leaderEpoch);
    expect(p.errorCode).toBe(ErrorCode.NONE);
    expect(p.divergingEpoch).toEqual({ epoch: leaderEpoch, endOffset: 3n });
    expect(p.records?.length ?? 0).toBe(0);
  });
});
