/**
 * A three-node cluster (real etcd, real `fjord start` processes) whose only listener is
 * SASL_SSL with PLAIN: the nodes reach each other over it (`inter.broker.listener.name`,
 * `sasl.mechanism.inter.broker.protocol`, their own login from the listener's JAAS config, the
 * listener's trust store), with StandardAuthorizer on. The node principal without CLUSTER_ACTION
 * cannot replicate (its follower fetches are refused and the ISR shrinks to the leader); with it,
 * an RF 3 topic replicates, takes acks=all writes, and survives a SIGKILL of its leader with
 * every acknowledged record read back over SASL_SSL from the new leader.
 */
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../helpers/cluster.js';
import { startSecuredCluster, type SecuredCluster } from '../helpers/secured-cluster.js';

const JAAS =
  'org.apache.kafka.common.security.plain.PlainLoginModule required username="broker" password="broker-secret" ' +
  'user_broker="broker-secret" user_admin="admin-secret";';
const TOPIC = 'secured-rf3';

let secured: SecuredCluster;
const kafka = (): ReturnType<SecuredCluster['kafka']> => secured.kafka();
const withAdmin: SecuredCluster['withAdmin'] = (fn) => secured.withAdmin(fn);
const node = (id: number) => secured.cluster.node(id);

const partition0 = (): Promise<{ leader: number; replicas: number[]; isr: number[] }> =>
  withAdmin(async (a) => {
    const p = (await a.fetchTopicMetadata({ topics: [TOPIC] })).topics[0]!.partitions.find((x) => x.partitionId === 0)!;
    return { leader: p.leader, replicas: [...p.replicas].sort(), isr: [...p.isr].sort() };
  });

function logBytes(nodeId: number): number {
  const dir = join(node(nodeId).dataDir!, `${TOPIC}-0`);
  try {
    return readdirSync(dir).filter((f) => f.endsWith('.log')).reduce((n, f) => n + statSync(join(dir, f)).size, 0);
  } catch {
    return 0;
  }
}

beforeAll(async () => {
  secured = await startSecuredCluster({
    nodes: 3,
    interBrokerMechanism: 'PLAIN',
    jaas: { PLAIN: JAAS },
    clientId: 'secured-test',
    overrides: {
      'replica.lag.time.max.ms': 3000,
      'auto.leader.rebalance.enable': false,
      // The read-back group is made after a node is killed: two live nodes must be enough for it.
      'offsets.topic.replication.factor': 2,
    },
  });
}, 240_000);

afterAll(async () => {
  await secured?.destroy();
}, 60_000);

describe('a cluster whose only listener is SASL_SSL', () => {
  it('without CLUSTER_ACTION for the node principal, followers cannot fetch: the ISR shrinks to the leader', async () => {
    await withAdmin(async (a) => {
      expect(await a.createTopics({ topics: [{ topic: TOPIC, numPartitions: 1, replicationFactor: 3, configEntries: [{ name: 'min.insync.replicas', value: '2' }] }] })).toBe(true);
    });
    const producer = kafka().producer();
    await producer.connect();
    try {
      await producer.send({ topic: TOPIC, acks: 1, messages: [{ value: 'before-acl' }] });
    } finally {
      await producer.disconnect();
    }
    const p = await eventually('the ISR to shrink to the leader', async () => {
      const q = await partition0();
      return q.isr.length === 1 ? q : null;
    }, 30_000);
    expect(p.isr).toEqual([p.leader]);
    for (const id of [1, 2, 3].filter((x) => x !== p.leader)) {
      expect(logBytes(id)).toBe(0);
      // The follower got through TLS and SASL: the leader refused its fetch with TOPIC_AUTHORIZATION_FAILED.
      expect(node(id).logs()).toMatch(/"msg":"follower partition backing off"[^\n]*"partition":"secured-rf3-0"[^\n]*"why":29/);
    }
  });

  it('with CLUSTER_ACTION granted, RF 3 replicates over SASL_SSL and survives a SIGKILL of the leader', async () => {
    await secured.grantClusterAction('User:broker');
    await eventually('all three replicas in the ISR', async () => ((await partition0()).isr.length === 3 ? true : null), 30_000);

    const values = Array.from({ length: 200 }, (_, i) => `acked-${i}`);
    const producer = kafka().producer({ idempotent: true, maxInFlightRequests: 1 });
    await producer.connect();
    try {
      for (let i = 0; i < values.length; i += 20) await producer.send({ topic: TOPIC, acks: -1, messages: values.slice(i, i + 20).map((value) => ({ value })) });
    } finally {
      await producer.disconnect();
    }
    const before = await partition0();
    const leaderBytes = logBytes(before.leader);
    await eventually('followers byte-identical in size to the leader', async () => ([1, 2, 3].every((id) => logBytes(id) === leaderBytes) ? true : null));

    await node(before.leader).kill();
    const after = await eventually('a new leader', async () => {
      const q = await partition0();
      return q.leader >= 0 && q.leader !== before.leader ? q : null;
    }, 30_000);
    expect([1, 2, 3].filter((x) => x !== before.leader)).toContain(after.leader);

    const consumer = kafka().consumer({ groupId: 'secured-readback' });
    const seen: string[] = [];
    await consumer.connect();
    try {
      await consumer.subscribe({ topic: TOPIC, fromBeginning: true });
      await consumer.run({ eachMessage: async ({ message }) => void seen.push(message.value!.toString()) });
      await eventually('every record read back from the new leader', async () => (seen.length >= values.length + 1 ? true : null), 60_000);
    } finally {
      await consumer.disconnect();
    }
    expect(seen).toEqual(['before-acl', ...values]);
    await node(before.leader).start();
  }, 180_000);

  it('transaction markers reach partition leaders on the other nodes over SASL_SSL', async () => {
    const topic = 'secured-txn';
    await withAdmin(async (a) => {
      expect(await a.createTopics({ topics: [{ topic, numPartitions: 3, replicationFactor: 3 }] })).toBe(true);
      // Leaders on every node: the coordinator's markers go to two other nodes whichever it is.
      await eventually('leaders on three nodes', async () => {
        const ps = (await a.fetchTopicMetadata({ topics: [topic] })).topics[0]!.partitions;
        return new Set(ps.map((p) => p.leader)).size === 3 ? true : null;
      }, 30_000);
    });
    const producer = kafka().producer({ transactionalId: 'secured-tx', idempotent: true, maxInFlightRequests: 1 });
    await producer.connect();
    try {
      const txn = await producer.transaction();
      await txn.send({ topic, messages: [0, 1, 2].map((partition) => ({ partition, value: `committed-${partition}` })) });
      await txn.commit();
    } finally {
      await producer.disconnect();
    }
    // read_committed sees a record only once the commit marker is on its partition.
    const consumer = kafka().consumer({ groupId: 'secured-txn-readback', readUncommitted: false });
    const seen: string[] = [];
    await consumer.connect();
    try {
      await consumer.subscribe({ topic, fromBeginning: true });
      await consumer.run({ eachMessage: async ({ message }) => void seen.push(message.value!.toString()) });
      await eventually('every committed record read with read_committed', async () => (seen.length >= 3 ? true : null), 60_000);
    } finally {
      await consumer.disconnect();
    }
    expect(seen.sort()).toEqual(['committed-0', 'committed-1', 'committed-2']);
  }, 120_000);
});
