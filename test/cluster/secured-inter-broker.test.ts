/**
 * A three-node cluster (real etcd, real `fjord start` processes) whose only listener is
 * SASL_SSL with PLAIN: the nodes reach each other over it (`inter.broker.listener.name`,
 * `sasl.mechanism.inter.broker.protocol`, their own login from the listener's JAAS config, the
 * listener's trust store), with StandardAuthorizer on. The node principal without CLUSTER_ACTION
 * cannot replicate (its follower fetches are refused and the ISR shrinks to the leader); with it,
 * an RF 3 topic replicates, takes acks=all writes, and survives a SIGKILL of its leader with
 * every acknowledged record read back over SASL_SSL from the new leader.
 */
import { readdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import kafkajs from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEtcd, type RunningEtcd } from '../helpers/etcd.js';
import { eventually, FAST_SESSION } from '../helpers/cluster.js';
import { freePort, startNode, type RunningNode } from '../helpers/node.js';
import { STORE_PASSWORD, makeTestPki, type TestPki } from '../server/tls-fixtures.js';

const { Kafka, logLevel, AclResourceTypes, AclOperationTypes, AclPermissionTypes, ResourcePatternTypes } = kafkajs;
const JAAS =
  'org.apache.kafka.common.security.plain.PlainLoginModule required username="broker" password="broker-secret" ' +
  'user_broker="broker-secret" user_admin="admin-secret";';
const TOPIC = 'secured-rf3';

let pki: TestPki;
let etcd: RunningEtcd;
const ports: number[] = [];
const nodes = new Map<number, RunningNode>();
const dataDirs = new Map<number, string>();

function nodeConfig(nodeId: number): Record<string, string | number | boolean> {
  return {
    ...FAST_SESSION,
    'node.id': nodeId,
    'metadata.etcd.endpoints': etcd.endpoint,
    listeners: `SECURE://127.0.0.1:${ports[nodeId - 1]}`,
    'listener.security.protocol.map': 'SECURE:SASL_SSL',
    'inter.broker.listener.name': 'SECURE',
    'sasl.mechanism.inter.broker.protocol': 'PLAIN',
    'listener.name.secure.sasl.enabled.mechanisms': 'PLAIN',
    'listener.name.secure.plain.sasl.jaas.config': JAAS,
    'listener.name.secure.ssl.keystore.location': pki.server.p12,
    'listener.name.secure.ssl.keystore.type': 'PKCS12',
    'listener.name.secure.ssl.keystore.password': STORE_PASSWORD,
    'listener.name.secure.ssl.truststore.location': pki.truststoreP12,
    'listener.name.secure.ssl.truststore.type': 'PKCS12',
    'listener.name.secure.ssl.truststore.password': STORE_PASSWORD,
    'authorizer.class.name': 'org.apache.kafka.metadata.authorizer.StandardAuthorizer',
    'super.users': 'User:admin',
    'replica.lag.time.max.ms': 3000,
    'auto.leader.rebalance.enable': false,
    // The read-back group is made after a node is killed: two live nodes must be enough for it.
    'offsets.topic.replication.factor': 2,
  };
}

async function start(nodeId: number): Promise<void> {
  const dir = dataDirs.get(nodeId);
  const n = await startNode({ port: ports[nodeId - 1]!, ...(dir ? { dataDir: dir } : {}), overrides: nodeConfig(nodeId) });
  dataDirs.set(nodeId, n.dataDir);
  nodes.set(nodeId, n);
}

const live = (): string[] => [...nodes.keys()].map((id) => `127.0.0.1:${ports[id - 1]}`);
const kafka = (brokers = live()): InstanceType<typeof Kafka> =>
  new Kafka({ clientId: 'secured-test', brokers, ssl: { ca: [pki.caPem] }, sasl: { mechanism: 'plain', username: 'admin', password: 'admin-secret' }, logLevel: logLevel.NOTHING, retry: { retries: 8 } });

async function withAdmin<T>(fn: (a: ReturnType<InstanceType<typeof Kafka>['admin']>) => Promise<T>): Promise<T> {
  const admin = kafka().admin();
  await admin.connect();
  try {
    return await fn(admin);
  } finally {
    await admin.disconnect();
  }
}

const partition0 = (): Promise<{ leader: number; replicas: number[]; isr: number[] }> =>
  withAdmin(async (a) => {
    const p = (await a.fetchTopicMetadata({ topics: [TOPIC] })).topics[0]!.partitions.find((x) => x.partitionId === 0)!;
    return { leader: p.leader, replicas: [...p.replicas].sort(), isr: [...p.isr].sort() };
  });

function logBytes(nodeId: number): number {
  const dir = join(dataDirs.get(nodeId)!, `${TOPIC}-0`);
  try {
    return readdirSync(dir).filter((f) => f.endsWith('.log')).reduce((n, f) => n + statSync(join(dir, f)).size, 0);
  } catch {
    return 0;
  }
}

beforeAll(async () => {
  pki = makeTestPki();
  etcd = await startEtcd();
  for (let i = 0; i < 3; i++) ports.push(await freePort());
  // One at a time: node 1 founds the cluster.
  for (const id of [1, 2, 3]) await start(id);
}, 240_000);

afterAll(async () => {
  for (const n of nodes.values()) await n.kill().catch(() => undefined);
  for (const d of dataDirs.values()) rmSync(d, { recursive: true, force: true });
  await etcd?.destroy();
  pki?.cleanup();
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
      expect(nodes.get(id)!.logs()).toMatch(/"msg":"follower partition backing off"[^\n]*"partition":"secured-rf3-0"[^\n]*"why":29/);
    }
  });

  it('with CLUSTER_ACTION granted, RF 3 replicates over SASL_SSL and survives a SIGKILL of the leader', async () => {
    await withAdmin((a) =>
      a.createAcls({
        acl: [{ resourceType: AclResourceTypes.CLUSTER, resourceName: 'kafka-cluster', resourcePatternType: ResourcePatternTypes.LITERAL, principal: 'User:broker', host: '*', operation: AclOperationTypes.CLUSTER_ACTION, permissionType: AclPermissionTypes.ALLOW }],
      }),
    );
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

    await nodes.get(before.leader)!.kill();
    nodes.delete(before.leader);
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
    await start(before.leader);
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
