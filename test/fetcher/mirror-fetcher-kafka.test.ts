/**
 * The mirror fetcher against a real Apache Kafka broker (started by the interop harness's
 * launcher) as the source, appending into real Fjord partition logs: byte-identical segments,
 * no record decoded, truncation of a diverged log, out-of-range restart at the source log start,
 * proactive epoch bumps, source topic deletion (non-retryable) and an unreachable source.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CompressionTypes, Kafka, logLevel, type Admin } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MirrorFetcher, type MirrorTopicPartition } from '../../src/fetcher/mirror-fetcher.js';
import { KafkaClient } from '../../src/client/kafka-client.js';
import { KafkaSourceEndpoint } from '../../src/fetcher/kafka-source-endpoint.js';
import { KafkaConnection } from '../../src/client/kafka-connection.js';
import { encodeProduceRequest } from '../../src/protocol/generated/messages/produce-request.js';
import { decodeProduceResponse } from '../../src/protocol/generated/messages/produce-response.js';
import { Codec } from '../../src/protocol/compression.js';
import { buildRecordBatch } from '../../src/protocol/records.js';
import { logConfig } from '../../src/storage/log-config.js';
import { PartitionLog } from '../../src/storage/partition-log.js';
import { startKafkaSource as startKafkaBroker, type KafkaBroker } from '../mirror/helpers/kafka-source.js';
import { waitFor } from '../helpers/wait.js';

let kafka: KafkaBroker;
let admin: Admin;
let kafkaClient: Kafka;
const work = mkdtempSync(join(tmpdir(), 'fjord-mirror-fetcher-'));
const logs: PartitionLog[] = [];

beforeAll(async () => {
  kafka = await startKafkaBroker();
  kafkaClient = new Kafka({ clientId: 'mirror-test', brokers: [kafka.bootstrap], logLevel: logLevel.NOTHING });
  admin = kafkaClient.admin();
  await admin.connect();
}, 120_000);

afterAll(async () => {
  await admin?.disconnect();
  for (const l of logs) await l.close().catch(() => undefined);
  await kafka?.stop();
  rmSync(work, { recursive: true, force: true });
});

async function sourceTopicId(name: string): Promise<string> {
  const client = new KafkaClient({ bootstrapServers: [kafka.bootstrap] });
  try {
    const md = await client.metadata([name]);
    const t = md.topics.find((x) => x.name === name);
    if (t === undefined || t.errorCode !== 0) throw new Error(`no topic ${name}`);
    return t.topicId;
  } finally {
    client.close();
  }
}

async function produce(topic: string, partition: number, batches: number, perBatch: number): Promise<void> {
  // A producer per call: kafkajs refreshes metadata for every topic it ever saw, and a topic an
  // earlier test deleted would fail the send.
  const producer = kafkaClient.producer({ allowAutoTopicCreation: false });
  await producer.connect();
  try {
    for (let b = 0; b < batches; b++) {
      const messages = Array.from({ length: perBatch }, (_, i) => ({ partition, key: `k${b}-${i}`, value: `value-${b}-${i}-`.padEnd(100, 'x') }));
      await producer.send({ topic, messages, compression: b % 2 === 0 ? CompressionTypes.GZIP : CompressionTypes.None, acks: -1 });
    }
  } finally {
    await producer.disconnect();
  }
}

async function openLog(name: string, topicId: string): Promise<PartitionLog> {
  const log = await PartitionLog.open({ dir: join(work, name), topicId, config: logConfig() });
  logs.push(log);
  return log;
}

interface Events {
  failed: { tp: MirrorTopicPartition; err: Error; nonRetryable: boolean }[];
  bumps: number[];
  fenced: number[];
}

function fetcherFor(logMap: Map<number, PartitionLog>, dle: () => number, opts: { unreachableFailMs?: number } = {}) {
  const events: Events = { failed: [], bumps: [], fenced: [] };
  const client = new KafkaClient({ bootstrapServers: [kafka.bootstrap], requestTimeoutMs: 5000, connectTimeoutMs: 2000 });
  const fetcher = new MirrorFetcher(
    new KafkaSourceEndpoint(client),
    {
      log: (tp) => logMap.get(tp.partition),
      destinationLeaderEpoch: () => dle(),
      onEpochFenced: (_tp, e) => events.fenced.push(e),
      requestEpochBump: (_tp, min) => events.bumps.push(min),
      onPartitionFailed: (tp, err, nonRetryable) => events.failed.push({ tp, err, nonRetryable }),
    },
    { maxWaitMs: 200, backoffMs: 200, unreachableFailMs: opts.unreachableFailMs ?? 30_000 },
  );
  return { fetcher, client, events };
}

function firstDifference(a: Buffer, b: Buffer): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return i;
  return a.length === b.length ? -1 : n;
}

function kafkaSegment(topic: string, partition: number): Buffer {
  return readFileSync(join(kafka.dataDir, 'logs', `${topic}-${partition}`, '00000000000000000000.log'));
}

describe('MirrorFetcher with Apache Kafka as the source', () => {
  it('mirrors three partitions byte for byte without decoding a record', async () => {
    const topic = 'orders';
    await admin.createTopics({ topics: [{ topic, numPartitions: 3, replicationFactor: 1 }], waitForLeaders: true });
    for (let p = 0; p < 3; p++) await produce(topic, p, 6, 20 + p);
    const topicId = await sourceTopicId(topic);
    const logMap = new Map<number, PartitionLog>();
    for (let p = 0; p < 3; p++) logMap.set(p, await openLog(`${topic}-${p}`, topicId));
    const { fetcher, client, events } = fetcherFor(logMap, () => 100);
    const tps = [0, 1, 2].map((partition) => ({ topic, topicId, partition }));
    fetcher.addPartitions(tps);
    await waitFor('catch-up', () => tps.every((tp) => logMap.get(tp.partition)!.logEndOffset === 6 * (20 + tp.partition)));
    // More data while mirroring: the same fetch session keeps going.
    await produce(topic, 1, 2, 5);
    await waitFor('tail', () => logMap.get(1)!.logEndOffset === 6 * 21 + 10);
    await waitFor('lag 0', () => fetcher.status(tps[1]!)?.lag === 0);
    await fetcher.close();
    client.close();
    for (const tp of tps) {
      const ours = readFileSync(join(work, `${topic}-${tp.partition}`, '00000000000000000000.log'));
      expect(ours.equals(kafkaSegment(topic, tp.partition)), `partition ${tp.partition} segment bytes`).toBe(true);
    }
    expect(fetcher.stats.recordsDecoded).toBe(0);
    expect(fetcher.stats.batchesAppended).toBe(6 * 3 + 2);
    expect(events.failed).toEqual([]);
    expect(events.fenced).toEqual([]);
  });

  it('mirrors every compression codec unchanged', async () => {
    const topic = 'codecs';
    await admin.createTopics({ topics: [{ topic, numPartitions: 1, replicationFactor: 1 }], waitForLeaders: true });
    const conn = await KafkaConnection.connect({ host: kafka.host, port: kafka.port, clientId: 'codec-producer' });
    for (const compression of [Codec.NONE, Codec.GZIP, Codec.SNAPPY, Codec.LZ4, Codec.ZSTD]) {
      const batch = buildRecordBatch({ compression, records: Array.from({ length: 25 }, (_, i) => ({ key: Buffer.from(`k${i}`), value: Buffer.from(`codec-${compression}-${i}-`.repeat(8)) })) });
      const res = await conn.request(
        0,
        9,
        (w) => encodeProduceRequest(w, { transactionalId: null, acks: -1, timeoutMs: 5000, topicData: [{ name: topic, partitionData: [{ index: 0, records: batch }] }] }, 9),
        (r) => decodeProduceResponse(r, 9),
      );
      expect(res.responses[0]?.partitionResponses[0]?.errorCode, `codec ${compression}`).toBe(0);
    }
    conn.close();
    const topicId = await sourceTopicId(topic);
    const logMap = new Map([[0, await openLog(`${topic}-0`, topicId)]]);
    const { fetcher, client, events } = fetcherFor(logMap, () => 100);
    fetcher.addPartitions([{ topic, topicId, partition: 0 }]);
    await waitFor('all codecs', () => logMap.get(0)!.logEndOffset === 125);
    await fetcher.close();
    client.close();
    const ours = readFileSync(join(work, `${topic}-0`, '00000000000000000000.log'));
    expect(ours.equals(kafkaSegment(topic, 0))).toBe(true);
    expect(fetcher.stats.recordsDecoded).toBe(0);
    expect(events.failed).toEqual([]);
  });

  it('asks for a proactive epoch bump when the source epoch nears the destination epoch', async () => {
    const topic = 'near-epoch';
    await admin.createTopics({ topics: [{ topic, numPartitions: 1, replicationFactor: 1 }], waitForLeaders: true });
    await produce(topic, 0, 2, 3);
    const topicId = await sourceTopicId(topic);
    const logMap = new Map([[0, await openLog(`${topic}-0`, topicId)]]);
    const { fetcher, client, events } = fetcherFor(logMap, () => 1);
    fetcher.addPartitions([{ topic, topicId, partition: 0 }]);
    await waitFor('catch-up', () => logMap.get(0)!.logEndOffset === 6);
    await fetcher.close();
    client.close();
    // Source epoch 0 > DLE 1 - 3: MinLeaderEpoch = SLE + 10, asked once.
    expect(events.bumps).toEqual([10]);
  });

  it('truncates a diverged local log with OffsetsForLeaderEpoch before fetching', async () => {
    const topic = 'diverged';
    await admin.createTopics({ topics: [{ topic, numPartitions: 1, replicationFactor: 1 }], waitForLeaders: true });
    await produce(topic, 0, 3, 10);
    const topicId = await sourceTopicId(topic);
    const log = await openLog(`${topic}-0`, topicId);
    // Mirror the first 30 records, then write 5 records the source never had, at a later epoch
    // (what a destination writes after failover).
    const first = new Map([[0, log]]);
    const a = fetcherFor(first, () => 100);
    a.fetcher.addPartitions([{ topic, topicId, partition: 0 }]);
    await waitFor('first copy', () => log.logEndOffset === 30);
    await a.fetcher.close();
    a.client.close();
    const bogus = buildRecordBatch({ baseOffset: 30, partitionLeaderEpoch: 1, records: Array.from({ length: 5 }, (_, i) => ({ value: Buffer.from(`never-${i}`) })) });
    expect((await log.appendAsMirror(bogus)).errorCode).toBe(0);
    expect(log.logEndOffset).toBe(35);
    // Meanwhile the source wrote something else at 30..
    await produce(topic, 0, 2, 4);
    const b = fetcherFor(first, () => 100);
    b.fetcher.addPartitions([{ topic, topicId, partition: 0 }]);
    await waitFor('converged', () => log.logEndOffset === 38 && b.fetcher.status({ topic, topicId, partition: 0 })?.lag === 0);
    await b.fetcher.close();
    b.client.close();
    const ours = readFileSync(join(work, `${topic}-0`, '00000000000000000000.log'));
    const theirs = kafkaSegment(topic, 0);
    expect({ size: ours.length, first: firstDifference(ours, theirs) }).toEqual({ size: theirs.length, first: -1 });
  });

  it('restarts at the source log start when the fetch offset is out of range', async () => {
    const topic = 'trimmed';
    await admin.createTopics({ topics: [{ topic, numPartitions: 1, replicationFactor: 1 }], waitForLeaders: true });
    await produce(topic, 0, 4, 5);
    await admin.fetchTopicMetadata({ topics: [topic] }); // kafkajs needs the leader cached first
    await admin.deleteTopicRecords({ topic, partitions: [{ partition: 0, offset: '10' }] });
    const topicId = await sourceTopicId(topic);
    const log = await openLog(`${topic}-0`, topicId);
    const { fetcher, client, events } = fetcherFor(new Map([[0, log]]), () => 100);
    fetcher.addPartitions([{ topic, topicId, partition: 0 }]);
    await waitFor('copy from 10', () => log.logEndOffset === 20);
    await fetcher.close();
    client.close();
    expect(log.logStartOffset).toBe(10);
    expect(events.failed).toEqual([]);
  });

  it('fails a partition non-retryably when its source topic is deleted', async () => {
    const topic = 'doomed';
    await admin.createTopics({ topics: [{ topic, numPartitions: 1, replicationFactor: 1 }], waitForLeaders: true });
    await produce(topic, 0, 1, 3);
    const topicId = await sourceTopicId(topic);
    const log = await openLog(`${topic}-0`, topicId);
    const { fetcher, client, events } = fetcherFor(new Map([[0, log]]), () => 100);
    fetcher.addPartitions([{ topic, topicId, partition: 0 }]);
    await waitFor('copy', () => log.logEndOffset === 3);
    await admin.deleteTopics({ topics: [topic] });
    await waitFor('failed', () => events.failed.length > 0);
    await fetcher.close();
    client.close();
    expect(events.failed[0]?.nonRetryable).toBe(true);
    expect(events.failed[0]?.err.message).toBe('The source topic is deleted.');
  });

  it('fails partitions (retryably) when every source broker is down', async () => {
    const topic = 'lonely';
    await admin.createTopics({ topics: [{ topic, numPartitions: 1, replicationFactor: 1 }], waitForLeaders: true });
    await produce(topic, 0, 1, 3);
    const topicId = await sourceTopicId(topic);
    const log = await openLog(`${topic}-0`, topicId);
    const { fetcher, client, events } = fetcherFor(new Map([[0, log]]), () => 100, { unreachableFailMs: 1500 });
    fetcher.addPartitions([{ topic, topicId, partition: 0 }]);
    await waitFor('copy', () => log.logEndOffset === 3);
    await admin.disconnect();
    await kafka.stop();
    await waitFor('failed', () => events.failed.length > 0, 30_000);
    await fetcher.close();
    client.close();
    expect(events.failed[0]?.nonRetryable).toBe(false);
    expect(events.failed[0]?.err.message).toMatch(/unreachable/);
  });
});
