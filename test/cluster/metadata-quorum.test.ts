/**
 * Three Fjord processes on one etcd: they form one cluster with one cluster id, every node lists
 * every live broker and the same active controller, a topic created through any node appears on
 * all of them with its replicas placed on distinct nodes, and a duplicate node.id is refused.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Kafka, logLevel } from 'kafkajs';
import { KafkaClient } from '../../src/client/kafka-client.js';
import { Apis } from '../../src/client/apis.js';
import { ErrorCode } from '../../src/protocol/generated/errors.js';
import type { MetadataResponse } from '../../src/protocol/generated/messages/metadata-response.js';
import { eventually, startCluster, type RunningCluster } from '../helpers/cluster.js';
import { startNode } from '../helpers/node.js';

let cluster: RunningCluster;
const clients: KafkaClient[] = [];

/** A client that talks to one node only (its bootstrap connection). */
function clientOf(nodeId: number): KafkaClient {
  const c = new KafkaClient({ bootstrapServers: [cluster.node(nodeId).bootstrap], clientId: `cluster-test-${nodeId}` });
  clients.push(c);
  return c;
}

async function metadataOn(nodeId: number, topics: string[] | null): Promise<MetadataResponse> {
  return clientOf(nodeId).send(Apis.Metadata, {
    topics: topics === null ? null : topics.map((name) => ({ name, topicId: '00000000-0000-0000-0000-000000000000' })),
    allowAutoTopicCreation: false,
    includeTopicAuthorizedOperations: false,
  });
}

beforeAll(async () => {
  cluster = await startCluster({ nodes: 3 });
}, 240_000);

afterAll(async () => {
  for (const c of clients) c.close();
  await cluster?.destroy();
}, 60_000);

describe('a three-node cluster on etcd', () => {
  it('every node lists all three brokers, one cluster id and the same active controller', async () => {
    const answers = await Promise.all([1, 2, 3].map((id) => eventually(`node ${id} to see 3 brokers`, async () => {
      const md = await metadataOn(id, []);
      return md.brokers.length === 3 ? md : null;
    })));
    for (const md of answers) {
      expect(md.brokers.map((b) => [b.nodeId, b.port]).sort()).toEqual(cluster.nodes.map((n) => [n.nodeId, n.port]).sort());
      expect(md.clusterId).toBe(answers[0]!.clusterId);
      expect(md.controllerId).toBe(answers[0]!.controllerId);
    }
    expect([1, 2, 3]).toContain(answers[0]!.controllerId);
  });

  it('a topic created on node 2 with RF 3 appears on nodes 1 and 3 with replicas on distinct nodes', async () => {
    const res = await clientOf(2).send(Apis.CreateTopics, {
      topics: [{ name: 'made-on-two', numPartitions: 4, replicationFactor: 3, assignments: [], configs: [] }],
      timeoutMs: 10_000,
      validateOnly: false,
    });
    expect(res.topics[0]).toMatchObject({ errorCode: ErrorCode.NONE, numPartitions: 4, replicationFactor: 3 });
    for (const id of [1, 3]) {
      const md = await eventually(`node ${id} to see made-on-two`, async () => {
        const m = await metadataOn(id, ['made-on-two']);
        return m.topics[0]?.errorCode === ErrorCode.NONE ? m : null;
      });
      const t = md.topics[0]!;
      expect(t.topicId).toBe(res.topics[0]!.topicId);
      expect(t.partitions).toHaveLength(4);
      for (const p of t.partitions) {
        expect(new Set(p.replicaNodes).size).toBe(3);
        expect(p.leaderId).toBe(p.replicaNodes[0]);
        expect([...p.isrNodes].sort()).toEqual([...p.replicaNodes].sort());
      }
      // Leadership is spread: the preferred leaders are not all one node.
      expect(new Set(t.partitions.map((p) => p.leaderId)).size).toBeGreaterThan(1);
    }
  });

  it('refuses a replication factor above the live broker count with Kafka\'s message', async () => {
    const res = await clientOf(3).send(Apis.CreateTopics, {
      topics: [{ name: 'too-many-replicas', numPartitions: 1, replicationFactor: 4, assignments: [], configs: [] }],
      timeoutMs: 10_000,
      validateOnly: false,
    });
    expect(res.topics[0]!.errorCode).toBe(ErrorCode.INVALID_REPLICATION_FACTOR);
    expect(res.topics[0]!.errorMessage).toBe('Unable to replicate the partition 4 time(s): The target replication factor of 4 cannot be reached because only 3 broker(s) are registered.');
  });

  it('concurrent creates through different nodes all land once (compare-and-swap on the last offset)', async () => {
    const names = [1, 2, 3].flatMap((id) => [0, 1].map((i) => ({ id, name: `race-${id}-${i}` })));
    const results = await Promise.all(
      names.map(({ id, name }) =>
        clientOf(id).send(Apis.CreateTopics, { topics: [{ name, numPartitions: 1, replicationFactor: 2, assignments: [], configs: [] }], timeoutMs: 10_000, validateOnly: false }),
      ),
    );
    for (const r of results) expect(r.topics[0]!.errorCode).toBe(ErrorCode.NONE);
    // The same name through two nodes at once: exactly one wins.
    const dup = await Promise.all([1, 3].map((id) => clientOf(id).send(Apis.CreateTopics, { topics: [{ name: 'same-name', numPartitions: 1, replicationFactor: 1, assignments: [], configs: [] }], timeoutMs: 10_000, validateOnly: false })));
    expect(dup.map((d) => d.topics[0]!.errorCode).sort()).toEqual([ErrorCode.NONE, ErrorCode.TOPIC_ALREADY_EXISTS].sort());
    const md = await eventually('node 2 to see every race topic', async () => {
      const m = await metadataOn(2, null);
      return names.every(({ name }) => m.topics.some((t) => t.name === name)) ? m : null;
    });
    expect(md.topics.filter((t) => t.name === 'same-name')).toHaveLength(1);
  });

  it('a real client (kafkajs) creates and lists topics through any node', async () => {
    const kafka = new Kafka({ clientId: 'cluster-kafkajs', brokers: [cluster.node(3).bootstrap], logLevel: logLevel.NOTHING });
    const admin = kafka.admin();
    await admin.connect();
    try {
      await admin.createTopics({ topics: [{ topic: 'kafkajs-made', numPartitions: 2, replicationFactor: 2 }], waitForLeaders: true });
      const meta = await admin.fetchTopicMetadata({ topics: ['kafkajs-made'] });
      expect(meta.topics[0]!.partitions).toHaveLength(2);
      for (const p of meta.topics[0]!.partitions) expect(p.replicas).toHaveLength(2);
    } finally {
      await admin.disconnect();
    }
  });

  it('a second process with a live node.id refuses to start', async () => {
    await expect(
      startNode({ overrides: { 'node.id': 2, 'metadata.etcd.endpoints': cluster.etcd.endpoint, 'broker.session.timeout.ms': 3000, 'broker.heartbeat.interval.ms': 500 } }),
    ).rejects.toThrow(/node.id 2 is already registered/);
  });
});
