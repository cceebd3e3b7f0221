/**
 * The mirror fetcher with a real Fjord node process as the source: every compression codec
 * kafkajs can write, many partitions at once, and a source restart in the middle (the fetcher
 * reconnects and goes on with no gap and no duplicate). Segment files compare byte for byte.
 * A batch corrupted in the source's segment file on disk is refused by its CRC-32C.
 */
import { closeSync, mkdtempSync, openSync, readFileSync, readdirSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CompressionTypes, Kafka, logLevel } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MirrorFetcher, type MirrorTopicPartition } from '../../src/fetcher/mirror-fetcher.js';
import { fetcherIdOf } from '../../src/fetcher/source-broker-loop.js';
import { KafkaClient } from '../../src/client/kafka-client.js';
import { KafkaSourceEndpoint } from '../../src/fetcher/kafka-source-endpoint.js';
import { KafkaConnection } from '../../src/client/kafka-connection.js';
import { encodeProduceRequest } from '../../src/protocol/generated/messages/produce-request.js';
import { decodeProduceResponse } from '../../src/protocol/generated/messages/produce-response.js';
import { ErrorCode } from '../../src/protocol/generated/errors.js';
import { KafkaError } from '../../src/protocol/kafka-error.js';
import { Codec } from '../../src/protocol/compression.js';
import { buildRecordBatch } from '../../src/protocol/records.js';
import { logConfig } from '../../src/storage/log-config.js';
import { PartitionLog } from '../../src/storage/partition-log.js';
import { startNode, type RunningNode } from '../helpers/node.js';
import { waitFor } from '../helpers/wait.js';

let node: RunningNode;
const work = mkdtempSync(join(tmpdir(), 'fjord-mirror-fjord-src-'));
const logs: PartitionLog[] = [];

beforeAll(async () => {
  node = await startNode();
}, 120_000);

afterAll(async () => {
  for (const l of logs) await l.close().catch(() => undefined);
  await node?.destroy();
  rmSync(work, { recursive: true, force: true });
});

function client(): Kafka {
  return new Kafka({ clientId: 'mirror-fjord-test', brokers: [node.bootstrap], logLevel: logLevel.NOTHING, retry: { retries: 8 } });
}

async function createTopic(kafka: Kafka, topic: string, numPartitions: number): Promise<void> {
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({ topics: [{ topic, numPartitions }], waitForLeaders: true });
  await admin.disconnect();
}

/** Empty destination logs for partitions 0..n-1 of `topic`, closed after the file. */
async function openLogs(topic: string, id: string, n: number): Promise<Map<number, PartitionLog>> {
  const parts = new Map<number, PartitionLog>();
  for (let p = 0; p < n; p++) {
    const l = await PartitionLog.open({ dir: join(work, `${topic}-${p}`), topicId: id, config: logConfig() });
    logs.push(l);
    parts.set(p, l);
  }
  return parts;
}

async function topicId(name: string): Promise<string> {
  const c = new KafkaClient({ bootstrapServers: [node.bootstrap] });
  try {
    const t = (await c.metadata([name])).topics.find((x) => x.name === name);
    if (t === undefined || t.errorCode !== 0) throw new Error(`no topic ${name}`);
    return t.topicId;
  } finally {
    c.close();
  }
}

function segmentBytes(dir: string): Buffer {
  const files = readdirSync(dir).filter((f) => f.endsWith('.log')).sort();
  return Buffer.concat(files.map((f) => readFileSync(join(dir, f))));
}

function mirrorInto(partitions: Map<number, PartitionLog>, numFetchers = 1) {
  const failed: string[] = [];
  const errors: { code: number | undefined; nonRetryable: boolean }[] = [];
  const c = new KafkaClient({ bootstrapServers: [node.bootstrap], requestTimeoutMs: 5000, connectTimeoutMs: 1000 });
  const fetcher = new MirrorFetcher(
    new KafkaSourceEndpoint(c),
    {
      log: (tp) => partitions.get(tp.partition),
      destinationLeaderEpoch: () => 1000,
      onEpochFenced: () => undefined,
      requestEpochBump: () => undefined,
      onPartitionFailed: (tp, err, nonRetryable) => {
        failed.push(`${tp.partition}: ${err.message}`);
        errors.push({ code: err instanceof KafkaError ? err.code : undefined, nonRetryable });
      },
    },
    { maxWaitMs: 200, backoffMs: 200, unreachableFailMs: 60_000, numFetchers, pipelineMaxBytes: 10 << 20 },
  );
  return { fetcher, client: c, failed, errors };
}

describe('MirrorFetcher with a Fjord node as the source', () => {
  it('mirrors every codec unchanged', async () => {
    const topic = 'codecs';
    const kafka = client();
    await createTopic(kafka, topic, 1);
    const producer = kafka.producer({ allowAutoTopicCreation: false });
    await producer.connect();
    // kafkajs ships gzip; snappy, lz4 and zstd batches are built by our own codec layer below.
    for (const compression of [CompressionTypes.None, CompressionTypes.GZIP]) {
      await producer.send({ topic, compression, messages: Array.from({ length: 20 }, (_, i) => ({ partition: 0, value: `codec-${compression}-${i}`.repeat(5) })) });
    }
    await producer.disconnect();
    const conn = await KafkaConnection.connect({ host: '127.0.0.1', port: node.port, clientId: 'codec-producer' });
    for (const compression of [Codec.SNAPPY, Codec.LZ4, Codec.ZSTD]) {
      const batch = buildRecordBatch({ compression, records: Array.from({ length: 20 }, (_, i) => ({ value: Buffer.from(`codec-${compression}-${i}`.repeat(5)) })) });
      const res = await conn.request(
        0,
        9,
        (w) => encodeProduceRequest(w, { transactionalId: null, acks: -1, timeoutMs: 5000, topicData: [{ name: topic, partitionData: [{ index: 0, records: batch }] }] }, 9),
        (r) => decodeProduceResponse(r, 9),
      );
      expect(res.responses[0]?.partitionResponses[0]?.errorCode).toBe(0);
    }
    conn.close();
    const id = await topicId(topic);
    const log = await PartitionLog.open({ dir: join(work, `${topic}-0`), topicId: id, config: logConfig() });
    logs.push(log);
    const m = mirrorInto(new Map([[0, log]]));
    m.fetcher.addPartitions([{ topic, topicId: id, partition: 0 }]);
    await waitFor('all codecs', () => log.logEndOffset === 100);
    await m.fetcher.close();
    m.client.close();
    expect(segmentBytes(join(work, `${topic}-0`)).equals(segmentBytes(join(node.dataDir, `${topic}-0`)))).toBe(true);
    expect(m.fetcher.stats.recordsDecoded).toBe(0);
    expect(m.failed).toEqual([]);
  });

  it('mirrors 200 partitions at once and survives a source restart with no gap and no duplicate', async () => {
    const topic = 'wide';
    const n = 200;
    const kafka = client();
    await createTopic(kafka, topic, n);
    const producer = kafka.producer({ allowAutoTopicCreation: false });
    await producer.connect();
    const send = async (round: number) => {
      await producer.send({ topic, acks: -1, messages: Array.from({ length: n }, (_, p) => ({ partition: p, value: `r${round}-p${p}` })) });
    };
    await send(0);
    await send(1);
    const id = await topicId(topic);
    const parts = await openLogs(topic, id, n);
    const m = mirrorInto(parts);
    const tps: MirrorTopicPartition[] = [...parts.keys()].map((partition) => ({ topic, topicId: id, partition }));
    m.fetcher.addPartitions(tps);
    await waitFor('first rounds', () => [...parts.values()].every((l) => l.logEndOffset === 2));
    await producer.disconnect();
    node = await node.restart();
    const p2 = client().producer({ allowAutoTopicCreation: false });
    await p2.connect();
    await p2.send({ topic, acks: -1, messages: Array.from({ length: n }, (_, p) => ({ partition: p, value: `r2-p${p}` })) });
    await p2.disconnect();
    await waitFor('after restart', () => [...parts.values()].every((l) => l.logEndOffset === 3));
    await m.fetcher.close();
    m.client.close();
    for (const p of [0, 57, 199]) {
      expect(segmentBytes(join(work, `${topic}-${p}`)).equals(segmentBytes(join(node.dataDir, `${topic}-${p}`))), `partition ${p}`).toBe(true);
    }
    expect(m.failed).toEqual([]);
  });

  it('with mirror.num.replica.fetchers=3, fetches while earlier answers are still being appended, and copies every byte', async () => {
    const topic = 'pipelined';
    const n = 8;
    const kafka = client();
    await createTopic(kafka, topic, n);
    const producer = kafka.producer({ allowAutoTopicCreation: false });
    await producer.connect();
    const value = Buffer.alloc(1000, 0x6d);
    for (let round = 0; round < 40; round++) {
      await producer.send({ topic, acks: 1, messages: Array.from({ length: 200 }, (_, i) => ({ partition: (round + i) % n, value })) });
    }
    await producer.disconnect();
    const id = await topicId(topic);
    const parts = await openLogs(topic, id, n);
    // Small partition and response limits make many answers, so appends and fetches can overlap.
    const m = mirrorInto(parts, 3);
    Object.assign(m.fetcher.config, { partitionMaxBytes: 64 * 1024, maxBytes: 256 * 1024 });
    // A spy on the real logs: counts Fetches sent while an append was being written.
    let overlapped = 0;
    for (const log of parts.values()) {
      const append = log.appendAsMirror.bind(log);
      log.appendAsMirror = async (records, opts) => {
        const before = m.fetcher.stats.fetches;
        const res = await append(records, opts);
        if (m.fetcher.stats.fetches > before) overlapped++;
        return res;
      };
    }
    m.fetcher.addPartitions([...parts.keys()].map((partition) => ({ topic, topicId: id, partition })));
    await waitFor('all copied', () => [...parts.values()].reduce((s, l) => s + l.logEndOffset, 0) === 40 * 200, 60_000);
    await m.fetcher.close();
    m.client.close();
    for (let p = 0; p < n; p++) {
      expect(segmentBytes(join(work, `${topic}-${p}`)).equals(segmentBytes(join(node.dataDir, `${topic}-${p}`))), `partition ${p}`).toBe(true);
    }
    expect(overlapped).toBeGreaterThan(0);
    expect(m.fetcher.stats.recordsDecoded).toBe(0);
    expect(m.failed).toEqual([]);
  });

  it('with mirror.num.replica.fetchers=2, a record for one loop is not held behind the other loop\'s long poll', async () => {
    // Each loop has a connection of its own to the source broker, as each of Kafka's fetcher
    // threads does: a broker answers one connection's requests in order, so on a shared one an
    // answer with data waits until the other loop's idle long poll (maxWaitMs) runs out.
    const topic = 'lanes';
    const kafka = client();
    await createTopic(kafka, topic, 2);
    const id = await topicId(topic);
    const parts = await openLogs(topic, id, 2);
    // Partitions 0 and 1 of one topic go to different loops (Kafka's getFetcherId).
    expect(fetcherIdOf({ topic, topicId: id, partition: 0 }, 2)).not.toBe(fetcherIdOf({ topic, topicId: id, partition: 1 }, 2));
    const maxWaitMs = 10_000;
    const m = mirrorInto(parts, 2);
    Object.assign(m.fetcher.config, { maxWaitMs });
    m.fetcher.addPartitions([0, 1].map((partition) => ({ topic, topicId: id, partition })));
    const producer = kafka.producer({ allowAutoTopicCreation: false });
    await producer.connect();
    const log0 = parts.get(0)!;
    const took: number[] = [];
    try {
      await waitFor('both loops long-polling', () => m.fetcher.stats.fetches >= 2);
      for (let round = 1; round <= 4; round++) {
        await producer.send({ topic, acks: 1, messages: [{ partition: 0, value: `r${round}` }] });
        const sent = Date.now();
        await waitFor(`round ${round} copied`, () => log0.logEndOffset === round, 2 * maxWaitMs);
        took.push(Date.now() - sent);
      }
    } finally {
      await producer.disconnect();
      await m.fetcher.close();
      m.client.close();
    }
    // Without a connection per loop, a round waits for what is left of the other loop's poll
    // (0 to 10 s); with one, the copy follows the write at once.
    expect(Math.max(...took), `copy times ${took.join(', ')} ms`).toBeLessThan(maxWaitMs / 4);
    expect(m.failed).toEqual([]);
  }, 120_000);

  it('refuses a batch corrupted in the source segment file: nothing appended, the partition fails with CORRUPT_MESSAGE', async () => {
    const topic = 'corrupt';
    const kafka = client();
    await createTopic(kafka, topic, 1);
    const producer = kafka.producer({ allowAutoTopicCreation: false });
    await producer.connect();
    await producer.send({ topic, acks: -1, messages: Array.from({ length: 5 }, (_, i) => ({ partition: 0, value: `first-${i}` })) });
    await producer.send({ topic, acks: -1, messages: Array.from({ length: 3 }, (_, i) => ({ partition: 0, value: `second-${i}` })) });
    await producer.disconnect();
    // Flip one bit in the last byte of the second batch (its last record's value), in place in
    // the source's segment file: the source serves it as it is, as Kafka would.
    const srcDir = join(node.dataDir, `${topic}-0`);
    const segment = join(srcDir, readdirSync(srcDir).filter((f) => f.endsWith('.log')).sort()[0]!);
    const bytes = readFileSync(segment);
    const firstSize = bytes.readInt32BE(8) + 12;
    const secondEnd = firstSize + bytes.readInt32BE(firstSize + 8) + 12;
    expect(bytes.readBigInt64BE(firstSize)).toBe(5n);
    const fd = openSync(segment, 'r+');
    writeSync(fd, Buffer.from([bytes[secondEnd - 1]! ^ 0x01]), 0, 1, secondEnd - 1);
    closeSync(fd);
    const id = await topicId(topic);
    const log = await PartitionLog.open({ dir: join(work, `${topic}-0`), topicId: id, config: logConfig() });
    logs.push(log);
    const m = mirrorInto(new Map([[0, log]]));
    m.fetcher.addPartitions([{ topic, topicId: id, partition: 0 }]);
    await waitFor('the partition failed', () => m.failed.length > 0);
    await m.fetcher.close();
    m.client.close();
    expect(m.failed).toHaveLength(1);
    expect(m.failed[0]).toMatch(/^0: corrupt-0: record batch at base offset 5 fails its CRC-32C check \(stored 0x[0-9a-f]{8}, computed 0x[0-9a-f]{8}\)$/);
    expect(m.errors).toEqual([{ code: ErrorCode.CORRUPT_MESSAGE, nonRetryable: false }]);
    expect(m.fetcher.has({ topic, topicId: id, partition: 0 })).toBe(false);
    // Both batches came in one response, which is refused whole (UnifiedLog.appendAsFollower).
    expect(log.logEndOffset).toBe(0);
  });
});
