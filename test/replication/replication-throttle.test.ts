/**
 * Reassignment throttles on a three-node cluster (real etcd, real `fjord start` processes), set
 * the way `kafka-reassign-partitions --execute --throttle` sets them: the per-node broker keys
 * `leader.replication.throttled.rate` / `follower.replication.throttled.rate` and the topic keys
 * `leader.replication.throttled.replicas` (the current replicas) /
 * `follower.replication.throttled.replicas` (the moving ones). A replica added to a partition
 * copies the log at about the rate, whether the leader or the follower holds it back; clearing
 * the throttle mid-copy (as `--verify` does) lets the rest run free; a replica in the ISR is
 * never held back. Last, Apache Kafka's own `kafka-reassign-partitions --execute --throttle`
 * and `--verify` against the cluster: the copy runs at about the rate, and once `--verify` has
 * cleared the throttle the next reassignment runs free.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import kafkajs from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Apis, type ApiSpec } from '../../src/client/apis.js';
import { KafkaClient } from '../../src/client/kafka-client.js';
import { ErrorCode } from '../../src/protocol/generated/errors.js';
import { encodeAlterPartitionReassignmentsRequest, type AlterPartitionReassignmentsRequestInput } from '../../src/protocol/generated/messages/alter-partition-reassignments-request.js';
import { decodeAlterPartitionReassignmentsResponse, type AlterPartitionReassignmentsResponse } from '../../src/protocol/generated/messages/alter-partition-reassignments-response.js';
import { eventually, startCluster, type RunningCluster } from '../helpers/cluster.js';
import { waitFor } from '../helpers/wait.js';
import { javaTool, mustSucceed } from '../interop/lib/java.js';

const { Kafka, logLevel } = kafkajs;
const AlterReassignments: ApiSpec<AlterPartitionReassignmentsRequestInput, AlterPartitionReassignmentsResponse> = {
  apiKey: 45,
  versions: [0, 0],
  encode: encodeAlterPartitionReassignmentsRequest,
  decode: decodeAlterPartitionReassignmentsResponse,
};
const TOPIC_RESOURCE = 2;
const BROKER_RESOURCE = 4;
const SET = 0;
const DELETE = 1;
const RATE = 512 * 1024;
/** About 3 MB per topic: ~6 s at the rate. */
const RECORDS = 384;
const RECORD_BYTES = 8 * 1024;

let cluster: RunningCluster;
let dir: string;
const REASSIGN = 'org.apache.kafka.tools.reassign.ReassignPartitionsCommand';

async function on<T>(nodeId: number, fn: (c: KafkaClient) => Promise<T>): Promise<T> {
  const c = new KafkaClient({ bootstrapServers: [cluster.node(nodeId).bootstrap], clientId: `throttle-${nodeId}` });
  try {
    return await fn(c);
  } finally {
    c.close();
  }
}

async function alterConfigs(resourceType: number, resourceName: string, configs: Record<string, string | null>): Promise<void> {
  // A node's own broker configs are altered on that node, as Kafka's admin client sends them.
  const r = await on(resourceType === BROKER_RESOURCE && resourceName !== '' ? Number(resourceName) : 1, (c) =>
    c.send(Apis.IncrementalAlterConfigs, {
      resources: [{ resourceType, resourceName, configs: Object.entries(configs).map(([name, value]) => ({ name, configOperation: value === null ? DELETE : SET, value })) }],
      validateOnly: false,
    }),
  );
  expect(r.responses.map((x) => x.errorCode)).toEqual([ErrorCode.NONE]);
}

/** A one-partition topic on node 1 only, filled with about 3 MB; resolves to node 1's log bytes. */
async function filledTopic(name: string): Promise<number> {
  const r = await on(1, (c) =>
    c.send(Apis.CreateTopics, { topics: [{ name, numPartitions: -1, replicationFactor: -1, assignments: [{ partitionIndex: 0, brokerIds: [1] }], configs: [] }], timeoutMs: 10_000, validateOnly: false }),
  );
  expect(r.topics[0]!.errorCode).toBe(ErrorCode.NONE);
  const producer = new Kafka({ clientId: 'throttle-fill', brokers: [cluster.node(1).bootstrap], logLevel: logLevel.NOTHING }).producer();
  await producer.connect();
  try {
    for (let i = 0; i < RECORDS; i += 32) {
      await producer.send({ topic: name, acks: -1, messages: Array.from({ length: 32 }, () => ({ value: randomBytes(RECORD_BYTES) })) });
    }
  } finally {
    await producer.disconnect();
  }
  return logBytes(1, name);
}

function logBytes(nodeId: number, topic: string): number {
  const dir = join(cluster.node(nodeId).dataDir!, `${topic}-0`);
  try {
    return readdirSync(dir)
      .filter((f) => f.endsWith('.log'))
      .reduce((n, f) => n + statSync(join(dir, f)).size, 0);
  } catch {
    return 0;
  }
}

async function reassign(topic: string, replicas: number[]): Promise<void> {
  const r = await on(1, (c) => c.send(AlterReassignments, { timeoutMs: 10_000, topics: [{ name: topic, partitions: [{ partitionIndex: 0, replicas }] }] }));
  expect(r.responses[0]!.partitions[0]!.errorCode).toBe(ErrorCode.NONE);
}

/**
 * Bytes per second at which node `nodeId` copied `total` bytes of `topic`, from its first bytes
 * to the last (the first response is never held back). `midway` runs once a quarter is copied,
 * and the rate is then of what is copied after it.
 */
async function copyRate(nodeId: number, topic: string, total: number, midway?: () => Promise<void>): Promise<number> {
  let first: { t: number; bytes: number } | null = null;
  let cleared = false;
  await waitFor(
    `node ${nodeId} to copy ${topic}`,
    async () => {
      const bytes = logBytes(nodeId, topic);
      if (first === null && bytes > 0) first = { t: Date.now(), bytes };
      // A quarter in: most of the copy is left, so a fetch already waiting for the quota when
      // the throttle goes (up to a second) weighs little in the rate of the rest.
      if (!cleared && midway !== undefined && bytes >= total / 4) {
        cleared = true;
        await midway();
        first = { t: Date.now(), bytes: logBytes(nodeId, topic) };
      }
      return bytes >= total;
    },
    60_000,
    20,
  );
  const start = first as { t: number; bytes: number } | null;
  expect(start).not.toBeNull();
  // Everything was there at the first look: the copy took less than one poll, faster than this
  // can measure (an unthrottled move of a few MB on a fast machine), never a throttled one.
  if (start!.bytes >= total) return Number.POSITIVE_INFINITY;
  return ((total - start!.bytes) * 1000) / Math.max(1, Date.now() - start!.t);
}

const isrOf = async (topic: string): Promise<number[]> => {
  const m = await on(1, (c) => c.send(Apis.Metadata, { topics: [{ name: topic, topicId: '00000000-0000-0000-0000-000000000000' }], allowAutoTopicCreation: false, includeTopicAuthorizedOperations: false }));
  return [...(m.topics[0]?.partitions[0]?.isrNodes ?? [])].sort();
};

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'fjord-throttle-'));
  // Small follower fetches so the rate is measured over many of them.
  cluster = await startCluster({ nodes: 3, overrides: { 'auto.leader.rebalance.enable': false, 'replica.fetch.max.bytes': 256 * 1024 } });
}, 180_000);

afterAll(async () => {
  await cluster?.destroy();
  rmSync(dir, { recursive: true, force: true });
}, 60_000);

describe('replication throttles of a reassignment', () => {
  it('leader.replication.throttled.rate on the leader holds a new replica near the rate', async () => {
    const total = await filledTopic('thr-leader');
    await alterConfigs(BROKER_RESOURCE, '1', { 'leader.replication.throttled.rate': String(RATE) });
    await alterConfigs(TOPIC_RESOURCE, 'thr-leader', { 'leader.replication.throttled.replicas': '0:1' });
    await reassign('thr-leader', [1, 2]);
    const rate = await copyRate(2, 'thr-leader', total);
    console.log(`leader throttle ${RATE} B/s: copied ${total} bytes at ${Math.round(rate)} B/s (${(rate / RATE).toFixed(2)}x)`);
    expect(rate).toBeGreaterThan(RATE * 0.5);
    expect(rate).toBeLessThan(RATE * 1.5);
    await eventually('node 2 in the ISR', async () => ((await isrOf('thr-leader')).includes(2) ? true : null));
  });

  it('a replica in the ISR is never held back: acks=all writes pass the throttle at full speed', async () => {
    // thr-leader is still throttled at the leader, '*' this time: node 2 is in the ISR now.
    await alterConfigs(TOPIC_RESOURCE, 'thr-leader', { 'leader.replication.throttled.replicas': '*' });
    const before = logBytes(1, 'thr-leader');
    const started = Date.now();
    const producer = new Kafka({ clientId: 'throttle-isr', brokers: [cluster.node(1).bootstrap], logLevel: logLevel.NOTHING }).producer();
    await producer.connect();
    try {
      for (let i = 0; i < RECORDS; i += 32) {
        await producer.send({ topic: 'thr-leader', acks: -1, messages: Array.from({ length: 32 }, () => ({ value: randomBytes(RECORD_BYTES) })) });
      }
    } finally {
      await producer.disconnect();
    }
    const rate = ((logBytes(1, 'thr-leader') - before) * 1000) / Math.max(1, Date.now() - started);
    console.log(`acks=all through an ISR follower under a ${RATE} B/s leader throttle: ${Math.round(rate)} B/s`);
    expect(rate).toBeGreaterThan(RATE * 2);
    expect(await isrOf('thr-leader')).toEqual([1, 2]);
    await alterConfigs(TOPIC_RESOURCE, 'thr-leader', { 'leader.replication.throttled.replicas': null });
    await alterConfigs(BROKER_RESOURCE, '1', { 'leader.replication.throttled.rate': null });
  });

  it('follower.replication.throttled.rate on the new replica holds it near the rate', async () => {
    const total = await filledTopic('thr-follower');
    await alterConfigs(BROKER_RESOURCE, '3', { 'follower.replication.throttled.rate': String(RATE) });
    await alterConfigs(TOPIC_RESOURCE, 'thr-follower', { 'follower.replication.throttled.replicas': '0:3' });
    await reassign('thr-follower', [1, 3]);
    const rate = await copyRate(3, 'thr-follower', total);
    console.log(`follower throttle ${RATE} B/s: copied ${total} bytes at ${Math.round(rate)} B/s (${(rate / RATE).toFixed(2)}x)`);
    expect(rate).toBeGreaterThan(RATE * 0.5);
    expect(rate).toBeLessThan(RATE * 1.5);
    await alterConfigs(TOPIC_RESOURCE, 'thr-follower', { 'follower.replication.throttled.replicas': null });
    await alterConfigs(BROKER_RESOURCE, '3', { 'follower.replication.throttled.rate': null });
  });

  it('clearing the throttles mid-copy, as --verify does, lets the rest run free', async () => {
    const total = await filledTopic('thr-cleared');
    for (const id of ['1', '2']) await alterConfigs(BROKER_RESOURCE, id, { 'leader.replication.throttled.rate': String(RATE), 'follower.replication.throttled.rate': String(RATE) });
    await alterConfigs(TOPIC_RESOURCE, 'thr-cleared', { 'leader.replication.throttled.replicas': '0:1', 'follower.replication.throttled.replicas': '0:2' });
    await reassign('thr-cleared', [1, 2]);
    const rate = await copyRate(2, 'thr-cleared', total, async () => {
      for (const id of ['1', '2']) await alterConfigs(BROKER_RESOURCE, id, { 'leader.replication.throttled.rate': null, 'follower.replication.throttled.rate': null });
      await alterConfigs(TOPIC_RESOURCE, 'thr-cleared', { 'leader.replication.throttled.replicas': null, 'follower.replication.throttled.replicas': null });
    });
    console.log(`after clearing a ${RATE} B/s throttle: the rest copied at ${Math.round(rate)} B/s`);
    // Well above the rate even counting a fetch already waiting for the quota when it was cleared.
    expect(rate).toBeGreaterThan(RATE * 2);
  });

  it('kafka-reassign-partitions --throttle copies at about the rate; after --verify clears it, the next move runs free', async () => {
    const total = await filledTopic('thr-tool');
    const tool = async (args: string[]): Promise<string> => {
      const r = mustSucceed(`kafka-reassign-partitions ${args.join(' ')}`, await javaTool(REASSIGN, ['--bootstrap-server', cluster.bootstrap.join(','), ...args]));
      return r.stdout + r.stderr;
    };
    const plan = (name: string, replicas: number[]): string => {
      const file = join(dir, name);
      writeFileSync(file, JSON.stringify({ version: 1, partitions: [{ topic: 'thr-tool', partition: 0, replicas }] }));
      return file;
    };
    const throttled = plan('throttled.json', [1, 3]);
    expect(await tool(['--execute', '--reassignment-json-file', throttled, '--throttle', String(RATE)])).toContain(`The inter-broker throttle limit was set to ${RATE} B/s`);
    const rate = await copyRate(3, 'thr-tool', total);
    console.log(`kafka-reassign-partitions --throttle ${RATE}: copied ${total} bytes at ${Math.round(rate)} B/s (${(rate / RATE).toFixed(2)}x)`);
    expect(rate).toBeGreaterThan(RATE * 0.5);
    expect(rate).toBeLessThan(RATE * 1.5);
    await eventually('--verify to complete and clear the throttles', async () => {
      const out = await tool(['--verify', '--reassignment-json-file', throttled]);
      return out.includes('Reassignment of partition thr-tool-0 is completed.') && out.includes('Clearing topic-level throttles on topic thr-tool') ? true : null;
    }, 60_000);

    await tool(['--execute', '--reassignment-json-file', plan('free.json', [1, 3, 2])]);
    const free = await copyRate(2, 'thr-tool', total);
    console.log(`the next reassignment, after --verify: copied at ${Math.round(free)} B/s`);
    expect(free).toBeGreaterThan(RATE * 3);
  }, 120_000);
});
