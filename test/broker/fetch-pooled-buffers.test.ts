/**
 * The fetch path reads records into pooled buffers and reuses one only after the socket has sent
 * it (src/storage/read-buffer-pool.ts). A consumer that stops reading leaves most of a large
 * response waiting in the broker's socket buffers; other consumers fetching meanwhile must get
 * fresh buffers, never that one, or the stalled consumer would see other partitions' bytes when
 * it reads again. Real node, kafkajs producer, raw Fetch v11 on loopback.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Kafka, logLevel, type Producer } from 'kafkajs';
import { encodeFetchRequest } from '../../src/protocol/generated/messages/fetch-request.js';
import { decodeFetchResponse } from '../../src/protocol/generated/messages/fetch-response.js';
import { Reader } from '../../src/protocol/reader.js';
import { iterateBatches } from '../../src/protocol/record-batch.js';
import { decodeRecords } from '../../src/protocol/records.js';
import { startNode, type RunningNode } from '../helpers/node.js';
import { WireClient } from './wire.js';

const PARTITIONS = 4;
const RECORD_BYTES = 64 * 1024;
/** 3 MiB per partition: a 12 MiB response, far more than loopback's socket buffers hold unread. */
const RECORDS_PER_PARTITION = 48;
const PART_MAX = 4 << 20;

let node: RunningNode;
let producer: Producer;

/** The value of record `i` of `partition` of `topic`: its identity, then a fill byte of it. */
function valueOf(topic: string, partition: number, i: number): Buffer {
  const v = Buffer.alloc(RECORD_BYTES, (topic.length * 31 + partition * 7 + i) & 0xff);
  v.write(`${topic}/${partition}/${i}`, 0);
  return v;
}

async function fill(topic: string): Promise<void> {
  for (let p = 0; p < PARTITIONS; p++) {
    // 12 records (768 KiB) per request, below message.max.bytes.
    for (let i = 0; i < RECORDS_PER_PARTITION; i += 12) {
      const messages = Array.from({ length: 12 }, (_, k) => ({ partition: p, value: valueOf(topic, p, i + k) }));
      await producer.send({ topic, acks: 1, messages });
    }
  }
}

function fetchFrame(c: WireClient, topic: string): Buffer {
  const partitions = Array.from({ length: PARTITIONS }, (_, p) => ({ partition: p, fetchOffset: 0n, partitionMaxBytes: PART_MAX }));
  return c.frame(1, 11, (w) => encodeFetchRequest(w, { replicaId: -1, maxWaitMs: 0, minBytes: 0, maxBytes: 64 << 20, topics: [{ topic, partitions }] }, 11));
}

/** Every batch intact (CRC-32C) and every record the one produced at its offset. */
function expectWhole(body: Buffer, topic: string): void {
  const fr = decodeFetchResponse(new Reader(body), 11);
  const parts = fr.responses[0]!.partitions;
  expect(parts.map((p) => p.errorCode)).toEqual(Array(PARTITIONS).fill(0));
  for (const part of parts) {
    let n = 0;
    for (const batch of iterateBatches(part.records!)) {
      expect(batch.isValid()).toBe(true);
      for (const r of decodeRecords(batch)) {
        expect(r.offset).toBe(n);
        expect(r.value!.equals(valueOf(topic, part.partitionIndex, n))).toBe(true);
        n++;
      }
    }
    expect(n).toBe(RECORDS_PER_PARTITION);
  }
}

beforeAll(async () => {
  node = await startNode({ overrides: { 'num.partitions': PARTITIONS } });
  const kafka = new Kafka({ clientId: 'pool-test', brokers: [node.bootstrap], logLevel: logLevel.NOTHING });
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({ topics: ['stalled', 'busy'].map((topic) => ({ topic, numPartitions: PARTITIONS })) });
  await admin.disconnect();
  producer = kafka.producer({ allowAutoTopicCreation: false });
  await producer.connect();
  await fill('stalled');
  await fill('busy');
}, 120_000);

afterAll(async () => {
  await producer?.disconnect();
  await node?.destroy();
});

describe('fetch responses from pooled buffers', () => {
  it('gives a consumer that stopped reading its own bytes, whatever other consumers fetch meanwhile', async () => {
    const stalled = await WireClient.connect(node.port);
    const busy = await WireClient.connect(node.port);
    try {
      stalled.socket.pause();
      stalled.write(fetchFrame(stalled, 'stalled'));
      // Let the broker read, answer and start writing the stalled response before the others.
      await new Promise((r) => setTimeout(r, 500));
      for (let i = 0; i < 6; i++) {
        busy.write(fetchFrame(busy, 'busy'));
        expectWhole((await busy.next(30_000)).body, 'busy');
      }
      stalled.socket.resume();
      expectWhole((await stalled.next(30_000)).body, 'stalled');
      // The stalled response's buffer is back in the pool now; the next ones are whole too.
      for (const [c, topic] of [[stalled, 'stalled'], [busy, 'busy']] as const) {
        c.write(fetchFrame(c, topic));
        expectWhole((await c.next(30_000)).body, topic);
      }
    } finally {
      stalled.close();
      busy.close();
    }
  }, 90_000);
});
