/**
 * Replication on a real three-node cluster (one etcd, three `fjord start` processes): RF 3 with
 * min.insync.replicas=2. acks=all is acknowledged only once the ISR has the write and every
 * replica's segment file ends up byte-identical; a consumer never reads above the high
 * watermark, and acks=all waiting for a stopped follower ends REQUEST_TIMED_OUT at the request's
 * timeout; an idempotent acks=all producer keeps writing across a SIGKILL of the partition
 * leader and every acknowledged record is there exactly once; the old leader restarted rejoins
 * as a follower and its log equals the leader's; with two of three nodes down acks=all is
 * refused with NOT_ENOUGH_REPLICAS.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CompressionTypes, Kafka, logLevel, type Admin } from 'kafkajs';
import { KafkaClient } from '../../src/client/kafka-client.js';
import { Apis } from '../../src/client/apis.js';
import type { ApiSpec } from '../../src/client/apis.js';
import { ApiKey } from '../../src/protocol/generated/api-table.js';
import { ErrorCode } from '../../src/protocol/generated/errors.js';
import { encodeProduceRequest, type ProduceRequestInput } from '../../src/protocol/generated/messages/produce-request.js';
import { decodeProduceResponse, type ProduceResponse } from '../../src/protocol/generated/messages/produce-response.js';
import { buildRecordBatch } from '../../src/protocol/records.js';
import { eventually, startCluster, type RunningCluster } from '../helpers/cluster.js';

const REPLICA_FETCH_WAIT_MS = 200;
const PRODUCE: ApiSpec<ProduceRequestInput, ProduceResponse> = { apiKey: ApiKey.Produce, versions: [9, 9], encode: encodeProduceRequest, decode: decodeProduceResponse };

let cluster: RunningCluster;
let admin: Admin;
const clients: KafkaClient[] = [];

const kafka = (): Kafka =>
  new Kafka({
    clientId: 'replication-test',
    brokers: cluster.nodes.filter((n) => n.running !== null).map((n) => n.bootstrap),
    logLevel: logLevel.NOTHING,
    retry: { retries: 30, initialRetryTime: 100, maxRetryTime: 1000 },
  });

/** The partition as a live node's Metadata reports it. */
/** The partition as one node's Metadata answer has it (undefined when it does not answer). */
async function partitionAt(bootstrap: string, topic: string): Promise<{ leader: number } | undefined> {
  const c = new KafkaClient({ bootstrapServers: [bootstrap], clientId: 'replication-test-md', requestTimeoutMs: 3000 });
  try {
    const md = await c.send(Apis.Metadata, { topics: [{ name: topic, topicId: '00000000-0000-0000-0000-000000000000' }], allowAutoTopicCreation: false, includeTopicAuthorizedOperations: false });
    const p = md.topics[0]?.partitions[0];
    return p === undefined ? undefined : { leader: p.leaderId };
  } catch {
    return undefined;
  } finally {
    c.close();
  }
}

async function partitionOf(topic: string): Promise<{ leader: number; leaderEpoch: number; isr: number[] }> {
  for (const n of cluster.nodes) {
    if (n.running === null) continue;
    const c = new KafkaClient({ bootstrapServers: [n.bootstrap], clientId: 'replication-test-md', requestTimeoutMs: 3000 });
    try {
      const md = await c.send(Apis.Metadata, { topics: [{ name: topic, topicId: '00000000-0000-0000-0000-000000000000' }], allowAutoTopicCreation: false, includeTopicAuthorizedOperations: false });
      const p = md.topics[0]?.partitions[0];
      if (p) return { leader: p.leaderId, leaderEpoch: p.leaderEpoch, isr: [...p.isrNodes].sort() };
    } catch {
      // next node
    } finally {
      c.close();
    }
  }
  throw new Error('no live node answered Metadata');
}

/** Concatenated .log segment files of a node's replica of `topic`-0. */
function segmentBytes(nodeId: number, topic: string): Buffer {
  const dir = join(cluster.node(nodeId).dataDir!, `${topic}-0`);
  const files = readdirSync(dir)
    .filter((f) => f.endsWith('.log'))
    .sort();
  return Buffer.concat(files.map((f) => readFileSync(join(dir, f))));
}

async function replicasIdentical(topic: string, nodes: readonly number[]): Promise<Buffer> {
  return eventually(`replicas ${nodes.join(',')} of ${topic} to be byte-identical`, async () => {
    const [first, ...rest] = nodes.map((id) => segmentBytes(id, topic));
    return first!.length > 0 && rest.every((b) => b.equals(first!)) ? first! : null;
  });
}

async function createTopic(topic: string): Promise<void> {
  await admin.createTopics({ topics: [{ topic, numPartitions: 1, replicationFactor: 3, configEntries: [{ name: 'min.insync.replicas', value: '2' }] }], waitForLeaders: true });
  await eventually(`${topic} to have a leader and a full ISR`, async () => {
    const p = await partitionOf(topic);
    return p.leader >= 0 && p.isr.length === 3;
  });
}

/** Every value a consumer reads from the start until `count` values came. */
async function consumeAll(topic: string, count: number): Promise<string[]> {
  const consumer = kafka().consumer({ groupId: `check-${topic}-${Date.now()}`, maxWaitTimeInMs: 200 });
  const seen: string[] = [];
  await consumer.connect();
  try {
    await consumer.subscribe({ topic, fromBeginning: true });
    await consumer.run({ eachMessage: async ({ message }) => void seen.push(message.value!.toString()) });
    await eventually(`${count} records read back from ${topic}`, async () => seen.length >= count, 60_000);
    // One more poll round, so a duplicate arriving after the count was reached is seen too.
    await new Promise((r) => setTimeout(r, 500));
  } finally {
    await consumer.disconnect();
  }
  return seen;
}

beforeAll(async () => {
  cluster = await startCluster({
    nodes: 3,
    overrides: { 'replica.lag.time.max.ms': 4000, 'replica.fetch.backoff.ms': 200, 'replica.fetch.wait.max.ms': REPLICA_FETCH_WAIT_MS, 'default.replication.factor': 3 },
  });
  admin = kafka().admin();
  await admin.connect();
}, 240_000);

afterAll(async () => {
  await admin?.disconnect().catch(() => undefined);
  for (const c of clients) c.close();
  await cluster?.destroy();
}, 60_000);

describe('replication with RF 3 and min.insync.replicas=2', () => {
  it('acknowledges acks=all writes once the ISR has them, and every replica is byte-identical', async () => {
    await createTopic('steady');
    const producer = kafka().producer();
    await producer.connect();
    for (let i = 0; i < 20; i++) {
      const res = await producer.send({ topic: 'steady', acks: -1, compression: i % 2 ? CompressionTypes.GZIP : CompressionTypes.None, messages: Array.from({ length: 10 }, (_, j) => ({ key: `k${j}`, value: `v-${i}-${j}` })) });
      expect(res[0]!.errorCode).toBe(ErrorCode.NONE);
    }
    await producer.disconnect();
    const bytes = await replicasIdentical('steady', [1, 2, 3]);
    expect(bytes.length).toBeGreaterThan(0);
    expect(await consumeAll('steady', 200)).toHaveLength(200);
  }, 120_000);

  it('lets no consumer read above the high watermark while an ISR follower lags', async () => {
    await createTopic('hw');
    const p = await partitionOf('hw');
    const leader = cluster.node(p.leader);
    const follower = cluster.nodes.find((n) => n.nodeId !== p.leader)!;
    const c = new KafkaClient({ bootstrapServers: [leader.bootstrap], clientId: 'hw-reader' });
    clients.push(c);
    const producer = kafka().producer();
    await producer.connect();
    await producer.send({ topic: 'hw', acks: -1, messages: [{ value: 'committed' }] });
    follower.pause();
    try {
      // acks=1: the leader has it at once, the stopped follower in the ISR does not.
      await producer.send({ topic: 'hw', acks: 1, messages: [{ value: 'not yet committed' }] });
      const md = await c.metadata(['hw']);
      const topicId = md.topics[0]!.topicId;
      const res = await c.send(Apis.Fetch, {
        replicaId: -1,
        maxWaitMs: 300,
        minBytes: 1,
        maxBytes: 1 << 20,
        isolationLevel: 0,
        sessionId: 0,
        sessionEpoch: -1,
        topics: [{ topicId, partitions: [{ partition: 0, currentLeaderEpoch: -1, fetchOffset: 1n, partitionMaxBytes: 1 << 20 }] }],
        forgottenTopicsData: [],
      });
      const part = res.responses[0]!.partitions[0]!;
      expect(part.errorCode).toBe(ErrorCode.NONE);
      expect(part.highWatermark).toBe(1n);
      expect(part.records?.length ?? 0).toBe(0);
      const latest = await c.send(Apis.ListOffsets, { replicaId: -1, isolationLevel: 0, topics: [{ name: 'hw', partitions: [{ partitionIndex: 0, currentLeaderEpoch: -1, timestamp: -1n }] }] });
      expect(latest.topics[0]!.partitions[0]!.offset).toBe(1n);
      // acks=all waits for the stopped ISR follower until the request's timeout: REQUEST_TIMED_OUT
      // (Kafka's DelayedProduce expiring). The leader keeps the write all the same.
      const sentAt = Date.now();
      const timedOut = await c.send(PRODUCE, { transactionalId: null, acks: -1, timeoutMs: 500, topicData: [{ name: 'hw', partitionData: [{ index: 0, records: buildRecordBatch({ records: [{ value: Buffer.from('timed out') }] }) }] }] });
      expect(timedOut.responses[0]!.partitionResponses[0]!.errorCode).toBe(ErrorCode.REQUEST_TIMED_OUT);
      expect(Date.now() - sentAt).toBeGreaterThanOrEqual(450);
    } finally {
      follower.resume();
    }
    await producer.disconnect();
    // Back in step, the follower lets the high watermark pass the later records.
    expect(await consumeAll('hw', 3)).toEqual(['committed', 'not yet committed', 'timed out']);
  }, 120_000);

  it('keeps every acknowledged write exactly once across a SIGKILL of the leader; the old leader rejoins and converges', async () => {
    await createTopic('failover');
    const before = await partitionOf('failover');
    const producer = kafka().producer({ idempotent: true, maxInFlightRequests: 1 });
    await producer.connect();
    const acked: string[] = [];
    let killedAt = 0;
    let firstAfterKill = 0;
    for (let i = 0; i < 120; i++) {
      if (i === 40) {
        killedAt = Date.now();
        await cluster.node(before.leader).kill();
      }
      const value = `r-${i}`;
      await producer.send({ topic: 'failover', acks: -1, messages: [{ key: String(i % 7), value }] });
      if (killedAt > 0 && firstAfterKill === 0) firstAfterKill = Date.now();
      acked.push(value);
    }
    await producer.disconnect();
    const after = await partitionOf('failover');
    expect(after.leader).not.toBe(before.leader);
    expect(after.leaderEpoch).toBeGreaterThan(before.leaderEpoch);
    // A new leader took the writes within seconds (the session timeout is 3 s here).
    expect(firstAfterKill - killedAt).toBeLessThan(20_000);

    const seen = await consumeAll('failover', acked.length);
    expect(new Set(seen).size).toBe(seen.length);
    expect([...seen].sort()).toEqual([...acked].sort());

    // The old leader comes back as a follower and ends with the leader's log, byte for byte.
    await cluster.node(before.leader).start();
    await eventually('the old leader back in the ISR', async () => (await partitionOf('failover')).isr.length === 3, 60_000);
    await replicasIdentical('failover', [1, 2, 3]);
  }, 240_000);

  it('truncates what only a killed leader had when it rejoins, so every replica converges', async () => {
    await createTopic('diverge');
    const before = await partitionOf('diverge');
    const leader = cluster.node(before.leader);
    const followers = cluster.nodes.filter((n) => n.nodeId !== before.leader);
    const direct = new Kafka({ clientId: 'diverge', brokers: [leader.bootstrap], logLevel: logLevel.NOTHING, retry: { retries: 0 } }).producer();
    await direct.connect();
    // The topic's initial ISR is every replica, so a full ISR does not say that the leader has
    // taken the role yet; a write it answers NOT_LEADER_OR_FOLLOWER is not retried here.
    await eventually('the leader to lead at its own word', async () => (await partitionAt(leader.bootstrap, 'diverge'))?.leader === before.leader);
    await direct.send({ topic: 'diverge', acks: -1, messages: [{ value: 'committed' }] });
    // The followers stop; the leader alone takes two acks=1 writes nobody else gets, then dies.
    for (const f of followers) f.pause();
    // A follower Fetch already in flight would still be answered, with those writes, into the
    // stopped follower's socket, and appended when it resumes. Long polls end after
    // replica.fetch.wait.max.ms, so after a few of them no Fetch is left waiting at the leader.
    await new Promise((r) => setTimeout(r, 3 * REPLICA_FETCH_WAIT_MS));
    await direct.send({ topic: 'diverge', acks: 1, messages: [{ value: 'lost-1' }, { value: 'lost-2' }] });
    await direct.disconnect().catch(() => undefined);
    await leader.kill();
    for (const f of followers) f.resume();
    await eventually('a new leader', async () => {
      const p = await partitionOf('diverge');
      return p.leader >= 0 && p.leader !== before.leader;
    });
    const producer = kafka().producer();
    await producer.connect();
    await producer.send({ topic: 'diverge', acks: -1, messages: [{ value: 'after' }] });
    await producer.disconnect();
    // The old leader holds offsets 1-2 at the old epoch; the new leader wrote offset 1 at its own.
    await leader.start();
    await eventually('the old leader back in the ISR', async () => (await partitionOf('diverge')).isr.length === 3, 60_000);
    await replicasIdentical('diverge', [1, 2, 3]);
    expect(await consumeAll('diverge', 2)).toEqual(['committed', 'after']);
    expect(leader.logs()).toContain('follower truncating on diverging epoch');
  }, 180_000);

  it('refuses acks=all with NOT_ENOUGH_REPLICAS once two of three nodes are down', async () => {
    await createTopic('min-isr');
    const p = await partitionOf('min-isr');
    const others = cluster.nodes.filter((n) => n.nodeId !== p.leader);
    for (const n of others) await n.kill();
    await eventually('the ISR to shrink to the leader', async () => (await partitionOf('min-isr')).isr.length === 1, 60_000);
    const producer = new Kafka({ clientId: 'min-isr', brokers: [cluster.node(p.leader).bootstrap], logLevel: logLevel.NOTHING, retry: { retries: 0 } }).producer();
    await producer.connect();
    const err = await producer.send({ topic: 'min-isr', acks: -1, messages: [{ value: 'x' }] }).then(
      () => null,
      (e: unknown) => e as { type?: string; cause?: { type?: string } },
    );
    expect(err?.type ?? err?.cause?.type).toBe('NOT_ENOUGH_REPLICAS');
    // acks=1 still works: min.insync.replicas guards acks=all only.
    const ok = await producer.send({ topic: 'min-isr', acks: 1, messages: [{ value: 'y' }] });
    expect(ok[0]!.errorCode).toBe(ErrorCode.NONE);
    await producer.disconnect();
  }, 180_000);
});
