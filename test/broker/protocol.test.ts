/**
 * The node's connection behaviour seen from raw sockets: ApiVersions (and its KIP-511 reply),
 * pipelining in order, connection-fatal input, the maximum request size, the idle timeout, and
 * long-polling fetches woken by appends.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeApiVersionsResponse } from '../../src/protocol/generated/messages/api-versions-response.js';
import { encodeApiVersionsRequest } from '../../src/protocol/generated/messages/api-versions-request.js';
import { encodeCreateTopicsRequest } from '../../src/protocol/generated/messages/create-topics-request.js';
import { decodeCreateTopicsResponse } from '../../src/protocol/generated/messages/create-topics-response.js';
import { encodeFetchRequest } from '../../src/protocol/generated/messages/fetch-request.js';
import { decodeFetchResponse } from '../../src/protocol/generated/messages/fetch-response.js';
import { encodeMetadataRequest } from '../../src/protocol/generated/messages/metadata-request.js';
import { decodeMetadataResponse } from '../../src/protocol/generated/messages/metadata-response.js';
import { encodeProduceRequest } from '../../src/protocol/generated/messages/produce-request.js';
import { decodeProduceResponse } from '../../src/protocol/generated/messages/produce-response.js';
import { iterateBatches } from '../../src/protocol/record-batch.js';
import { buildRecordBatch, decodeRecords } from '../../src/protocol/records.js';
import { startNode, type RunningNode } from '../helpers/node.js';
import { lastAnswer } from '../helpers/wait.js';
import { WireClient } from './wire.js';

let node: RunningNode;

beforeAll(async () => {
  node = await startNode({ overrides: { 'socket.request.max.bytes': 200_000, 'connections.max.idle.ms': 1500, 'num.partitions': 1, 'queued.max.requests': 16 } });
}, 180_000);
afterAll(async () => {
  await node?.destroy();
});

async function createTopic(c: WireClient, name: string, partitions = 1): Promise<string> {
  const r = await c.call(19, 7, (w) => encodeCreateTopicsRequest(w, { topics: [{ name, numPartitions: partitions, replicationFactor: 1 }], timeoutMs: 5000 }, 7));
  const res = decodeCreateTopicsResponse(r, 7);
  expect(res.topics[0]!.errorCode).toBe(0);
  return res.topics[0]!.topicId;
}

describe('connections', () => {
  it('advertises the served versions with Produce from v0, and answers a too-new ApiVersions in v0 format', async () => {
    const c = await WireClient.connect(node.port);
    const r = await c.call(18, 3, (w) => encodeApiVersionsRequest(w, { clientSoftwareName: 'wire-test', clientSoftwareVersion: '1.0' }, 3));
    const res = decodeApiVersionsResponse(r, 3);
    expect(res.errorCode).toBe(0);
    const byKey = new Map(res.apiKeys.map((k) => [k.apiKey, k]));
    expect(byKey.get(0)).toMatchObject({ minVersion: 0, maxVersion: 13 });
    expect(byKey.get(1)).toMatchObject({ minVersion: 4, maxVersion: 19 });
    expect(byKey.get(3)).toMatchObject({ minVersion: 0, maxVersion: 13 });
    expect(byKey.get(18)).toMatchObject({ minVersion: 0, maxVersion: 5 });
    expect(byKey.has(10)).toBe(true); // FindCoordinator, from the group coordinator

    // Version 99: the body is not parsed; the reply is ApiVersions v0 with UNSUPPORTED_VERSION.
    c.write(c.frame(18, 99, () => undefined));
    const bad = await c.next();
    const v0 = decodeApiVersionsResponse(new (await import('../../src/protocol/reader.js')).Reader(bad.body), 0);
    expect(v0.errorCode).toBe(35);
    expect(v0.apiKeys).toEqual([expect.objectContaining({ apiKey: 18, minVersion: 0, maxVersion: 5 })]);
    // The connection stays usable.
    const again = decodeApiVersionsResponse(await c.call(18, 0, () => undefined), 0);
    expect(again.errorCode).toBe(0);
    c.close();
  });

  it('answers pipelined requests strictly in request order', async () => {
    const c = await WireClient.connect(node.port);
    const frames: Buffer[] = [];
    const ids: number[] = [];
    for (let i = 0; i < 60; i++) {
      const id = 1000 + i;
      ids.push(id);
      if (i % 3 === 0) frames.push(c.frame(3, 12, (w) => encodeMetadataRequest(w, { topics: null, allowAutoTopicCreation: false }, 12), id));
      else if (i % 3 === 1) frames.push(c.frame(18, 0, () => undefined, id));
      // A long poll in the middle must not let later answers overtake it.
      else frames.push(c.frame(1, 11, (w) => encodeFetchRequest(w, { replicaId: -1, maxWaitMs: 50, minBytes: 1, maxBytes: 1 << 20, topics: [] }, 11), id));
    }
    c.write(Buffer.concat(frames));
    const got: number[] = [];
    for (let i = 0; i < 60; i++) got.push((await c.next()).correlationId);
    expect(got).toEqual(ids);
    c.close();
  });

  it('pauses a client that pipelines far more than queued.max.requests and still answers everything in order', async () => {
    const c = await WireClient.connect(node.port);
    const frames: Buffer[] = [];
    for (let i = 0; i < 3000; i++) frames.push(c.frame(3, 1, (w) => encodeMetadataRequest(w, { topics: null }, 1), 10_000 + i));
    c.write(Buffer.concat(frames));
    for (let i = 0; i < 3000; i++) expect((await c.next()).correlationId).toBe(10_000 + i);
    c.close();
  });

  it('sends nothing for acks=0, and closes the connection when an acks=0 produce fails', async () => {
    const c = await WireClient.connect(node.port);
    await createTopic(c, 'acks0');
    const batch = buildRecordBatch({ records: [{ value: Buffer.from('fire and forget') }] });
    c.write(c.frame(0, 9, (w) => encodeProduceRequest(w, { transactionalId: null, acks: 0, timeoutMs: 1000, topicData: [{ name: 'acks0', partitionData: [{ index: 0, records: batch }] }] }, 9), 500));
    // The next answer on the connection is the Metadata one: the produce had none.
    c.write(c.frame(3, 1, (w) => encodeMetadataRequest(w, { topics: [{ name: 'acks0' }] }, 1), 501));
    expect((await c.next()).correlationId).toBe(501);
    c.write(c.frame(0, 9, (w) => encodeProduceRequest(w, { transactionalId: null, acks: 0, timeoutMs: 1000, topicData: [{ name: 'no-such-topic', partitionData: [{ index: 0, records: batch }] }] }, 9), 502));
    await c.closed;
  });

  it('closes the connection on an unsupported API, an oversized frame or garbage, and stays up', async () => {
    const a = await WireClient.connect(node.port);
    a.write(a.frame(4, 0, (w) => w.int32(0))); // LeaderAndIsr: removed in Kafka 4
    await a.closed;

    const b = await WireClient.connect(node.port);
    const huge = Buffer.alloc(8);
    huge.writeInt32BE(200_001, 0);
    b.write(huge);
    await b.closed;

    const d = await WireClient.connect(node.port);
    const neg = Buffer.alloc(8);
    neg.writeInt32BE(-5, 0);
    d.write(neg);
    await d.closed;

    const e = await WireClient.connect(node.port);
    // A Metadata v12 header followed by a truncated body.
    e.write(e.frame(3, 12, (w) => w.uvarint(5)));
    await e.closed;

    const ok = await WireClient.connect(node.port);
    const md = decodeMetadataResponse(await ok.call(3, 0, (w) => encodeMetadataRequest(w, { topics: [] }, 0)), 0);
    expect(md.brokers[0]).toMatchObject({ nodeId: 1, port: node.port });
    ok.close();
  });

  it('closes idle connections after connections.max.idle.ms', async () => {
    const c = await WireClient.connect(node.port);
    const started = Date.now();
    await c.closed;
    expect(Date.now() - started).toBeGreaterThanOrEqual(1000);
  });

  it('serves Metadata v0 without ApiVersions first, with auto-creation', async () => {
    const c = await WireClient.connect(node.port);
    const ask = async () => decodeMetadataResponse(await c.call(3, 0, (w) => encodeMetadataRequest(w, { topics: [{ name: 'auto-v0' }] }, 0)), 0);
    // As in Kafka, the request that auto-creates answers UNKNOWN_TOPIC_OR_PARTITION; a retry sees the topic.
    expect((await ask()).topics[0]).toMatchObject({ name: 'auto-v0', errorCode: 3, partitions: [] });
    const md = await lastAnswer(ask, (r) => r.topics[0]!.errorCode === 0);
    expect(md.topics[0]).toMatchObject({ name: 'auto-v0', errorCode: 0 });
    expect(md.topics[0]!.partitions).toHaveLength(1);
    const v12 = decodeMetadataResponse(await c.call(3, 12, (w) => encodeMetadataRequest(w, { topics: [{ name: 'auto-v0', topicId: '00000000-0000-0000-0000-000000000000' }], allowAutoTopicCreation: false }, 12)), 12);
    expect(v12.controllerId).toBe(1);
    expect(v12.clusterId).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(v12.topics[0]!.topicId).not.toBe('00000000-0000-0000-0000-000000000000');
    c.close();
  });
});

describe('produce', () => {
  it("rebuilds batches in the topic's compression.type, keeping records and producer fields", async () => {
    const c = await WireClient.connect(node.port);
    for (const [topic, type, sentCodec, storedCodec] of [
      ['recompress-lz4', 'lz4', 0, 3],
      ['recompress-none', 'uncompressed', 1, 0],
      ['recompress-keep', 'producer', 2, 2],
    ] as const) {
      const r = await c.call(19, 7, (w) =>
        encodeCreateTopicsRequest(w, { topics: [{ name: topic, numPartitions: 1, replicationFactor: 1, configs: [{ name: 'compression.type', value: type }] }], timeoutMs: 5000 }, 7),
      );
      expect(decodeCreateTopicsResponse(r, 7).topics[0]!.errorCode).toBe(0);
      const records = Array.from({ length: 5 }, (_, i) => ({ key: Buffer.from(`k${i}`), value: Buffer.from(`value ${i} `.repeat(40)), headers: [{ key: 'h', value: Buffer.from(String(i)) }], timestamp: 1_700_000_000_000 + i }));
      const batch = buildRecordBatch({ compression: sentCodec, records });
      const pr = decodeProduceResponse(
        await c.call(0, 9, (w) => encodeProduceRequest(w, { transactionalId: null, acks: 1, timeoutMs: 5000, topicData: [{ name: topic, partitionData: [{ index: 0, records: batch }] }] }, 9)),
        9,
      );
      expect(pr.responses[0]!.partitionResponses[0]!.errorCode).toBe(0);
      const fr = decodeFetchResponse(
        await c.call(1, 11, (w) =>
          encodeFetchRequest(w, { replicaId: -1, maxWaitMs: 0, minBytes: 0, maxBytes: 1 << 20, topics: [{ topic, partitions: [{ partition: 0, fetchOffset: 0n, partitionMaxBytes: 1 << 20 }] }] }, 11),
        ),
        11,
      );
      const stored = [...iterateBatches(fr.responses[0]!.partitions[0]!.records!)];
      expect(stored).toHaveLength(1);
      expect(stored[0]!.compression).toBe(storedCodec);
      expect(stored[0]!.isValid()).toBe(true);
      const back = decodeRecords(stored[0]!);
      expect(back.map((x) => [x.offset, x.key!.toString(), x.value!.toString(), x.headers[0]!.value!.toString(), x.timestamp])).toEqual(
        records.map((x, i) => [i, x.key.toString(), x.value.toString(), String(i), x.timestamp]),
      );
    }
    c.close();
  });
});

describe('produce to a compacted topic', () => {
  it('refuses records without a key with INVALID_RECORD and the batch indexes', async () => {
    const c = await WireClient.connect(node.port);
    const r = await c.call(19, 7, (w) =>
      encodeCreateTopicsRequest(w, { topics: [{ name: 'compacted', numPartitions: 1, replicationFactor: 1, configs: [{ name: 'cleanup.policy', value: 'compact' }] }], timeoutMs: 5000 }, 7),
    );
    expect(decodeCreateTopicsResponse(r, 7).topics[0]!.errorCode).toBe(0);
    const produce = async (batch: Buffer) =>
      decodeProduceResponse(
        await c.call(0, 9, (w) => encodeProduceRequest(w, { transactionalId: null, acks: 1, timeoutMs: 5000, topicData: [{ name: 'compacted', partitionData: [{ index: 0, records: batch }] }] }, 9)),
        9,
      ).responses[0]!.partitionResponses[0]!;
    const bad = await produce(buildRecordBatch({ records: [{ key: Buffer.from('a'), value: Buffer.from('1') }, { key: null, value: Buffer.from('2') }, { key: null, value: Buffer.from('3') }] }));
    expect(bad.errorCode).toBe(87);
    expect(bad.recordErrors.map((e) => e.batchIndex)).toEqual([1, 2]);
    const good = await produce(buildRecordBatch({ records: [{ key: Buffer.from('a'), value: Buffer.from('1') }] }));
    expect(good).toMatchObject({ errorCode: 0, baseOffset: 0n });
    c.close();
  });
});

describe('fetch', () => {
  it('long-polls and is woken by an append, without blocking other connections', async () => {
    const admin = await WireClient.connect(node.port);
    const topicId = await createTopic(admin, 'longpoll');
    const consumer = await WireClient.connect(node.port);
    consumer.write(
      consumer.frame(1, 13, (w) =>
        encodeFetchRequest(
          w,
          { replicaId: -1, maxWaitMs: 20_000, minBytes: 1, maxBytes: 1 << 20, isolationLevel: 0, sessionId: 0, sessionEpoch: -1, topics: [{ topicId, partitions: [{ partition: 0, fetchOffset: 0n, partitionMaxBytes: 1 << 20 }] }] },
          13,
        ),
      ),
    );
    // A fixed wait for the fetch to be parked: the broker tells of a parked fetch only by its answer.
    await new Promise((r) => setTimeout(r, 300));
    // Other work proceeds while the fetch waits.
    const md = decodeMetadataResponse(await admin.call(3, 1, (w) => encodeMetadataRequest(w, { topics: null }, 1)), 1);
    expect(md.topics.some((t) => t.name === 'longpoll')).toBe(true);
    const batch = buildRecordBatch({ records: [{ key: Buffer.from('k'), value: Buffer.from('woken') }] });
    const pr = decodeProduceResponse(
      await admin.call(0, 9, (w) => encodeProduceRequest(w, { transactionalId: null, acks: -1, timeoutMs: 5000, topicData: [{ name: 'longpoll', partitionData: [{ index: 0, records: batch }] }] }, 9)),
      9,
    );
    expect(pr.responses[0]!.partitionResponses[0]!.errorCode).toBe(0);
    const started = Date.now();
    const raw = await consumer.next(15_000);
    const r = new (await import('../../src/protocol/reader.js')).Reader(raw.body);
    r.taggedFields();
    const fr = decodeFetchResponse(r, 13);
    expect(Date.now() - started).toBeLessThan(15_000);
    const p = fr.responses[0]!.partitions[0]!;
    expect(p.errorCode).toBe(0);
    expect(p.highWatermark).toBe(1n);
    const batches = [...iterateBatches(p.records!)];
    expect(batches).toHaveLength(1);
    expect(decodeRecords(batches[0]!)[0]!.value!.toString()).toBe('woken');
    admin.close();
    consumer.close();
  });

  it('answers at once with MinBytes 0 even with a long MaxWaitMs', async () => {
    const c = await WireClient.connect(node.port);
    await createTopic(c, 'minbytes0');
    const started = Date.now();
    const r = await c.call(1, 11, (w) =>
      encodeFetchRequest(w, { replicaId: -1, maxWaitMs: 20_000, minBytes: 0, maxBytes: 1 << 20, topics: [{ topic: 'minbytes0', partitions: [{ partition: 0, fetchOffset: 0n, partitionMaxBytes: 1 << 20 }] }] }, 11),
    );
    expect(decodeFetchResponse(r, 11).responses[0]!.partitions[0]!.errorCode).toBe(0);
    // Far below the 20 s it would have waited: the answer did not wait for data.
    expect(Date.now() - started).toBeLessThan(10_000);
    c.close();
  });

  it('returns the first batch whole even when it exceeds MaxBytes, and OFFSET_OUT_OF_RANGE past the end', async () => {
    const c = await WireClient.connect(node.port);
    await createTopic(c, 'kip74');
    const batch = buildRecordBatch({ records: [{ value: Buffer.alloc(50_000, 1) }, { value: Buffer.alloc(50_000, 2) }] });
    await c.call(0, 9, (w) => encodeProduceRequest(w, { transactionalId: null, acks: 1, timeoutMs: 5000, topicData: [{ name: 'kip74', partitionData: [{ index: 0, records: batch }] }] }, 9));
    const fetch = async (offset: bigint) => {
      const r = await c.call(1, 11, (w) =>
        encodeFetchRequest(w, { replicaId: -1, maxWaitMs: 0, minBytes: 0, maxBytes: 1000, topics: [{ topic: 'kip74', partitions: [{ partition: 0, fetchOffset: offset, partitionMaxBytes: 1000 }] }] }, 11),
      );
      return decodeFetchResponse(r, 11).responses[0]!.partitions[0]!;
    };
    const p = await fetch(0n);
    expect(p.errorCode).toBe(0);
    expect(p.records!.length).toBe(batch.length);
    const out = await fetch(5n);
    expect(out.errorCode).toBe(1);
    expect(out.highWatermark).toBe(2n);
    c.close();
  });

  it('keeps an incremental fetch session: unchanged partitions are left out, new data comes back', async () => {
    const c = await WireClient.connect(node.port);
    await createTopic(c, 'session', 2);
    const req = (sessionId: number, sessionEpoch: number, partitions: { partition: number; fetchOffset: bigint }[]) => (w: import('../../src/protocol/writer.js').Writer) =>
      encodeFetchRequest(
        w,
        {
          replicaId: -1,
          maxWaitMs: 0,
          minBytes: 0,
          maxBytes: 1 << 20,
          sessionId,
          sessionEpoch,
          topics: partitions.length ? [{ topic: 'session', partitions: partitions.map((p) => ({ ...p, partitionMaxBytes: 1 << 20 })) }] : [],
          forgottenTopicsData: [],
        },
        11,
      );
    const full = decodeFetchResponse(await c.call(1, 11, req(0, 0, [{ partition: 0, fetchOffset: 0n }, { partition: 1, fetchOffset: 0n }])), 11);
    expect(full.sessionId).toBeGreaterThan(0);
    expect(full.responses[0]!.partitions.map((p) => p.partitionIndex)).toEqual([0, 1]);
    const inc = decodeFetchResponse(await c.call(1, 11, req(full.sessionId, 1, [])), 11);
    expect(inc.errorCode).toBe(0);
    expect(inc.responses).toEqual([]);
    const batch = buildRecordBatch({ records: [{ value: Buffer.from('x') }] });
    await c.call(0, 9, (w) => encodeProduceRequest(w, { transactionalId: null, acks: 1, timeoutMs: 5000, topicData: [{ name: 'session', partitionData: [{ index: 1, records: batch }] }] }, 9));
    const inc2 = decodeFetchResponse(await c.call(1, 11, req(full.sessionId, 2, [])), 11);
    expect(inc2.responses[0]!.partitions.map((p) => p.partitionIndex)).toEqual([1]);
    expect(inc2.responses[0]!.partitions[0]!.records!.length).toBe(batch.length);
    const stale = decodeFetchResponse(await c.call(1, 11, req(full.sessionId, 2, [])), 11);
    expect(stale.errorCode).toBe(71);
    const unknown = decodeFetchResponse(await c.call(1, 11, req(12345, 1, [])), 11);
    expect(unknown.errorCode).toBe(70);
    c.close();
  });
});

describe('admin and describe APIs', () => {
  it('CreateTopics: validate-only writes nothing; v8 MirrorInfo keeps the given topic id', async () => {
    const { encodeCreateTopicsRequest: enc } = await import('../../src/protocol/generated/messages/create-topics-request.js');
    const c = await WireClient.connect(node.port);
    const v = decodeCreateTopicsResponse(
      await c.call(19, 7, (w) => enc(w, { topics: [{ name: 'only-validated', numPartitions: 2, replicationFactor: 1, configs: [{ name: 'retention.ms', value: '5' }] }], timeoutMs: 1000, validateOnly: true }, 7)),
      7,
    );
    expect(v.topics[0]).toMatchObject({ errorCode: 0, numPartitions: 2 });
    expect(v.topics[0]!.configs!.find((x) => x.name === 'retention.ms')).toMatchObject({ value: '5' });
    const bad = decodeCreateTopicsResponse(
      await c.call(19, 7, (w) => enc(w, { topics: [{ name: 'bad-config', numPartitions: 1, replicationFactor: 1, configs: [{ name: 'retention.ms', value: 'x' }] }], timeoutMs: 1000 }, 7)),
      7,
    );
    expect(bad.topics[0]!.errorCode).toBe(40);
    const id = '0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d';
    const m = decodeCreateTopicsResponse(
      await c.call(19, 8, (w) => enc(w, { topics: [{ name: 'mirrored-id', numPartitions: 3, replicationFactor: -1, mirrorInfo: { topicId: id } }], timeoutMs: 1000 }, 8)),
      8,
    );
    expect(m.topics[0]).toMatchObject({ errorCode: 0, topicId: id, numPartitions: 3 });
    const md = decodeMetadataResponse(await c.call(3, 12, (w) => encodeMetadataRequest(w, { topics: null }, 12)), 12);
    expect(md.topics.find((t) => t.name === 'only-validated')).toBeUndefined();
    expect(md.topics.find((t) => t.name === 'mirrored-id')!.topicId).toBe(id);
    c.close();
  });

  it('DescribeTopicPartitions pages with a cursor; OffsetForLeaderEpoch, DescribeLogDirs, DescribeProducers and ListConfigResources answer', async () => {
    const { encodeDescribeTopicPartitionsRequest } = await import('../../src/protocol/generated/messages/describe-topic-partitions-request.js');
    const { decodeDescribeTopicPartitionsResponse } = await import('../../src/protocol/generated/messages/describe-topic-partitions-response.js');
    const { encodeOffsetForLeaderEpochRequest } = await import('../../src/protocol/generated/messages/offset-for-leader-epoch-request.js');
    const { decodeOffsetForLeaderEpochResponse } = await import('../../src/protocol/generated/messages/offset-for-leader-epoch-response.js');
    const { encodeDescribeLogDirsRequest } = await import('../../src/protocol/generated/messages/describe-log-dirs-request.js');
    const { decodeDescribeLogDirsResponse } = await import('../../src/protocol/generated/messages/describe-log-dirs-response.js');
    const { encodeDescribeProducersRequest } = await import('../../src/protocol/generated/messages/describe-producers-request.js');
    const { decodeDescribeProducersResponse } = await import('../../src/protocol/generated/messages/describe-producers-response.js');
    const { encodeListConfigResourcesRequest } = await import('../../src/protocol/generated/messages/list-config-resources-request.js');
    const { decodeListConfigResourcesResponse } = await import('../../src/protocol/generated/messages/list-config-resources-response.js');
    const c = await WireClient.connect(node.port);
    await createTopic(c, 'paged', 5);
    const page1 = decodeDescribeTopicPartitionsResponse(await c.call(75, 0, (w) => encodeDescribeTopicPartitionsRequest(w, { topics: [{ name: 'paged' }], responsePartitionLimit: 3, cursor: null }, 0)), 0);
    expect(page1.topics[0]!.partitions.map((p) => p.partitionIndex)).toEqual([0, 1, 2]);
    expect(page1.nextCursor).toMatchObject({ topicName: 'paged', partitionIndex: 3 });
    const page2 = decodeDescribeTopicPartitionsResponse(
      await c.call(75, 0, (w) => encodeDescribeTopicPartitionsRequest(w, { topics: [{ name: 'paged' }], responsePartitionLimit: 3, cursor: page1.nextCursor }, 0)),
      0,
    );
    expect(page2.topics[0]!.partitions.map((p) => p.partitionIndex)).toEqual([3, 4]);
    expect(page2.nextCursor).toBeNull();

    // An idempotent batch (producer id 4242, epoch 0, sequence 0) for DescribeProducers.
    const batch = buildRecordBatch({ producerId: 4242, producerEpoch: 0, baseSequence: 0, records: [{ value: Buffer.from('a') }, { value: Buffer.from('b') }] });
    await c.call(0, 9, (w) => encodeProduceRequest(w, { transactionalId: null, acks: -1, timeoutMs: 5000, topicData: [{ name: 'paged', partitionData: [{ index: 1, records: batch }] }] }, 9));

    const oe = decodeOffsetForLeaderEpochResponse(
      await c.call(23, 4, (w) => encodeOffsetForLeaderEpochRequest(w, { replicaId: -1, topics: [{ topic: 'paged', partitions: [{ partition: 1, currentLeaderEpoch: 0, leaderEpoch: 0 }, { partition: 2, currentLeaderEpoch: 5, leaderEpoch: 0 }] }] }, 4)),
      4,
    );
    expect(oe.topics[0]!.partitions[0]).toMatchObject({ errorCode: 0, leaderEpoch: 0, endOffset: 2n });
    expect(oe.topics[0]!.partitions[1]!.errorCode).toBe(75); // UNKNOWN_LEADER_EPOCH

    const dirs = decodeDescribeLogDirsResponse(await c.call(35, 4, (w) => encodeDescribeLogDirsRequest(w, { topics: [{ topic: 'paged', partitions: [1] }] }, 4)), 4);
    const part = dirs.results[0]!.topics[0]!.partitions[0]!;
    expect(part).toMatchObject({ partitionIndex: 1, partitionSize: BigInt(batch.length) });
    expect(dirs.results[0]!.totalBytes).toBeGreaterThan(0n);

    const prod = decodeDescribeProducersResponse(await c.call(61, 0, (w) => encodeDescribeProducersRequest(w, { topics: [{ name: 'paged', partitionIndexes: [1, 9] }] }, 0)), 0);
    expect(prod.topics[0]!.partitions[0]!.activeProducers[0]).toMatchObject({ producerId: 4242n, producerEpoch: 0, lastSequence: 1 });
    expect(prod.topics[0]!.partitions[1]!.errorCode).toBe(3);

    const lcr = decodeListConfigResourcesResponse(await c.call(74, 1, (w) => encodeListConfigResourcesRequest(w, { resourceTypes: [2, 4] }, 1)), 1);
    expect(lcr.configResources).toContainEqual(expect.objectContaining({ resourceName: 'paged', resourceType: 2 }));
    expect(lcr.configResources).toContainEqual(expect.objectContaining({ resourceName: '1', resourceType: 4 }));
    c.close();
  });
});

describe('dynamic broker configs', () => {
  it('a cluster-wide num.partitions set with IncrementalAlterConfigs applies to auto-created topics and is described as dynamic', async () => {
    const { encodeIncrementalAlterConfigsRequest } = await import('../../src/protocol/generated/messages/incremental-alter-configs-request.js');
    const { decodeIncrementalAlterConfigsResponse } = await import('../../src/protocol/generated/messages/incremental-alter-configs-response.js');
    const { encodeDescribeConfigsRequest } = await import('../../src/protocol/generated/messages/describe-configs-request.js');
    const { decodeDescribeConfigsResponse } = await import('../../src/protocol/generated/messages/describe-configs-response.js');
    const c = await WireClient.connect(node.port);
    const alter = async (name: string, op: number, value: string | null) =>
      decodeIncrementalAlterConfigsResponse(
        await c.call(44, 1, (w) => encodeIncrementalAlterConfigsRequest(w, { resources: [{ resourceType: 4, resourceName: '', configs: [{ name, configOperation: op, value }] }], validateOnly: false }, 1)),
        1,
      ).responses[0]!;
    expect(await alter('num.partitions', 0, '6')).toMatchObject({ errorCode: 0 });
    expect(await alter('node.id', 0, '9')).toMatchObject({ errorCode: 40 }); // read-only
    expect(await alter('num.partitions', 0, 'many')).toMatchObject({ errorCode: 40 });
    const ask = async () => decodeMetadataResponse(await c.call(3, 9, (w) => encodeMetadataRequest(w, { topics: [{ name: 'auto-dynamic' }], allowAutoTopicCreation: true }, 9)), 9);
    // As in Kafka, the request that auto-creates answers UNKNOWN_TOPIC_OR_PARTITION; a retry sees the topic.
    expect((await ask()).topics[0]!.errorCode).toBe(3);
    const md = await lastAnswer(ask, (r) => r.topics[0]!.errorCode === 0);
    expect(md.topics[0]!.partitions).toHaveLength(6);
    const d = decodeDescribeConfigsResponse(
      await c.call(32, 4, (w) => encodeDescribeConfigsRequest(w, { resources: [{ resourceType: 4, resourceName: '1', configurationKeys: ['num.partitions'] }], includeSynonyms: true }, 4)),
      4,
    );
    expect(d.results[0]!.configs[0]).toMatchObject({ name: 'num.partitions', value: '6', configSource: 3 });
    expect(d.results[0]!.configs[0]!.synonyms.map((x) => [x.value, x.source])).toEqual([['6', 3], ['1', 4], ['1', 5]]);
    expect(await alter('num.partitions', 1, null)).toMatchObject({ errorCode: 0 });

    // GROUP resources (KIP-848 group configs), bounded by the broker's min/max.
    const alterGroup = async (value: string) =>
      decodeIncrementalAlterConfigsResponse(
        await c.call(44, 1, (w) =>
          encodeIncrementalAlterConfigsRequest(w, { resources: [{ resourceType: 32, resourceName: 'grp', configs: [{ name: 'consumer.session.timeout.ms', configOperation: 0, value }] }], validateOnly: false }, 1),
        ),
        1,
      ).responses[0]!;
    expect(await alterGroup('50000')).toMatchObject({ errorCode: 0 });
    expect(await alterGroup('1000')).toMatchObject({ errorCode: 40 });
    const g = decodeDescribeConfigsResponse(
      await c.call(32, 4, (w) => encodeDescribeConfigsRequest(w, { resources: [{ resourceType: 32, resourceName: 'grp', configurationKeys: null }], includeSynonyms: false }, 4)),
      4,
    );
    const byName = new Map(g.results[0]!.configs.map((x) => [x.name, x]));
    expect(byName.get('consumer.session.timeout.ms')).toMatchObject({ value: '50000', configSource: 8 });
    expect(byName.get('consumer.heartbeat.interval.ms')).toMatchObject({ value: '5000', configSource: 5 });
    c.close();
  });
});

describe('list offsets', () => {
  it('answers max-timestamp and timestamp queries with the exact record inside a batch', async () => {
    const { encodeListOffsetsRequest } = await import('../../src/protocol/generated/messages/list-offsets-request.js');
    const { decodeListOffsetsResponse } = await import('../../src/protocol/generated/messages/list-offsets-response.js');
    const c = await WireClient.connect(node.port);
    await createTopic(c, 'maxts');
    const base = 10_000_000;
    const batch = buildRecordBatch({ records: [100, 400, 250].map((d) => ({ value: Buffer.from('m'), timestamp: base + d })) });
    await c.call(0, 9, (w) => encodeProduceRequest(w, { transactionalId: null, acks: -1, timeoutMs: 5000, topicData: [{ name: 'maxts', partitionData: [{ index: 0, records: batch }] }] }, 9));
    const query = async (timestamp: number) => {
      const r = await c.call(2, 9, (w) =>
        encodeListOffsetsRequest(w, { replicaId: -1, isolationLevel: 1, topics: [{ name: 'maxts', partitions: [{ partitionIndex: 0, currentLeaderEpoch: -1, timestamp: BigInt(timestamp) }] }] }, 9),
      );
      const p = decodeListOffsetsResponse(r, 9).topics[0]!.partitions[0]!;
      return [Number(p.offset), Number(p.timestamp)];
    };
    expect(await query(-2)).toEqual([0, -1]);
    expect(await query(-1)).toEqual([3, -1]);
    expect(await query(-3)).toEqual([1, base + 400]);
    expect((await query(base + 50))[0]).toBe(0);
    expect((await query(base + 300))[0]).toBe(1);
    expect((await query(base + 150))[0]).toBe(1);
    expect((await query(base + 500))[0]).toBe(-1);
    c.close();
  });
});

describe('SCRAM credentials', () => {
  it('stores, describes and deletes credentials with Kafka validation', async () => {
    const { encodeAlterUserScramCredentialsRequest } = await import('../../src/protocol/generated/messages/alter-user-scram-credentials-request.js');
    const { decodeAlterUserScramCredentialsResponse } = await import('../../src/protocol/generated/messages/alter-user-scram-credentials-response.js');
    const { encodeDescribeUserScramCredentialsRequest } = await import('../../src/protocol/generated/messages/describe-user-scram-credentials-request.js');
    const { decodeDescribeUserScramCredentialsResponse } = await import('../../src/protocol/generated/messages/describe-user-scram-credentials-response.js');
    const c = await WireClient.connect(node.port);
    const up = (name: string, mechanism: number, iterations: number) => ({ name, mechanism, iterations, salt: Buffer.from('salt'), saltedPassword: Buffer.alloc(32, 1) });
    const alter = async (upsertions: ReturnType<typeof up>[], deletions: { name: string; mechanism: number }[] = []) =>
      decodeAlterUserScramCredentialsResponse(await c.call(51, 0, (w) => encodeAlterUserScramCredentialsRequest(w, { deletions, upsertions }, 0)), 0).results.map((r) => [r.user, r.errorCode]);
    expect(await alter([up('alice', 1, 8192), up('bob', 2, 4096), up('carol', 1, 100), up('dave', 9, 8192)])).toEqual([
      ['alice', 0],
      ['bob', 0],
      ['carol', 93],
      ['dave', 33],
    ]);
    expect(await alter([up('alice', 2, 4096)], [{ name: 'alice', mechanism: 1 }])).toEqual([['alice', 92]]);
    const describe = async (users: string[] | null) =>
      decodeDescribeUserScramCredentialsResponse(await c.call(50, 0, (w) => encodeDescribeUserScramCredentialsRequest(w, { users: users === null ? null : users.map((name) => ({ name })) }, 0)), 0).results;
    const all = await describe(null);
    expect(all.map((r) => [r.user, r.credentialInfos.map((i) => [i.mechanism, i.iterations])])).toEqual([
      ['alice', [[1, 8192]]],
      ['bob', [[2, 4096]]],
    ]);
    expect((await describe(['nobody']))[0]!.errorCode).toBe(91);
    expect(await alter([], [{ name: 'alice', mechanism: 1 }])).toEqual([['alice', 0]]);
    expect(await alter([], [{ name: 'alice', mechanism: 1 }])).toEqual([['alice', 91]]);
    expect((await describe(null)).map((r) => r.user)).toEqual(['bob']);
    c.close();
  });
});

describe('elect leaders', () => {
  it('answers ELECTION_NOT_NEEDED for led partitions and UNKNOWN_TOPIC_OR_PARTITION otherwise', async () => {
    const { encodeElectLeadersRequest } = await import('../../src/protocol/generated/messages/elect-leaders-request.js');
    const { decodeElectLeadersResponse } = await import('../../src/protocol/generated/messages/elect-leaders-response.js');
    const c = await WireClient.connect(node.port);
    await createTopic(c, 'elect', 2);
    const r = decodeElectLeadersResponse(
      await c.call(43, 2, (w) => encodeElectLeadersRequest(w, { electionType: 0, topicPartitions: [{ topic: 'elect', partitions: [0, 1, 7] }, { topic: 'nope', partitions: [0] }], timeoutMs: 1000 }, 2)),
      2,
    );
    expect(r.errorCode).toBe(0);
    expect(r.replicaElectionResults.map((t) => t.partitionResult.map((p) => p.errorCode))).toEqual([[84, 84, 3], [3]]);
    const all = decodeElectLeadersResponse(await c.call(43, 2, (w) => encodeElectLeadersRequest(w, { electionType: 0, topicPartitions: null, timeoutMs: 1000 }, 2)), 2);
    expect(all.replicaElectionResults).toEqual([]);
    c.close();
  });
});

describe('describe quorum', () => {
  it('reports this node as the only voter and leader of __cluster_metadata', async () => {
    const { encodeDescribeQuorumRequest } = await import('../../src/protocol/generated/messages/describe-quorum-request.js');
    const { decodeDescribeQuorumResponse } = await import('../../src/protocol/generated/messages/describe-quorum-response.js');
    const c = await WireClient.connect(node.port);
    const r = decodeDescribeQuorumResponse(await c.call(55, 2, (w) => encodeDescribeQuorumRequest(w, { topics: [{ topicName: '__cluster_metadata', partitions: [{ partitionIndex: 0 }] }] }, 2)), 2);
    const p = r.topics[0]!.partitions[0]!;
    expect(p).toMatchObject({ errorCode: 0, leaderId: 1, leaderEpoch: 1 });
    expect(p.highWatermark).toBeGreaterThan(0n);
    expect(p.currentVoters.map((x) => [x.replicaId, x.logEndOffset])).toEqual([[1, p.highWatermark]]);
    expect(r.nodes[0]!.listeners[0]).toMatchObject({ host: '127.0.0.1', port: node.port });
    c.close();
  });
});

describe('offset commit', () => {
  it('answers UNKNOWN_TOPIC_OR_PARTITION for topics that do not exist and commits the rest', async () => {
    const { encodeOffsetCommitRequest } = await import('../../src/protocol/generated/messages/offset-commit-request.js');
    const { decodeOffsetCommitResponse } = await import('../../src/protocol/generated/messages/offset-commit-response.js');
    const { encodeOffsetFetchRequest } = await import('../../src/protocol/generated/messages/offset-fetch-request.js');
    const { decodeOffsetFetchResponse } = await import('../../src/protocol/generated/messages/offset-fetch-response.js');
    const c = await WireClient.connect(node.port);
    await createTopic(c, 'committed');
    const part = (partitionIndex: number, committedOffset: bigint) => ({ partitionIndex, committedOffset, committedLeaderEpoch: -1, committedMetadata: '' });
    const r = decodeOffsetCommitResponse(
      await c.call(8, 8, (w) =>
        encodeOffsetCommitRequest(
          w,
          { groupId: 'standalone', generationIdOrMemberEpoch: -1, memberId: '', groupInstanceId: null, topics: [{ name: 'missing-topic', partitions: [part(0, 5n)] }, { name: 'committed', partitions: [part(0, 0n)] }] },
          8,
        ),
      ),
      8,
    );
    expect(r.topics.map((t) => [t.name, t.partitions.map((p) => p.errorCode)])).toEqual([
      ['missing-topic', [3]],
      ['committed', [0]],
    ]);
    const f = decodeOffsetFetchResponse(await c.call(9, 7, (w) => encodeOffsetFetchRequest(w, { groupId: 'standalone', topics: null, requireStable: false }, 7)), 7);
    expect(f.topics.map((t) => t.name)).toEqual(['committed']);
    c.close();
  });
});
