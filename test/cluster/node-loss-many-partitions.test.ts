/**
 * A node leading a few hundred partitions is SIGKILLed on a three-node cluster: every one of its
 * partitions gets a leader among the other two and takes an acks=all write. The controller's
 * leadership changes for them do not fit one etcd transaction (128 operations at most by default),
 * so they are written in several batches.
 */
import { Kafka, logLevel } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KafkaClient } from '../../src/client/kafka-client.js';
import { eventually, startCluster, type RunningCluster } from '../helpers/cluster.js';

const TOPICS = Array.from({ length: 12 }, (_, i) => `wide-${i}`);
const PARTITIONS = 50;

let cluster: RunningCluster;
const closers: (() => void)[] = [];

function client(bootstrap: string[]): KafkaClient {
  const c = new KafkaClient({ bootstrapServers: bootstrap, requestTimeoutMs: 15_000 });
  closers.push(() => c.close());
  return c;
}

/** Leader of every partition, by "topic-partition". */
async function leaders(bootstrap: string[]): Promise<Map<string, number>> {
  const md = await client(bootstrap).metadata(TOPICS);
  return new Map(md.topics.flatMap((t) => t.partitions.map((p) => [`${t.name}-${p.partitionIndex}`, p.leaderId] as const)));
}

beforeAll(async () => {
  cluster = await startCluster({ nodes: 3, overrides: { 'default.replication.factor': 3, 'min.insync.replicas': 2, 'auto.leader.rebalance.enable': false } });
  const a = new Kafka({ clientId: 'node-loss-admin', brokers: cluster.bootstrap, logLevel: logLevel.NOTHING }).admin();
  await a.connect();
  await a.createTopics({ topics: TOPICS.map((topic) => ({ topic, numPartitions: PARTITIONS })), waitForLeaders: true });
  await a.disconnect();
}, 120_000);

afterAll(async () => {
  for (const c of closers) c();
  await cluster?.destroy();
});

describe('losing a node that leads hundreds of partitions', () => {
  it('every partition it led gets a leader on a live node and takes an acks=all write', async () => {
    const before = await leaders(cluster.bootstrap);
    const counts = [1, 2, 3].map((id) => [...before.values()].filter((l) => l === id).length);
    const victim = counts.indexOf(Math.max(...counts)) + 1;
    expect(counts[victim - 1]).toBeGreaterThan(127);
    await cluster.node(victim).kill();
    const live = cluster.nodes.filter((n) => n.nodeId !== victim).map((n) => n.bootstrap);
    await eventually(
      'every partition led by a live node',
      async () => [...(await leaders(live)).values()].every((l) => l > 0 && l !== victim),
      30_000,
    );
    const producer = new Kafka({ clientId: 'node-loss-producer', brokers: live, logLevel: logLevel.NOTHING }).producer({ allowAutoTopicCreation: false });
    await producer.connect();
    try {
      const acks = await producer.sendBatch({ acks: -1, topicMessages: TOPICS.map((topic) => ({ topic, messages: Array.from({ length: PARTITIONS }, (_, partition) => ({ partition, value: 'after-loss' })) })) });
      expect(acks.filter((r) => r.errorCode === 0)).toHaveLength(TOPICS.length * PARTITIONS);
    } finally {
      await producer.disconnect();
    }
  }, 90_000);
});
