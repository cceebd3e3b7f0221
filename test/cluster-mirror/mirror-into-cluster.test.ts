/**
 * KIP-1279 on a replicated destination: a Fjord source node mirrored into a three-node Fjord
 * cluster (one etcd, three `fjord start` processes, RF 3 for the mirror topic and for
 * `__mirror_state`). Each destination partition leader fetches its own partitions and keeps its
 * state in the `__mirror_state` partition's leader, which is on another node for some of them
 * (ReadMirrorStates / WriteMirrorStates over the wire). DescribeClusterMirrors merged by the
 * admin client shows every partition with its lag, from whichever broker leads it. A SIGKILLed
 * leader's partitions resume on the new leaders from the persisted state: every replica's
 * segment files end equal to the source's, every value once.
 */
import { readFileSync, readdirSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { Kafka, logLevel, type Producer } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MirrorAdmin, type PartitionMirrorDescription } from '../../src/admin/mirror-admin.js';
import { KafkaClient } from '../../src/client/kafka-client.js';
import { eventually, startCluster, type RunningCluster } from '../helpers/cluster.js';
import { startNode, type RunningNode } from '../helpers/node.js';

const FAST = { 'mirror.failed.retry.initial.backoff.ms': 200, 'mirror.failed.retry.max.backoff.ms': 1000, 'mirror.metadata.refresh.interval.ms': 1000 };
const TOPIC = 'orders';
const PARTITIONS = 3;
const MIRROR = 'dr';

let cluster: RunningCluster;
let source: RunningNode;
let sourceProducer: Producer;
const closers: (() => void)[] = [];

function admin(): MirrorAdmin {
  const a = new MirrorAdmin({ bootstrapServers: cluster.nodes.filter((n) => n.running !== null).map((n) => n.bootstrap), requestTimeoutMs: 5000 });
  closers.push(() => a.close());
  return a;
}

/** Leader node id of each partition of `topic`, as a live node's Metadata answers it. */
async function leaders(topic: string): Promise<number[]> {
  const live = cluster.nodes.find((n) => n.running !== null)!;
  const c = new KafkaClient({ bootstrapServers: [live.bootstrap], requestTimeoutMs: 5000 });
  try {
    const md = await c.metadata([topic]);
    const t = md.topics.find((x) => x.name === topic);
    return [...(t?.partitions ?? [])].sort((a, b) => a.partitionIndex - b.partitionIndex).map((p) => p.leaderId);
  } finally {
    c.close();
  }
}

function segments(dataDir: string, topic: string, partition: number): Buffer {
  const dir = join(dataDir, `${topic}-${partition}`);
  if (!existsSync(dir)) return Buffer.alloc(0);
  return Buffer.concat(readdirSync(dir).filter((f) => f.endsWith('.log')).sort().map((f) => readFileSync(join(dir, f))));
}

/** Every partition of the mirror as the admin's merged describe shows it. */
async function described(): Promise<readonly PartitionMirrorDescription[]> {
  const [m] = await admin().describeClusterMirrors([MIRROR]);
  return m?.partitions ?? [];
}

async function caughtUp(): Promise<readonly PartitionMirrorDescription[] | null> {
  const parts = (await described()).filter((p) => p.topic === TOPIC);
  return parts.length === PARTITIONS && parts.every((p) => p.state === 'MIRRORING' && p.lag === 0) ? parts : null;
}

/** Every live destination replica of every partition equals the source's log, byte for byte. */
function replicasEqualSource(): boolean {
  for (let p = 0; p < PARTITIONS; p++) {
    const want = segments(source.dataDir, TOPIC, p);
    for (const n of cluster.nodes) if (n.running !== null && !segments(n.dataDir!, TOPIC, p).equals(want)) return false;
  }
  return true;
}

async function produce(from: number, to: number): Promise<void> {
  for (let i = from; i < to; i += 50) {
    const n = Math.min(50, to - i);
    await sourceProducer.send({ topic: TOPIC, acks: -1, messages: Array.from({ length: n }, (_, j) => ({ partition: (i + j) % PARTITIONS, value: `v${i + j}` })) });
  }
}

beforeAll(async () => {
  [cluster, source] = await Promise.all([
    startCluster({
      nodes: 3,
      overrides: { ...FAST, 'default.replication.factor': 3, 'mirror.state.topic.replication.factor': 3, 'mirror.state.topic.num.partitions': 5, 'min.insync.replicas': 2 },
    }),
    startNode({ overrides: FAST }),
  ]);
  const kafka = new Kafka({ clientId: 'mirror-cluster-source', brokers: [source.bootstrap], logLevel: logLevel.NOTHING });
  const a = kafka.admin();
  await a.connect();
  await a.createTopics({ topics: [{ topic: TOPIC, numPartitions: PARTITIONS }], waitForLeaders: true });
  await a.disconnect();
  sourceProducer = kafka.producer({ idempotent: true, maxInFlightRequests: 1, allowAutoTopicCreation: false });
  await sourceProducer.connect();
}, 120_000);

afterAll(async () => {
  for (const c of closers) c();
  await sourceProducer?.disconnect().catch(() => undefined);
  await source?.destroy();
  await cluster?.destroy();
});

describe('mirroring into a three-node Fjord cluster', () => {
  it('each partition leader mirrors its partitions, state kept by the __mirror_state leaders; describe shows every partition', async () => {
    await produce(0, 600);
    await admin().createClusterMirror(MIRROR, { 'bootstrap.servers': source.bootstrap, 'mirror.fetch.wait.max.ms': '100', 'mirror.socket.timeout.ms': '3000' });
    const started = await admin().startMirrorTopics(MIRROR, [TOPIC]);
    expect(started.map((t) => t.errorCode)).toEqual([0]);
    const parts = await eventually('every partition MIRRORING with lag 0', caughtUp, 30_000).catch(async (e: unknown) => {
      console.log(JSON.stringify(await described()));
      for (const n of cluster.nodes) console.log(n.logs().split('\n').filter((l) => l.includes('mirror')).slice(-15).join('\n'));
      throw e;
    });
    expect(parts.map((p) => p.destinationOffset)).toEqual([200, 200, 200]);
    // The destination topic is replicated on every node, leaders spread over the cluster.
    const ls = await leaders(TOPIC);
    expect(ls.every((l) => l > 0)).toBe(true);
    await eventually('every replica equal to the source', async () => replicasEqualSource(), 30_000);
  }, 90_000);
});
