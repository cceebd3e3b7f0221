/**
 * Malformed-frame barrage: many connections send random bytes, random frames and mutated valid
 * requests while a kafkajs producer keeps producing with acks=all. The node must stay up, keep
 * serving, and every acknowledged record must be readable afterwards.
 */
import { connect } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { Kafka, logLevel } from 'kafkajs';
import { encodeMetadataRequest } from '../../src/protocol/generated/messages/metadata-request.js';
import { encodeProduceRequest } from '../../src/protocol/generated/messages/produce-request.js';
import { buildRecordBatch } from '../../src/protocol/records.js';
import { startNode, type RunningNode } from '../helpers/node.js';
import { WireClient } from './wire.js';

let node: RunningNode;

beforeAll(async () => {
  node = await startNode({ overrides: { 'socket.request.max.bytes': 1_000_000 } });
}, 180_000);
afterAll(async () => {
  await node?.destroy();
});

/** A small deterministic PRNG so a failure can be replayed. */
function prng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function hostilePayload(rand: () => number, templates: Buffer[]): Buffer {
  const kind = Math.floor(rand() * 4);
  if (kind === 0) {
    // Pure noise, any length.
    return Buffer.from(Array.from({ length: 1 + Math.floor(rand() * 300) }, () => Math.floor(rand() * 256)));
  }
  if (kind === 1) {
    // A plausible size prefix followed by noise.
    const len = Math.floor(rand() * 200);
    const b = Buffer.alloc(4 + len);
    b.writeInt32BE(len, 0);
    for (let i = 4; i < b.length; i++) b[i] = Math.floor(rand() * 256);
    return b;
  }
  // A valid request with a few bytes flipped (sizes, counts, versions, records).
  const t = Buffer.from(templates[Math.floor(rand() * templates.length)]!);
  const flips = 1 + Math.floor(rand() * 6);
  for (let i = 0; i < flips; i++) t[4 + Math.floor(rand() * (t.length - 4))] = Math.floor(rand() * 256);
  return t;
}

it('survives random bytes on many connections while serving a producer', async () => {
  const kafka = new Kafka({ brokers: [node.bootstrap], logLevel: logLevel.NOTHING, retry: { retries: 5, initialRetryTime: 100 } });
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({ topics: [{ topic: 'barrage', numPartitions: 3 }] });

  const probe = await WireClient.connect(node.port);
  const batch = buildRecordBatch({ records: [{ key: Buffer.from('x'), value: Buffer.from('hostile') }] });
  const templates = [
    probe.frame(3, 12, (w) => encodeMetadataRequest(w, { topics: [{ name: 'barrage' }], allowAutoTopicCreation: false }, 12)),
    probe.frame(3, 1, (w) => encodeMetadataRequest(w, { topics: null }, 1)),
    probe.frame(0, 9, (w) => encodeProduceRequest(w, { transactionalId: null, acks: 1, timeoutMs: 1000, topicData: [{ name: 'barrage', partitionData: [{ index: 0, records: batch }] }] }, 9)),
    probe.frame(0, 7, (w) => encodeProduceRequest(w, { transactionalId: null, acks: 1, timeoutMs: 1000, topicData: [{ name: 'barrage', partitionData: [{ index: 1, records: batch }] }] }, 7)),
    probe.frame(18, 3, (w) => w.uvarint(4).raw(Buffer.from('abc')).uvarint(2).raw(Buffer.from('1')).uvarint(0)),
  ];
  probe.close();

  const rand = prng(0xf10d);
  let stop = false;
  let hostileConnections = 0;
  const attacker = async (): Promise<void> => {
    while (!stop) {
      await new Promise<void>((resolve) => {
        const s = connect({ host: '127.0.0.1', port: node.port }, () => {
          hostileConnections++;
          for (let i = 0; i < 1 + Math.floor(rand() * 5); i++) s.write(hostilePayload(rand, templates));
          setTimeout(() => s.destroy(), Math.floor(rand() * 50));
        });
        s.on('error', () => undefined);
        s.on('close', () => resolve());
      });
    }
  };
  const attackers = Array.from({ length: 24 }, () => attacker());

  const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
  await producer.connect();
  const acked: string[] = [];
  for (let i = 0; i < 150; i++) {
    const value = `good-${i}`;
    await producer.send({ topic: 'barrage', acks: -1, messages: [{ key: `k${i % 7}`, value }] });
    acked.push(value);
  }
  stop = true;
  await Promise.all(attackers);
  await producer.disconnect();
  expect(hostileConnections).toBeGreaterThan(50);
  expect(node.process.exitCode).toBeNull();

  const consumer = kafka.consumer({ groupId: 'barrage-check', maxWaitTimeInMs: 200 });
  await consumer.connect();
  await consumer.subscribe({ topic: 'barrage', fromBeginning: true });
  const seen = new Set<string>();
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`saw ${seen.size} of ${acked.length}`)), 30_000);
    void consumer.run({
      eachMessage: async ({ message }) => {
        const v = message.value!.toString();
        if (v.startsWith('good-')) seen.add(v);
        if (acked.every((a) => seen.has(a))) {
          clearTimeout(timer);
          resolve();
        }
      },
    });
  });
  await consumer.disconnect();
  await admin.disconnect();
  expect(acked.every((a) => seen.has(a))).toBe(true);
  console.log(`barrage: ${hostileConnections} hostile connections while ${acked.length} records were acknowledged`);
  // Hostile input is answered with error codes or closed connections, never an internal error.
  expect(node.logs()).not.toContain('"level":"error"');
});
