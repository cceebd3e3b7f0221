import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Admin, Consumer, Producer, stringDeserializers, stringSerializers } from '@platformatic/kafka';
import { startNode } from '../helpers/node.js';
import type { RunningNode } from '../helpers/node.js';
import { waitFor } from '../helpers/wait.js';

/**
 * The KIP-848 consumer protocol with a real client: @platformatic/kafka consumers with
 * groupProtocol 'consumer' (ConsumerGroupHeartbeat, server-side assignment) against a node.
 */

let node: RunningNode;

beforeAll(async () => {
  node = await startNode({ overrides: { 'group.consumer.heartbeat.interval.ms': 300, 'group.consumer.min.heartbeat.interval.ms': 100 } });
}, 60_000);

afterAll(async () => {
  await node?.destroy();
  if (node) rmSync(node.dataDir, { recursive: true, force: true });
}, 60_000);

describe('KIP-848 consumer protocol with @platformatic/kafka', () => {
  it('spreads partitions with the server assignor, consumes everything, and rebalances on leave', async () => {
    const topic = 'kip848';
    const admin = new Admin({ clientId: 'a', bootstrapBrokers: [node.bootstrap] });
    await admin.createTopics({ topics: [topic], partitions: 6, replicas: 1 });
    await admin.close();
    const producer = new Producer({ clientId: 'p', bootstrapBrokers: [node.bootstrap], serializers: stringSerializers });
    await producer.send({ messages: Array.from({ length: 60 }, (_, i) => ({ topic, key: `k${i}`, value: `v${i}`, partition: i % 6 })) });
    await producer.close();

    const received = new Set<string>();
    const consumers: Consumer<string, string, string, string>[] = [];
    const streams: Awaited<ReturnType<Consumer<string, string, string, string>['consume']>>[] = [];
    for (let i = 0; i < 3; i++) {
      const c = new Consumer({ clientId: `c${i}`, groupId: 'g848', groupProtocol: 'consumer', bootstrapBrokers: [node.bootstrap], deserializers: stringDeserializers });
      consumers.push(c);
      const stream = await c.consume({ topics: [topic], mode: 'earliest', autocommit: 100 });
      stream.on('data', (m) => received.add(m.value));
      streams.push(stream);
    }
    // A stream is closed before its consumer, so no fetch is started on a closed client.
    const stop = async (i: number) => {
      await streams[i]!.close().catch(() => undefined);
      await consumers[i]!.close().catch(() => undefined);
    };
    const counts = () => consumers.map((c) => (c.assignments ?? []).reduce((n, a) => n + a.partitions.length, 0));
    try {
      await waitFor('each member to own two partitions', () => counts().every((n) => n === 2));
      const owned = consumers.flatMap((c) => (c.assignments ?? []).flatMap((a) => a.partitions));
      expect(new Set(owned).size).toBe(6);
      await waitFor('all 60 records', () => received.size === 60);

      await stop(2);
      await waitFor('the two survivors to own three each', () => counts().slice(0, 2).every((n) => n === 3));
      const check = new Admin({ clientId: 'a2', bootstrapBrokers: [node.bootstrap] });
      const groups = await check.listGroups({ types: ['consumer'] });
      await check.close();
      expect([...groups.values()].map((g) => g.id)).toContain('g848');
    } finally {
      for (let i = 0; i < consumers.length; i++) await stop(i);
    }
  }, 90_000);
});
