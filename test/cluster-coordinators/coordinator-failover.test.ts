/**
 * The group coordinator follows __consumer_offsets leadership on a real three-node cluster (one
 * etcd, three `fjord start` processes, offsets.topic.replication.factor=3): every node's
 * FindCoordinator names the leader of the group's partition, the other nodes answer
 * NOT_COORDINATOR, and a kafkajs consumer group whose coordinator node is SIGKILLed finds the
 * new leader and resumes from its acknowledged commits: nothing lost, nothing committed read twice.
 * A kafkajs transactional producer commits a transaction across a SIGKILL of its transaction
 * coordinator's node (markers reach partitions led elsewhere through WriteTxnMarkers), and a
 * read_committed consumer sees exactly the committed records.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Kafka, logLevel, type Admin, type Consumer, type Producer } from 'kafkajs';
import { KafkaClient } from '../../src/client/kafka-client.js';
import { Apis } from '../../src/client/apis.js';
import { ErrorCode } from '../../src/protocol/generated/errors.js';
import { eventually, startCluster, type RunningCluster } from '../helpers/cluster.js';

let cluster: RunningCluster;
let admin: Admin;
let producer: Producer;
const clients: KafkaClient[] = [];
const TOPIC = 'orders';
const GROUP = 'billing';

const kafka = (): Kafka =>
  new Kafka({
    clientId: 'coord-failover-test',
    brokers: cluster.nodes.filter((n) => n.running !== null).map((n) => n.bootstrap),
    logLevel: logLevel.NOTHING,
    retry: { retries: 30, initialRetryTime: 100, maxRetryTime: 1000 },
  });

function client(nodeId: number): KafkaClient {
  const c = new KafkaClient({ bootstrapServers: [cluster.node(nodeId).bootstrap], clientId: 'coord-failover-raw', requestTimeoutMs: 5000 });
  clients.push(c);
  return c;
}

/** The coordinator node id a node's FindCoordinator names for the group, and its error code. */
async function findCoordinator(nodeId: number, keyType: number, key: string): Promise<{ nodeId: number; port: number; errorCode: number }> {
  const r = await client(nodeId).send(Apis.FindCoordinator, { keyType, coordinatorKeys: [key] });
  const c = r.coordinators[0]!;
  return { nodeId: c.nodeId, port: c.port, errorCode: c.errorCode };
}

/** Committed offset of TOPIC-0 for GROUP as `nodeId` answers OffsetFetch, with the group's error code. */
async function committed(nodeId: number): Promise<{ errorCode: number; offset: number }> {
  const r = await client(nodeId).send(Apis.OffsetFetch, { groups: [{ groupId: GROUP, memberId: null, memberEpoch: -1, topics: [{ name: TOPIC, partitionIndexes: [0] }] }], requireStable: false });
  const g = r.groups[0]!;
  return { errorCode: g.errorCode, offset: Number(g.topics[0]?.partitions[0]?.committedOffset ?? -1n) };
}

/** The coordinator every live node agrees on for GROUP. */
async function agreedCoordinator(): Promise<number> {
  return eventually('every live node to name the same group coordinator', async () => {
    const live = cluster.nodes.filter((n) => n.running !== null).map((n) => n.nodeId);
    const answers = await Promise.all(live.map((id) => findCoordinator(id, 0, GROUP)));
    const ids = new Set(answers.map((a) => (a.errorCode === 0 ? a.nodeId : -1)));
    const [only] = [...ids];
    return ids.size === 1 && only !== undefined && only > 0 && live.includes(only) ? only : null;
  });
}

async function produce(from: number, to: number): Promise<void> {
  await producer.send({ topic: TOPIC, acks: -1, messages: Array.from({ length: to - from }, (_, i) => ({ key: `k${from + i}`, value: `v${from + i}` })) });
}

beforeAll(async () => {
  cluster = await startCluster({
    nodes: 3,
    overrides: { 'offsets.topic.num.partitions': 3, 'offsets.topic.replication.factor': 3, 'transaction.state.log.num.partitions': 3, 'group.initial.rebalance.delay.ms': 0 },
  });
  admin = kafka().admin();
  await admin.connect();
  await admin.createTopics({ topics: [{ topic: TOPIC, numPartitions: 1, replicationFactor: 3 }], waitForLeaders: true });
  producer = kafka().producer({ allowAutoTopicCreation: false });
  await producer.connect();
}, 90_000);

afterAll(async () => {
  for (const c of clients) c.close();
  await producer?.disconnect().catch(() => undefined);
  await admin?.disconnect().catch(() => undefined);
  await cluster?.destroy();
});

describe('group coordinator on a three-node cluster', () => {
  it('FindCoordinator names the partition leader on every node; the others answer NOT_COORDINATOR', async () => {
    const coord = await agreedCoordinator();
    const other = cluster.nodes.find((n) => n.nodeId !== coord)!.nodeId;
    expect((await findCoordinator(other, 0, GROUP)).port).toBe(cluster.node(coord).port);
    expect((await committed(other)).errorCode).toBe(ErrorCode.NOT_COORDINATOR);
    await eventually('the coordinator to serve the group', async () => (await committed(coord)).errorCode === 0);
    expect((await committed(coord)).offset).toBe(-1);
    // Transactional ids are coordinated by the leader of their __transaction_state partition.
    const txn = await eventually('a transaction coordinator', async () => {
      const a = await findCoordinator(other, 1, 'txn-a');
      return a.errorCode === 0 ? a : null;
    });
    expect(cluster.nodes.map((n) => n.nodeId)).toContain(txn.nodeId);
  }, 60_000);

  it('a consumer group resumes from its acknowledged commits after its coordinator node is killed', async () => {
    await produce(0, 30);
    const seen: number[] = [];
    let consumer: Consumer = kafka().consumer({ groupId: GROUP, sessionTimeout: 10_000, heartbeatInterval: 500, retry: { retries: 30, initialRetryTime: 100, maxRetryTime: 1000 } });
    await consumer.connect();
    await consumer.subscribe({ topic: TOPIC, fromBeginning: true });
    await consumer.run({
      autoCommit: false,
      eachMessage: async ({ message, partition }) => {
        const offset = Number(message.offset);
        seen.push(offset);
        // Acknowledged before the next record is handed out: a commit the group must keep.
        await consumer.commitOffsets([{ topic: TOPIC, partition, offset: String(offset + 1) }]);
      },
    });
    await eventually('the first 30 records consumed and committed', async () => seen.length >= 30 && (await committed(await agreedCoordinator())).offset === 30);
    await consumer.disconnect();
    expect(seen).toEqual(Array.from({ length: 30 }, (_, i) => i));

    const dead = await agreedCoordinator();
    await cluster.node(dead).kill();
    const next = await agreedCoordinator();
    expect(next).not.toBe(dead);
    // The new leader replayed the replicated __consumer_offsets partition: the commit survived.
    const after = await eventually('the new coordinator to load the group', async () => {
      const c = await committed(next);
      return c.errorCode === 0 ? c : null;
    });
    expect(after.offset).toBe(30);

    await produce(30, 60);
    consumer = kafka().consumer({ groupId: GROUP, sessionTimeout: 10_000, heartbeatInterval: 500, retry: { retries: 30, initialRetryTime: 100, maxRetryTime: 1000 } });
    await consumer.connect();
    await consumer.subscribe({ topic: TOPIC, fromBeginning: true });
    await consumer.run({
      autoCommit: false,
      eachMessage: async ({ message, partition }) => {
        const offset = Number(message.offset);
        seen.push(offset);
        await consumer.commitOffsets([{ topic: TOPIC, partition, offset: String(offset + 1) }]);
      },
    });
    await eventually('the remaining records consumed and committed on the new coordinator', async () => seen.length >= 60 && (await committed(next)).offset === 60, 45_000);
    await consumer.disconnect();
    // Resumed exactly at the committed offset: no record lost, none read again.
    expect(seen).toEqual(Array.from({ length: 60 }, (_, i) => i));
    // Back to three nodes for what follows; the restarted node rejoins as a follower.
    await cluster.node(dead).start();
  }, 90_000);
});

describe('transaction coordinator on a three-node cluster', () => {
  it('a transaction commits across a SIGKILL of its coordinator node; read_committed sees only committed records', async () => {
    const TXN_TOPIC = 'payments';
    const TXN_ID = 'payments-writer';
    await admin.createTopics({ topics: [{ topic: TXN_TOPIC, numPartitions: 3, replicationFactor: 3 }], waitForLeaders: true });
    const txnKafka = kafka();
    const txnProducer = txnKafka.producer({ transactionalId: TXN_ID, idempotent: true, maxInFlightRequests: 1, allowAutoTopicCreation: false });
    await txnProducer.connect();
    const send = async (t: Awaited<ReturnType<Producer['transaction']>>, prefix: string): Promise<void> => {
      await t.send({ topic: TXN_TOPIC, messages: Array.from({ length: 9 }, (_, i) => ({ key: `${prefix}${i}`, value: `${prefix}${i}` })) });
    };
    try {
      const first = await txnProducer.transaction();
      await send(first, 'a');
      await first.commit();
      const aborted = await txnProducer.transaction();
      await send(aborted, 'x');
      await aborted.abort();

      // Every node names the same transaction coordinator: the __transaction_state leader.
      const coord = await eventually('every node to name the same transaction coordinator', async () => {
        const answers = await Promise.all(cluster.nodes.map((n) => findCoordinator(n.nodeId, 1, TXN_ID)));
        const ids = new Set(answers.map((a) => (a.errorCode === 0 ? a.nodeId : -1)));
        const [only] = [...ids];
        return ids.size === 1 && only !== undefined && only > 0 ? only : null;
      });

      // The transaction is ongoing (its partitions recorded, replicated) when the coordinator dies.
      const second = await txnProducer.transaction();
      await send(second, 'b');
      await cluster.node(coord).kill();
      await second.commit();
      expect((await findCoordinator(cluster.nodes.find((n) => n.running !== null)!.nodeId, 1, TXN_ID)).nodeId).not.toBe(coord);
    } finally {
      await txnProducer.disconnect().catch(() => undefined);
    }

    const values: string[] = [];
    const reader = kafka().consumer({ groupId: 'payments-audit', readUncommitted: false, sessionTimeout: 10_000, heartbeatInterval: 500 });
    await reader.connect();
    await reader.subscribe({ topic: TXN_TOPIC, fromBeginning: true });
    await reader.run({ eachMessage: async ({ message }) => void values.push(String(message.value)) });
    try {
      // In every partition the aborted records sit below the second transaction's: reading all
      // of those means a read_committed reader has passed (and must have skipped) the aborted ones.
      await eventually('both committed transactions read', async () => values.length >= 18, 45_000);
    } finally {
      await reader.disconnect();
    }
    expect(values.sort()).toEqual([...Array.from({ length: 9 }, (_, i) => `a${i}`), ...Array.from({ length: 9 }, (_, i) => `b${i}`)].sort());
  }, 90_000);
});
