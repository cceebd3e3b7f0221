/**
 * A stop while a replica in the ISR has stopped fetching (SIGSTOP), on a three-node cluster (etcd,
 * RF 3, min.insync.replicas 2). STOPPING's barrier (MIRROR_PID_RESET) is appended acks=all: it is
 * committed once the ISR holds it, and until the leader drops the silent replica from the ISR
 * (replica.lag.time.max.ms) it cannot be. The stop waits for that and goes on: the partition
 * never shows FAILED on its way to STOPPED, as it did when the barrier's wait gave up after
 * offsets.commit.timeout.ms, shorter than the time the ISR takes to drop a replica.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { Kafka, logLevel } from 'kafkajs';
import { MirrorAdmin } from '../../src/admin/mirror-admin.js';
import { KafkaClient } from '../../src/client/kafka-client.js';
import { partitionForKey } from '../../src/coordinator/coordinator-runtime.js';
import { mirrorStateKeyString } from '../../src/mirror/mirror-coordinator.js';
import { eventually, startCluster, type RunningCluster } from '../helpers/cluster.js';
import { seedSourceTopics } from '../helpers/mirror-cli.js';
import { startNode, type RunningNode } from '../helpers/node.js';

const FAST = { 'mirror.failed.retry.initial.backoff.ms': 200, 'mirror.failed.retry.max.backoff.ms': 1000, 'mirror.metadata.refresh.interval.ms': 1000 };
const MIRROR = 'dr';
const TOPIC = 'ledger';
const STATE_PARTITIONS = 3;

let cluster: RunningCluster;
let source: RunningNode;
const closers: (() => void)[] = [];

function admin(except: readonly number[] = []): MirrorAdmin {
  const a = new MirrorAdmin({ bootstrapServers: cluster.nodes.filter((n) => !except.includes(n.nodeId)).map((n) => n.bootstrap), requestTimeoutMs: 10_000 });
  closers.push(() => a.close());
  return a;
}

function client(nodeId: number): KafkaClient {
  const c = new KafkaClient({ bootstrapServers: [cluster.node(nodeId).bootstrap], requestTimeoutMs: 10_000 });
  closers.push(() => c.close());
  return c;
}

beforeAll(async () => {
  [cluster, source] = await Promise.all([
    startCluster({
      nodes: 3,
      // The state topic on one replica, so that only the mirrored partition waits on the frozen
      // node; a session longer than the ISR's lag bound, so the node is dropped from the ISR
      // before it is fenced.
      overrides: {
        ...FAST,
        'broker.session.timeout.ms': 30_000,
        'broker.heartbeat.interval.ms': 1000,
        'default.replication.factor': 3,
        'min.insync.replicas': 2,
        'mirror.state.topic.replication.factor': 1,
        'mirror.state.topic.num.partitions': STATE_PARTITIONS,
        'replica.lag.time.max.ms': 8000,
        'offsets.commit.timeout.ms': 3000,
      },
    }),
    startNode({ overrides: FAST }),
  ]);
  await seedSourceTopics(source.bootstrap, 'stop-barrier-isr', [TOPIC], 1);
}, 120_000);

afterAll(async () => {
  for (const n of cluster?.nodes ?? []) if (n.running !== null) n.resume();
  for (const c of closers) c();
  await source?.destroy();
  await cluster?.destroy();
});

it('a stop whose barrier waits on a replica that stopped fetching goes on once the ISR drops it, without going FAILED', async () => {
  await admin().createClusterMirror(MIRROR, { 'bootstrap.servers': source.bootstrap, 'mirror.fetch.wait.max.ms': '100' });
  expect((await admin().startMirrorTopics(MIRROR, [TOPIC])).map((t) => t.errorCode)).toEqual([0]);
  const caughtUp = async (): Promise<boolean> => {
    const [m] = await admin().describeClusterMirrors([MIRROR]);
    const p = m?.partitions.find((x) => x.topic === TOPIC);
    return p?.state === 'MIRRORING' && p.lag === 0;
  };
  await eventually('MIRRORING, caught up', caughtUp, 60_000);

  // Who leads the partition and who keeps its state; the frozen node is neither, and in the ISR.
  const md = await client(1).metadata([TOPIC, '__mirror_state']);
  const mirrored = md.topics.find((t) => t.name === TOPIC)!;
  const p0 = mirrored.partitions[0]!;
  const shard = partitionForKey(mirrorStateKeyString(MIRROR, mirrored.topicId, 0), STATE_PARTITIONS);
  const stateLeader = md.topics.find((t) => t.name === '__mirror_state')!.partitions.find((p) => p.partitionIndex === shard)!.leaderId;
  const frozen = [1, 2, 3].find((id) => id !== p0.leaderId && id !== stateLeader)!;
  await eventually('every replica in the ISR', async () => {
    const m = await client(p0.leaderId).metadata([TOPIC]);
    return (m.topics[0]?.partitions[0]?.isrNodes.length ?? 0) === 3;
  });

  cluster.node(frozen).pause();
  try {
    const live = admin([frozen]);
    expect((await live.stopMirrorTopics(MIRROR, [TOPIC])).map((t) => t.errorCode)).toEqual([0]);
    await eventually(
      'STOPPED',
      async () => {
        const [m] = await live.describeClusterMirrors([MIRROR]);
        return m?.partitions.find((x) => x.topic === TOPIC)?.state === 'STOPPED';
      },
      60_000,
    );
    const leaderLog = cluster.node(p0.leaderId).logs();
    const transitions = leaderLog.split('\n').filter((l) => l.includes(`"msg":"mirror ${MIRROR} ${TOPIC}-0: `) && l.includes(' -> '));
    expect(transitions.filter((l) => l.includes('FAILED'))).toEqual([]);
    // Writable at once, acks=all, with the frozen node out of the ISR.
    const kafka = new Kafka({ clientId: 'stop-barrier-isr-check', brokers: [cluster.node(p0.leaderId).bootstrap], logLevel: logLevel.NOTHING });
    const producer = kafka.producer({ allowAutoTopicCreation: false });
    await producer.connect();
    try {
      const [r] = await producer.send({ topic: TOPIC, acks: -1, messages: [{ partition: 0, value: 'after the stop' }] });
      expect(r?.errorCode).toBe(0);
    } finally {
      await producer.disconnect();
    }
  } finally {
    cluster.node(frozen).resume();
  }
}, 180_000);
