/**
 * Real clients across a partition leader's SIGKILL on a three-node Fjord cluster (etcd, three
 * `fjord start` processes, broker session timeout 3 s): the Java client, librdkafka
 * (confluent-kafka) and kafkajs each run an idempotent acks=all producer and a group consumer on
 * a topic with replication factor 3 and min.insync.replicas=2. The node that leads the partition
 * and coordinates the group is killed mid-stream; the client keeps producing and consuming
 * through the new leader and coordinator, and afterwards every acknowledged record is in the log
 * exactly once and was consumed. The Java client runs again with transactions (read_committed),
 * its transaction coordinator on the killed node too. One cluster is shared by the clients.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import kafkajs from 'kafkajs';
import { KafkaClient } from '../../src/client/kafka-client.js';
import { Apis } from '../../src/client/apis.js';
import { ErrorCode } from '../../src/protocol/generated/errors.js';
import { eventually, startCluster, type RunningCluster } from '../helpers/cluster.js';
import {
  explained,
  javaFailoverClient,
  kafkajsFailoverClient,
  librdkafkaFailoverClient,
  readAllValues,
  type FailoverClient,
  type FailoverTarget,
} from './lib/failover-clients.js';

const { Kafka, logLevel } = kafkajs;
const PACE_MS = 5;

let cluster: RunningCluster;
const bootstrap = (): string => cluster.bootstrap.join(',');

beforeAll(async () => {
  // No automatic preferred-leader moves: the only leadership change a client sees is the kill.
  cluster = await startCluster({ nodes: 3, overrides: { 'min.insync.replicas': 2, 'auto.leader.rebalance.enable': false } });
}, 180_000);

afterAll(async () => {
  await cluster?.destroy();
}, 60_000);

interface PartitionState {
  readonly leader: number;
  readonly isr: number[];
}

async function partition0(topic: string): Promise<PartitionState | null> {
  const admin = new Kafka({ clientId: 'cluster-clients-admin', brokers: cluster.nodes.filter((n) => n.running).map((n) => n.bootstrap), logLevel: logLevel.NOTHING }).admin();
  await admin.connect();
  try {
    const md = await admin.fetchTopicMetadata({ topics: [topic] });
    const p = md.topics[0]?.partitions.find((x) => x.partitionId === 0);
    return p ? { leader: p.leader, isr: [...p.isr].sort() } : null;
  } finally {
    await admin.disconnect();
  }
}

/** RF 3 with `leader` first (the preferred leader), min.insync.replicas=2, all three in the ISR. */
async function createTopic(topic: string, leader: number): Promise<void> {
  const admin = new Kafka({ clientId: 'cluster-clients-admin', brokers: cluster.bootstrap, logLevel: logLevel.NOTHING }).admin();
  await admin.connect();
  try {
    const replicas = [leader, ...[1, 2, 3].filter((id) => id !== leader)];
    await admin.createTopics({ topics: [{ topic, replicaAssignment: [{ partition: 0, replicas }], configEntries: [{ name: 'min.insync.replicas', value: '2' }] }], waitForLeaders: true });
  } finally {
    await admin.disconnect();
  }
  await eventually(`${topic} led by ${leader} with the full ISR`, async () => {
    const p = await partition0(topic);
    return p && p.leader === leader && p.isr.length === 3 ? p : null;
  }, 60_000);
}

/**
 * A group name (keyType 0) or transactional id (keyType 1) whose coordinator, the leader of its
 * `__consumer_offsets` / `__transaction_state` partition, is `nodeId`.
 */
async function coordinatedBy(nodeId: number, prefix: string, keyType: 0 | 1): Promise<string> {
  const c = new KafkaClient({ bootstrapServers: cluster.bootstrap, clientId: 'cluster-clients-find-coordinator' });
  try {
    return await eventually(`a group coordinated by node ${nodeId}`, async () => {
      const keys = Array.from({ length: 40 }, (_, i) => `${prefix}-${i}`);
      const r = await c.send(Apis.FindCoordinator, { keyType, coordinatorKeys: keys });
      // COORDINATOR_NOT_AVAILABLE until the internal topic exists on all three nodes.
      if (r.coordinators.some((x) => x.errorCode !== ErrorCode.NONE)) return null;
      return r.coordinators.find((x) => x.nodeId === nodeId)?.key ?? null;
    }, 60_000);
  } finally {
    c.close();
  }
}

function counts(values: readonly number[]): Map<number, number> {
  const m = new Map<number, number>();
  for (const v of values) m.set(v, (m.get(v) ?? 0) + 1);
  return m;
}

async function failover(name: string, victim: number, make: (t: FailoverTarget) => FailoverClient, transactional = false): Promise<void> {
  const topic = `cc-${name}`;
  await createTopic(topic, victim);
  const group = await coordinatedBy(victim, `cc-${name}-group`, 0);
  const transactionalId = transactional ? await coordinatedBy(victim, `cc-${name}-txn`, 1) : undefined;
  const client = make({ bootstrap: bootstrap(), topic, group, paceMs: PACE_MS, ...(transactionalId === undefined ? {} : { transactionalId }) });
  let killed = false;
  try {
    const before = await explained(client, eventually(`${name} producing and consuming`, async () => {
      const p = client.progress();
      return p.acked >= 200 && p.consumed >= 100 ? p : null;
    }, 60_000));
    await cluster.node(victim).kill();
    killed = true;
    const atKill = client.progress();
    expect(atKill.acked).toBeGreaterThanOrEqual(before.acked);
    // Producing goes on through the new leader, and the group consumer (its coordinator moved
    // too) reads what was written after the kill.
    await explained(client, eventually(`${name} to go on producing and consuming after the kill`, async () => {
      const p = client.progress();
      return p.acked >= atKill.acked + 300 && p.maxConsumed >= atKill.acked + 200 ? p : null;
    }, 60_000));
    const out = await client.stop();
    expect(out.errors).toEqual([]);
    const survivor = await partition0(topic);
    expect(survivor?.leader).not.toBe(victim);
    expect([1, 2, 3].filter((id) => id !== victim)).toContain(survivor?.leader);

    // Every acknowledged value is in the log exactly once; the idempotent producer wrote no
    // duplicate of anything, acknowledged or not.
    const log = counts(await readAllValues(bootstrap(), topic));
    const missing = out.acked.filter((v) => !log.has(v));
    expect(missing).toEqual([]);
    expect([...log].filter(([, n]) => n > 1)).toEqual([]);
    // Nothing of an aborted transaction is visible to a read_committed reader.
    expect((out.aborted ?? []).filter((v) => log.has(v))).toEqual([]);
    // The group consumer saw every acknowledged value.
    const seen = new Set(out.consumed);
    expect(out.acked.filter((v) => !seen.has(v))).toEqual([]);
    expect(out.acked.length).toBeGreaterThan(atKill.acked + 300);
  } finally {
    client.abort();
    // Only a killed node is started again: a second process on a live node's port and data
    // directory refuses to start, and that error would replace the test's own failure.
    if (killed) await cluster.node(victim).start();
  }
}

describe('real clients across a leader kill on a three-node cluster (RF 3, min.insync.replicas=2)', () => {
  it('the Java client (kafka-clients 4.1.2): idempotent acks=all producer and group consumer', async () => {
    await failover('java', 1, javaFailoverClient);
  }, 180_000);

  it('librdkafka (confluent-kafka): idempotent acks=all producer and group consumer', async () => {
    await failover('librdkafka', 2, librdkafkaFailoverClient);
  }, 180_000);

  it('kafkajs 2.2.4: idempotent acks=all producer and group consumer', async () => {
    await failover('kafkajs', 3, kafkajsFailoverClient);
  }, 180_000);

  it('the Java client with transactions: the node leading the partition, the group and the transaction coordinator is killed; committed transactions are read once, aborted ones never', async () => {
    await failover('java-txn', 1, javaFailoverClient, true);
  }, 180_000);
});
