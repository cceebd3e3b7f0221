import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import kafkajs from 'kafkajs';
import type { Kafka } from 'kafkajs';
import { startNode } from '../helpers/node.js';
import type { RunningNode } from '../helpers/node.js';
import { waitFor } from '../helpers/wait.js';

/**
 * A real transactional kafkajs producer against a node process: committed transactions (with
 * offsets sent to a group) become visible to a read_committed consumer, aborted ones never do,
 * and a second producer with the same transactional id fences the first.
 */

const { Kafka: KafkaClient, logLevel } = kafkajs;
let node: RunningNode;

function kafka(): Kafka {
  return new KafkaClient({ clientId: 'txn-test', brokers: [node.bootstrap], logLevel: logLevel.NOTHING, retry: { retries: 8, initialRetryTime: 100 } });
}

beforeAll(async () => {
  node = await startNode({ overrides: { 'transaction.state.log.num.partitions': 3, 'offsets.topic.num.partitions': 3 } });
}, 60_000);

afterAll(async () => {
  await node?.destroy();
  if (node) rmSync(node.dataDir, { recursive: true, force: true });
}, 60_000);

describe('transactions with kafkajs', () => {
  it('commits and aborts; read_committed sees only committed records; offsets go with the commit', async () => {
    const topic = 'txn-orders';
    const admin = kafka().admin();
    await admin.connect();
    await admin.createTopics({ topics: [{ topic, numPartitions: 2 }, { topic: 'upstream', numPartitions: 1 }] });

    const producer = kafka().producer({ transactionalId: 'tx-orders', maxInFlightRequests: 1, idempotent: true });
    await producer.connect();
    const t1 = await producer.transaction();
    await t1.send({ topic, messages: [{ key: 'a', value: 'committed-1' }, { key: 'b', value: 'committed-2' }] });
    await t1.sendOffsets({ consumerGroupId: 'txn-group', topics: [{ topic: 'upstream', partitions: [{ partition: 0, offset: '42' }] }] });
    await t1.commit();
    const t2 = await producer.transaction();
    await t2.send({ topic, messages: [{ key: 'a', value: 'aborted-1' }, { key: 'b', value: 'aborted-2' }] });
    await t2.abort();
    const t3 = await producer.transaction();
    await t3.send({ topic, messages: [{ key: 'c', value: 'committed-3' }] });
    await t3.commit();

    const offsets = await admin.fetchOffsets({ groupId: 'txn-group', topics: ['upstream'] });
    expect(offsets[0]!.partitions.find((p) => p.partition === 0)!.offset).toBe('42');

    // A second producer with the same transactional id fences the first one.
    const zombie = producer;
    const successor = kafka().producer({ transactionalId: 'tx-orders', maxInFlightRequests: 1, idempotent: true });
    await successor.connect();
    // kafkajs sends InitProducerId with the first transaction, which bumps the epoch.
    const st = await successor.transaction();
    const zt = await zombie.transaction().catch((e: Error) => e);
    if (!(zt instanceof Error)) {
      const sent = await zt.send({ topic, messages: [{ value: 'zombie' }] }).then(() => zt.commit()).catch((e: Error) => e);
      expect(sent).toBeInstanceOf(Error);
    }
    await st.send({ topic, messages: [{ value: 'successor' }] });
    await st.commit();
    await successor.disconnect();
    await zombie.disconnect().catch(() => undefined);

    const consumer = kafka().consumer({ groupId: 'txn-reader', maxWaitTimeInMs: 200 });
    const seen: string[] = [];
    await consumer.connect();
    await consumer.subscribe({ topic, fromBeginning: true });
    await consumer.run({ eachMessage: async ({ message }) => void seen.push(message.value!.toString()) });
    await waitFor('the four committed records', () => seen.length >= 4, 30_000);
    // Records that must not come (aborted, or the zombie's) have no event to await: a fixed wait lets them show.
    await new Promise((r) => setTimeout(r, 1000));
    await consumer.disconnect();
    expect(seen.sort()).toEqual(['committed-1', 'committed-2', 'committed-3', 'successor']);

    const { groups } = await admin.describeGroups(['txn-group']);
    expect(groups[0]!.state).toBe('Empty');
    await admin.disconnect();
  }, 90_000);
});
