// Cross-checks the generated codecs against two independent implementations that ship with the
// clients Fjord must serve: @platformatic/kafka (flexible versions) and KafkaJS (classic
// versions). Their request encoders produce bytes we decode; our response encoders produce
// bytes their decoders read.
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { Reader } from '../../../src/protocol/reader.js';
import { Writer } from '../../../src/protocol/writer.js';
import { decodeMetadataRequest, encodeMetadataRequest } from '../../../src/protocol/generated/messages/metadata-request.js';
import { encodeMetadataResponse } from '../../../src/protocol/generated/messages/metadata-response.js';
import type { MetadataResponseInput } from '../../../src/protocol/generated/messages/metadata-response.js';
import { decodeFetchRequest, encodeFetchRequest } from '../../../src/protocol/generated/messages/fetch-request.js';
import { encodeFetchResponse } from '../../../src/protocol/generated/messages/fetch-response.js';
import { decodeConsumerGroupHeartbeatRequest, encodeConsumerGroupHeartbeatRequest } from '../../../src/protocol/generated/messages/consumer-group-heartbeat-request.js';
import { encodeConsumerGroupHeartbeatResponse } from '../../../src/protocol/generated/messages/consumer-group-heartbeat-response.js';
import { decodeJoinGroupRequest, encodeJoinGroupRequest } from '../../../src/protocol/generated/messages/join-group-request.js';
import { decodeCreateTopicsRequest, encodeCreateTopicsRequest } from '../../../src/protocol/generated/messages/create-topics-request.js';
import { decodeOffsetCommitRequest, encodeOffsetCommitRequest } from '../../../src/protocol/generated/messages/offset-commit-request.js';
import { decodeProduceRequest, encodeProduceRequest } from '../../../src/protocol/generated/messages/produce-request.js';
import { encodeApiVersionsResponse } from '../../../src/protocol/generated/messages/api-versions-response.js';

const require = createRequire(import.meta.url);
const plt = '../../../node_modules/@platformatic/kafka/dist';

interface PltWriter {
  buffer: Buffer;
}
interface PltApi {
  createRequest: (...args: unknown[]) => PltWriter;
  parseResponse: (correlationId: number, apiKey: number, apiVersion: number, reader: unknown) => unknown;
}
async function pltApi(path: string): Promise<PltApi> {
  return (await import(`${plt}/apis/${path}.js`)) as PltApi;
}
async function pltReader(b: Buffer): Promise<unknown> {
  const { Reader: R } = (await import(`${plt}/protocol/reader.js`)) as { Reader: { from(b: Buffer): unknown } };
  return R.from(b);
}

function ours(fn: (w: Writer) => void): Buffer {
  const w = new Writer();
  fn(w);
  return Buffer.from(w.toBuffer());
}

/** Decodes with our codec, checks every byte was consumed and that re-encoding is identical. */
function decodeAll<T>(b: Buffer, decode: (r: Reader, v: number) => T, encode: (w: Writer, m: T, v: number) => void, v: number): T {
  const r = new Reader(b);
  const m = decode(r, v);
  expect(r.remaining).toBe(0);
  expect(ours((w) => encode(w, m, v)).equals(b)).toBe(true);
  return m;
}

const TOPIC_ID = '5f3a2d0e-91c4-4b7e-8a21-0c9e7d6b5a43';

describe('@platformatic/kafka request encoders → our decoders', () => {
  it('Metadata v12', async () => {
    const api = await pltApi('metadata/metadata-v12');
    const m = decodeAll(api.createRequest(['orders', 'payments'], true, true).buffer, decodeMetadataRequest, encodeMetadataRequest, 12);
    expect(m.topics?.map((t) => t.name)).toEqual(['orders', 'payments']);
    expect(m.allowAutoTopicCreation).toBe(true);
    expect(m.includeTopicAuthorizedOperations).toBe(true);
  });

  it('Fetch v17', async () => {
    const api = await pltApi('consumer/fetch-v17');
    const topics = [{ topicId: TOPIC_ID, partitions: [{ partition: 2, currentLeaderEpoch: 5, fetchOffset: 1234567890123n, lastFetchedEpoch: 4, logStartOffset: -1n, partitionMaxBytes: 1048576 }] }];
    const b = api.createRequest(500, 1, 52428800, 1, 7, 3, topics, [{ topic: TOPIC_ID, partitions: [9] }], 'rack-a').buffer;
    const m = decodeAll(b, decodeFetchRequest, encodeFetchRequest, 17);
    expect(m).toMatchObject({ maxWaitMs: 500, minBytes: 1, maxBytes: 52428800, isolationLevel: 1, sessionId: 7, sessionEpoch: 3, rackId: 'rack-a' });
    expect(m.topics[0]?.topicId).toBe(TOPIC_ID);
    expect(m.topics[0]?.partitions[0]).toMatchObject({ partition: 2, currentLeaderEpoch: 5, fetchOffset: 1234567890123n, lastFetchedEpoch: 4, logStartOffset: -1n, partitionMaxBytes: 1048576 });
    expect(m.forgottenTopicsData[0]).toMatchObject({ topicId: TOPIC_ID, partitions: [9] });
  });

  it('ConsumerGroupHeartbeat v1 (nullable strings and arrays)', async () => {
    const api = await pltApi('consumer/consumer-group-heartbeat-v1');
    const b = api.createRequest('g1', 'member-1', 3, null, null, 45000, ['orders'], null, 'uniform', [{ topicId: TOPIC_ID, partitions: [0, 1] }]).buffer;
    const m = decodeAll(b, decodeConsumerGroupHeartbeatRequest, encodeConsumerGroupHeartbeatRequest, 1);
    expect(m).toMatchObject({ groupId: 'g1', memberId: 'member-1', memberEpoch: 3, instanceId: null, rackId: null, rebalanceTimeoutMs: 45000, subscribedTopicNames: ['orders'], subscribedTopicRegex: null, serverAssignor: 'uniform' });
    expect(m.topicPartitions).toEqual([{ topicId: TOPIC_ID, partitions: [0, 1] }]);
  });

  it('JoinGroup v9', async () => {
    const api = await pltApi('consumer/join-group-v9');
    const b = api.createRequest('g1', 30000, 60000, '', null, 'consumer', [{ name: 'range', metadata: Buffer.from([0, 1, 2]) }], null).buffer;
    const m = decodeAll(b, decodeJoinGroupRequest, encodeJoinGroupRequest, 9);
    expect(m).toMatchObject({ groupId: 'g1', sessionTimeoutMs: 30000, rebalanceTimeoutMs: 60000, memberId: '', groupInstanceId: null, protocolType: 'consumer', reason: null });
    expect(m.protocols[0]?.metadata).toEqual(Buffer.from([0, 1, 2]));
  });

  it('CreateTopics v7', async () => {
    const api = await pltApi('admin/create-topics-v7');
    const b = api.createRequest([{ name: 't', numPartitions: 3, replicationFactor: 1, assignments: [], configs: [{ name: 'cleanup.policy', value: 'compact' }] }], 5000, false).buffer;
    const m = decodeAll(b, decodeCreateTopicsRequest, encodeCreateTopicsRequest, 7);
    expect(m.topics[0]).toMatchObject({ name: 't', numPartitions: 3, replicationFactor: 1, configs: [{ name: 'cleanup.policy', value: 'compact' }], mirrorInfo: null });
  });

  it('OffsetCommit v9', async () => {
    const api = await pltApi('consumer/offset-commit-v9');
    const b = api.createRequest('g1', 4, 'm', null, [{ name: 'orders', partitions: [{ partitionIndex: 0, committedOffset: 42n, committedLeaderEpoch: 1, committedMetadata: null }] }]).buffer;
    const m = decodeAll(b, decodeOffsetCommitRequest, encodeOffsetCommitRequest, 9);
    expect(m.topics[0]?.partitions[0]).toMatchObject({ partitionIndex: 0, committedOffset: 42n, committedLeaderEpoch: 1, committedMetadata: null });
  });

  it('Produce v11 with a real record batch', async () => {
    const api = await pltApi('producer/produce-v11');
    const b = api.createRequest(-1, 30000, [{ topic: 'orders', partition: 1, key: Buffer.from('k'), value: Buffer.from('v') }]).buffer;
    const m = decodeAll(b, decodeProduceRequest, encodeProduceRequest, 11);
    expect(m).toMatchObject({ transactionalId: null, acks: -1, timeoutMs: 30000 });
    const records = m.topicData[0]?.partitionData[0]?.records;
    expect(m.topicData[0]?.name).toBe('orders');
    expect(records?.readInt32BE(8)).toBe((records?.length ?? 0) - 12); // batchLength covers the rest
    expect(records?.readInt8(16)).toBe(2); // magic
  });
});

describe('our response encoders → @platformatic/kafka decoders', () => {
  it('Metadata v12', async () => {
    const api = await pltApi('metadata/metadata-v12');
    const res: MetadataResponseInput = {
      brokers: [{ nodeId: 1, host: '127.0.0.1', port: 9092, rack: null }],
      clusterId: 'fjord-cluster',
      controllerId: 1,
      topics: [{ name: 'orders', topicId: TOPIC_ID, partitions: [{ partitionIndex: 0, leaderId: 1, leaderEpoch: 3, replicaNodes: [1], isrNodes: [1] }] }],
    };
    const parsed = api.parseResponse(1, 3, 12, await pltReader(ours((w) => encodeMetadataResponse(w, res, 12)))) as Record<string, unknown>;
    expect(parsed).toMatchObject({
      clusterId: 'fjord-cluster',
      controllerId: 1,
      brokers: [{ nodeId: 1, host: '127.0.0.1', port: 9092, rack: null }],
      topics: [{ name: 'orders', topicId: TOPIC_ID, partitions: [{ partitionIndex: 0, leaderId: 1, leaderEpoch: 3, replicaNodes: [1], isrNodes: [1] }] }],
    });
  });

  it('Fetch v17 with tagged fields from a later version left out', async () => {
    const api = await pltApi('consumer/fetch-v17');
    const b = ours((w) =>
      encodeFetchResponse(w, { sessionId: 9, responses: [{ topicId: TOPIC_ID, partitions: [{ partitionIndex: 0, highWatermark: 10n, lastStableOffset: 10n, logStartOffset: 0n, records: null }] }] }, 17),
    );
    const parsed = api.parseResponse(1, 1, 17, await pltReader(b)) as { sessionId: number; responses: Array<{ topicId: string; partitions: Array<{ highWatermark: bigint }> }> };
    expect(parsed.sessionId).toBe(9);
    expect(parsed.responses[0]?.topicId).toBe(TOPIC_ID);
    expect(parsed.responses[0]?.partitions[0]?.highWatermark).toBe(10n);
  });

  it('ConsumerGroupHeartbeat v1 with a nullable assignment', async () => {
    const api = await pltApi('consumer/consumer-group-heartbeat-v1');
    const b = ours((w) => encodeConsumerGroupHeartbeatResponse(w, { memberId: 'm', memberEpoch: 2, heartbeatIntervalMs: 3000, assignment: { topicPartitions: [{ topicId: TOPIC_ID, partitions: [0, 2] }] } }, 1));
    const parsed = api.parseResponse(1, 68, 1, await pltReader(b)) as Record<string, unknown>;
    expect(parsed).toMatchObject({ memberId: 'm', memberEpoch: 2, heartbeatIntervalMs: 3000, assignment: { topicPartitions: [{ topicId: TOPIC_ID, partitions: [0, 2] }] } });
  });

  it('ApiVersions v4', async () => {
    const api = await pltApi('metadata/api-versions-v4');
    const b = ours((w) => encodeApiVersionsResponse(w, { apiKeys: [{ apiKey: 18, minVersion: 0, maxVersion: 4 }], throttleTimeMs: 0 }, 4));
    const parsed = api.parseResponse(1, 18, 4, await pltReader(b)) as Record<string, unknown>;
    expect(parsed).toMatchObject({ errorCode: 0, apiKeys: [{ apiKey: 18, minVersion: 0, maxVersion: 4 }] });
  });
});

describe('KafkaJS (classic versions)', () => {
  interface KjsRequest {
    encode(): Promise<{ buffer: Buffer }>;
  }
  type KjsDecode = (b: Buffer) => Promise<Record<string, unknown>>;

  it('Metadata v6 request and response', async () => {
    const request = require('kafkajs/src/protocol/requests/metadata/v6/request.js') as (a: object) => KjsRequest;
    const b = (await request({ topics: ['orders'], allowAutoTopicCreation: false }).encode()).buffer;
    const m = decodeAll(b, decodeMetadataRequest, encodeMetadataRequest, 6);
    expect(m.topics?.map((t) => t.name)).toEqual(['orders']);
    expect(m.allowAutoTopicCreation).toBe(false);

    const { decode } = require('kafkajs/src/protocol/requests/metadata/v6/response.js') as { decode: KjsDecode };
    const res = ours((w) =>
      encodeMetadataResponse(
        w,
        { brokers: [{ nodeId: 1, host: 'localhost', port: 9092, rack: null }], clusterId: 'c', controllerId: 1, topics: [{ name: 'orders', partitions: [{ partitionIndex: 0, leaderId: 1, replicaNodes: [1], isrNodes: [1], offlineReplicas: [] }] }] },
        6,
      ),
    );
    expect(await decode(res)).toMatchObject({
      clusterId: 'c',
      controllerId: 1,
      brokers: [{ nodeId: 1, host: 'localhost', port: 9092, rack: null }],
      topicMetadata: [{ topic: 'orders', partitionMetadata: [{ partitionId: 0, leader: 1, replicas: [1], isr: [1], offlineReplicas: [] }] }],
    });
  });

  it('Fetch v11 request', async () => {
    const request = require('kafkajs/src/protocol/requests/fetch/v11/request.js') as (a: object) => KjsRequest;
    const b = (
      await request({ replicaId: -1, maxWaitTime: 100, minBytes: 1, maxBytes: 1000, topics: [{ topic: 'orders', partitions: [{ partition: 0, currentLeaderEpoch: -1, fetchOffset: '77', logStartOffset: '-1', maxBytes: 100 }] }], rackId: 'r' }).encode()
    ).buffer;
    const m = decodeAll(b, decodeFetchRequest, encodeFetchRequest, 11);
    expect(m).toMatchObject({ replicaId: -1, maxWaitMs: 100, minBytes: 1, maxBytes: 1000, rackId: 'r' });
    expect(m.topics[0]).toMatchObject({ topic: 'orders', partitions: [{ partition: 0, fetchOffset: 77n, logStartOffset: -1n, partitionMaxBytes: 100 }] });
  });
});
