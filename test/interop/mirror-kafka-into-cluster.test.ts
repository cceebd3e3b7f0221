/**
 * A three-broker Apache Kafka cluster mirrored into a three-node Fjord cluster (one etcd, RF 3 for
 * the mirror topics and for `__mirror_state`):
 *
 * - catch-up, then kill -9 of the Fjord leader of a mirror partition and of the leader of a
 *   `__mirror_state` partition while the source is written: mirroring resumes on the new leaders
 *   and every destination replica ends byte-identical to the source;
 * - an unclean leader election on the source of a topic with
 *   `mirror.support.unclean.leader.election=true`: the destination leader truncates the suffix
 *   the new source leader does not have, its followers (fetching with MirrorLeaderEpoch) keep no
 *   batch of it, and every replica's segments equal the new source leader's;
 * - stop (failover: the topic takes writes of its own) and start again from the source: every
 *   replica drops the destination's writes and converges with the source, as on one node.
 */
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { Kafka, logLevel, type Admin, type Producer } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MirrorAdmin, type PartitionMirrorDescription } from '../../src/admin/mirror-admin.js';
import { KafkaClient } from '../../src/client/kafka-client.js';
import { partitionForKey } from '../../src/coordinator/coordinator-runtime.js';
import { mirrorStateKeyString } from '../../src/mirror/mirror-coordinator.js';
import { RecordBatchView } from '../../src/protocol/record-batch.js';
import { decodeRecords } from '../../src/protocol/records.js';
import { eventually, startCluster, type RunningCluster } from '../helpers/cluster.js';
import { javaTool } from './lib/java.js';
import { startKafkaCluster, type KafkaCluster } from './lib/kafka-cluster.js';

const MIRROR = 'from-kafka';
const ORDERS = 'orders';
const ORDERS_PARTITIONS = 2;
const LOSSY = 'lossy';
const STATE_PARTITIONS = 3;
const FAST = { 'mirror.failed.retry.initial.backoff.ms': 200, 'mirror.failed.retry.max.backoff.ms': 1000, 'mirror.metadata.refresh.interval.ms': 1000 };

let source: KafkaCluster;
let dest: RunningCluster;
let sourceAdmin: Admin;
let sourceKafka: Kafka;
const closers: (() => void)[] = [];

function mirrorAdmin(): MirrorAdmin {
  const a = new MirrorAdmin({ bootstrapServers: dest.nodes.filter((n) => n.running !== null).map((n) => n.bootstrap), requestTimeoutMs: 5000 });
  closers.push(() => a.close());
  return a;
}

/** Leader node id of each partition of a destination topic, and its topic id. */
async function destLeaders(topic: string): Promise<{ topicId: string; leaders: number[] }> {
  const live = dest.nodes.find((n) => n.running !== null)!;
  const c = new KafkaClient({ bootstrapServers: [live.bootstrap], requestTimeoutMs: 10_000 });
  try {
    const t = (await c.metadata([topic])).topics.find((x) => x.name === topic);
    return { topicId: t?.topicId ?? '', leaders: [...(t?.partitions ?? [])].sort((a, b) => a.partitionIndex - b.partitionIndex).map((p) => p.leaderId) };
  } finally {
    c.close();
  }
}

async function sourceLeader(topic: string, partition: number): Promise<number> {
  const md = await sourceAdmin.fetchTopicMetadata({ topics: [topic] });
  return md.topics[0]?.partitions.find((p) => p.partitionId === partition)?.leader ?? -1;
}

function segments(dir: string): Buffer {
  if (!existsSync(dir)) return Buffer.alloc(0);
  return Buffer.concat(readdirSync(dir).filter((f) => f.endsWith('.log')).sort().map((f) => readFileSync(join(dir, f))));
}

/** (offset, value) of every data record in a log's segment bytes. */
function offsetsAndValues(bytes: Buffer): string[] {
  const out: string[] = [];
  for (let pos = 0; pos + 61 <= bytes.length; ) {
    const b = new RecordBatchView(bytes, pos);
    if (!b.isControl) for (const r of decodeRecords(b)) out.push(`${r.offset}:${r.value?.toString() ?? ''}`);
    pos += b.sizeInBytes;
  }
  return out;
}

async function described(topic: string): Promise<readonly PartitionMirrorDescription[]> {
  const [m] = await mirrorAdmin().describeClusterMirrors([MIRROR]);
  return (m?.partitions ?? []).filter((p) => p.topic === topic);
}

/**
 * Waits until every partition of `topic` is MIRRORING with lag 0 and every live destination
 * replica's segments equal those of the source partition's leader; returns the source bytes.
 */
async function converged(topic: string, partitions: number, timeoutMs = 60_000): Promise<Buffer[]> {
  await eventually(`${topic} MIRRORING with lag 0`, async () => {
    const parts = await described(topic);
    return parts.length === partitions && parts.every((p) => p.state === 'MIRRORING' && p.lag === 0);
  }, timeoutMs).catch(async (e: unknown) => {
    console.log(JSON.stringify(await described(topic).catch(() => [])));
    throw e;
  });
  return eventually(`every replica of ${topic} equal to the source`, async () => {
    const out: Buffer[] = [];
    for (let p = 0; p < partitions; p++) {
      const want = segments(join(source.broker(await sourceLeader(topic, p)).logDir, `${topic}-${p}`));
      for (const n of dest.nodes) if (n.running !== null && !segments(join(n.dataDir!, `${topic}-${p}`)).equals(want)) return null;
      out.push(want);
    }
    return out;
  }, 30_000);
}

async function produce(producer: Producer, topic: string, prefix: string, from: number, count: number, partitions = 1): Promise<void> {
  await producer.send({ topic, acks: -1, messages: Array.from({ length: count }, (_, i) => ({ partition: (from + i) % partitions, value: `${prefix}-${from + i}` })) });
}

beforeAll(async () => {
  const started = Date.now();
  [source, dest] = await Promise.all([
    // Pre-KIP-966 election rules, so an out-of-sync replica can be elected uncleanly.
    startKafkaCluster({ brokers: 3, features: ['eligible.leader.replicas.version=0'], brokerOverrides: { 'replica.lag.time.max.ms': '5000' } }),
    startCluster({
      nodes: 3,
      overrides: { ...FAST, 'default.replication.factor': 3, 'mirror.state.topic.replication.factor': 3, 'mirror.state.topic.num.partitions': STATE_PARTITIONS, 'min.insync.replicas': 2, 'replica.lag.time.max.ms': 3000 },
    }),
  ]);
  console.log(`[interop] three-broker Apache Kafka ${source.version} and three Fjord nodes serving after ${Date.now() - started} ms`);
  sourceKafka = new Kafka({ clientId: 'mirror-into-cluster', brokers: source.bootstrap.split(','), logLevel: logLevel.NOTHING, retry: { retries: 30, initialRetryTime: 200, maxRetryTime: 2000 } });
  sourceAdmin = sourceKafka.admin();
  await sourceAdmin.connect();
  await sourceAdmin.createTopics({
    topics: [
      { topic: ORDERS, numPartitions: ORDERS_PARTITIONS, replicationFactor: 3 },
      { topic: LOSSY, replicaAssignment: [{ partition: 0, replicas: [1, 3, 2] }], configEntries: [{ name: 'unclean.leader.election.enable', value: 'true' }, { name: 'min.insync.replicas', value: '1' }] },
    ],
    waitForLeaders: true,
  });
  await mirrorAdmin().createClusterMirror(MIRROR, { 'bootstrap.servers': source.bootstrap, 'mirror.fetch.wait.max.ms': '100', 'mirror.socket.timeout.ms': '120000' });
}, 180_000);

afterAll(async () => {
  for (const c of closers) c();
  await sourceAdmin?.disconnect().catch(() => undefined);
  await Promise.all([source?.stop(), dest?.destroy()]);
});

describe('an Apache Kafka cluster mirrored into a three-node Fjord cluster', () => {
  it('catch-up, then kill -9 of a mirror partition leader and of a __mirror_state leader mid-stream: resumes on the new leaders, every replica byte-identical', async () => {
    const producer = sourceKafka.producer({ idempotent: true, maxInFlightRequests: 1, allowAutoTopicCreation: false });
    await producer.connect();
    try {
      await produce(producer, ORDERS, 'o', 0, 400, ORDERS_PARTITIONS);
      expect((await mirrorAdmin().startMirrorTopics(MIRROR, [ORDERS])).map((t) => t.errorCode)).toEqual([0]);
      await converged(ORDERS, ORDERS_PARTITIONS);
      let next = 400;
      let stop = false;
      const writing = (async () => {
        while (!stop) {
          await produce(producer, ORDERS, 'o', next, 100, ORDERS_PARTITIONS);
          next += 100;
        }
      })();
      // The leader of partition 0 dies while the source is written.
      const { topicId, leaders } = await destLeaders(ORDERS);
      const partitionLeader = leaders[0]!;
      await dest.node(partitionLeader).kill();
      await eventually('1000 more records written', async () => next >= 1400, 60_000);
      await eventually('partition 0 led elsewhere', async () => {
        const l = (await destLeaders(ORDERS)).leaders[0]!;
        return l > 0 && l !== partitionLeader;
      });
      await dest.node(partitionLeader).start();
      // Then the node keeping partition 1's mirror state.
      const shard = partitionForKey(mirrorStateKeyString(MIRROR, topicId, 1), STATE_PARTITIONS);
      const coordinator = await eventually('a leader of partition 1\'s __mirror_state partition', async () => {
        const l = (await destLeaders('__mirror_state')).leaders[shard]!;
        return l > 0 ? l : null;
      });
      const killedAt = next;
      await dest.node(coordinator).kill();
      await eventually('1000 more records written', async () => next >= killedAt + 1000, 60_000);
      stop = true;
      await writing;
      await dest.node(coordinator).start();
      console.log(`killed node ${partitionLeader} (leader of ${ORDERS}-0) and node ${coordinator} (leader of __mirror_state-${shard}); ${next} records written`);
      const logs = await converged(ORDERS, ORDERS_PARTITIONS, 90_000);
      // Every acknowledged record exactly once, at the source's offsets.
      const values = logs.flatMap((b) => offsetsAndValues(b).map((r) => r.split(':')[1]!));
      expect(values).toHaveLength(next);
      expect(new Set(values).size).toBe(next);
    } finally {
      await producer.disconnect();
    }
  }, 240_000);

  it('an unclean election on the source with mirror.support.unclean.leader.election=true: no replica keeps the lost suffix', async () => {
    const destKafka = new Kafka({ clientId: 'mirror-into-cluster-dest', brokers: dest.bootstrap, logLevel: logLevel.NOTHING, retry: { retries: 20, initialRetryTime: 100, maxRetryTime: 1000 } });
    const destAdmin = destKafka.admin();
    await destAdmin.connect();
    const producer = sourceKafka.producer({ allowAutoTopicCreation: false });
    await producer.connect();
    try {
      await produce(producer, LOSSY, 'kept', 0, 20);
      expect((await mirrorAdmin().startMirrorTopics(MIRROR, [LOSSY])).map((t) => t.errorCode)).toEqual([0]);
      await eventually('the destination topic', async () => (await destLeaders(LOSSY)).leaders[0]! > 0);
      await destAdmin.alterConfigs({ validateOnly: false, resources: [{ type: 2, name: LOSSY, configEntries: [{ name: 'mirror.support.unclean.leader.election', value: 'true' }] }] });
      await converged(LOSSY, 1);
      // Broker 2 then broker 3 stop: broker 1 alone takes the next writes, and every destination replica copies them.
      await source.stopBroker(2);
      await source.stopBroker(3);
      await produce(producer, LOSSY, 'lost', 20, 20);
      const [before] = await converged(LOSSY, 1);
      expect(offsetsAndValues(before!).filter((r) => r.includes(':lost-'))).toHaveLength(20);
      // The only ISR member stops; the out-of-sync broker 3 comes back and is elected uncleanly.
      await source.stopBroker(1);
      await source.startBroker(3);
      await eventually('broker 3 elected', async () => {
        if ((await sourceLeader(LOSSY, 0)) === 3) return true;
        await javaTool('org.apache.kafka.tools.LeaderElectionCommand', ['--bootstrap-server', `127.0.0.1:${source.broker(3).port}`, '--election-type', 'UNCLEAN', '--topic', LOSSY, '--partition', '0']);
        return (await sourceLeader(LOSSY, 0)) === 3;
      }, 60_000);
      await produce(producer, LOSSY, 'new', 20, 10);
    } finally {
      await producer.disconnect();
      await destAdmin.disconnect();
    }
    const [after] = await converged(LOSSY, 1, 90_000);
    const records = offsetsAndValues(after!);
    expect(records.filter((r) => r.includes(':lost-'))).toEqual([]);
    expect(records.slice(0, 20)).toEqual(Array.from({ length: 20 }, (_, i) => `${i}:kept-${i}`));
    expect(records.slice(20)).toEqual(Array.from({ length: 10 }, (_, i) => `${20 + i}:new-${20 + i}`));
    await Promise.all([source.startBroker(1), source.startBroker(2)]);
  }, 240_000);

  it('stop (failover) then start again from the source: every replica drops the destination writes and converges', async () => {
    expect((await mirrorAdmin().stopMirrorTopics(MIRROR, [ORDERS])).map((t) => t.errorCode)).toEqual([0]);
    await eventually('every partition STOPPED', async () => (await described(ORDERS)).filter((p) => p.state === 'STOPPED').length === ORDERS_PARTITIONS, 30_000);
    const destKafka = new Kafka({ clientId: 'mirror-into-cluster-writer', brokers: dest.bootstrap, logLevel: logLevel.NOTHING, retry: { retries: 20, initialRetryTime: 100, maxRetryTime: 1000 } });
    const producer = destKafka.producer({ allowAutoTopicCreation: false });
    await producer.connect();
    await produce(producer, ORDERS, 'dest', 0, 20, ORDERS_PARTITIONS);
    await producer.disconnect();
    expect((await mirrorAdmin().startMirrorTopics(MIRROR, [ORDERS])).map((t) => t.errorCode)).toEqual([0]);
    const logs = await converged(ORDERS, ORDERS_PARTITIONS, 90_000);
    expect(logs.flatMap((b) => offsetsAndValues(b)).filter((r) => r.includes(':dest-'))).toEqual([]);
  }, 180_000);
});
