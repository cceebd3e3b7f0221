/**
 * @platformatic/kafka 1.35 (flexible versions only: ApiVersions v3-4, Metadata v9-12, Produce
 * v7-11, Fetch v12-17, ListOffsets v5-9, CreateTopics v7, DescribeConfigs v4 …) against a real
 * node process.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Admin, Consumer, Producer, stringDeserializers, stringSerializers } from '@platformatic/kafka';
import { startNode, type RunningNode } from '../helpers/node.js';

let node: RunningNode;
let admin: Admin;

const base = () => ({ clientId: 'fjord-plt', bootstrapBrokers: [node.bootstrap], retries: 2, retryDelay: 200, connectTimeout: 2000 });

interface Got {
  key: string;
  value: string;
  headers: Map<string, string>;
  partition: number;
  offset: bigint;
  timestamp: bigint;
}

async function consume(topic: string, count: number): Promise<Got[]> {
  const consumer = new Consumer({ ...base(), groupId: `plt-${topic}-${Math.random()}`, deserializers: stringDeserializers, maxWaitTime: 200 });
  const stream = await consumer.consume({ topics: [topic], mode: 'earliest', autocommit: false, sessionTimeout: 10000, heartbeatInterval: 500 });
  const out: Got[] = [];
  const timer = setTimeout(() => void stream.close(), 30_000);
  for await (const m of stream) {
    out.push({
      key: m.key as string,
      value: m.value as string,
      headers: new Map([...(m.headers as Map<string, string>)].map(([k, v]) => [String(k), String(v)])),
      partition: m.partition,
      offset: m.offset,
      timestamp: m.timestamp,
    });
    if (out.length >= count) break;
  }
  clearTimeout(timer);
  await stream.close();
  await consumer.close(true);
  return out;
}

beforeAll(async () => {
  node = await startNode({ overrides: { 'num.partitions': 3 } });
  admin = new Admin(base());
}, 180_000);

afterAll(async () => {
  await admin?.close();
  await node?.destroy();
});

describe('@platformatic/kafka against a Fjord node', () => {
  it('creates topics and reads metadata with topic ids and leader epochs', async () => {
    const created = await admin.createTopics({ topics: ['plt-basic'], partitions: 4, replicas: 1 });
    expect(created[0]).toMatchObject({ name: 'plt-basic', partitions: 4 });
    const md = await admin.metadata({ topics: ['plt-basic'] });
    const t = md.topics.get('plt-basic')!;
    expect(t.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(t.partitions).toHaveLength(4);
    expect(t.partitions.every((p) => p.leader === 1 && p.leaderEpoch === 0)).toBe(true);
    expect([...md.brokers.values()][0]).toMatchObject({ host: '127.0.0.1', port: node.port });
    await expect(admin.createTopics({ topics: ['plt-basic'], partitions: 1, replicas: 1 })).rejects.toThrow();
  });

  it('produces and consumes in every codec with keys, headers and timestamps preserved', async () => {
    await admin.createTopics({ topics: ['plt-codecs'], partitions: 1, replicas: 1 });
    const producer = new Producer({ ...base(), serializers: stringSerializers });
    // zstd is left out: this client's zstd needs Node 22's zlib.
    const codecs = ['none', 'gzip', 'snappy', 'lz4'] as const;
    const ts = BigInt(Date.now() - 30_000);
    for (const [ci, compression] of codecs.entries()) {
      await producer.send({
        compression,
        messages: Array.from({ length: 4 }, (_, i) => ({
          topic: 'plt-codecs',
          partition: 0,
          key: `${compression}-${i}`,
          value: `${compression} payload ${i} `.repeat(30),
          headers: new Map([['codec', compression], ['i', String(i)]]),
          timestamp: ts + BigInt(ci * 10 + i),
        })),
      });
    }
    await producer.close();
    const got = await consume('plt-codecs', 16);
    expect(got.map((m) => m.offset)).toEqual(Array.from({ length: 16 }, (_, i) => BigInt(i)));
    for (const [n, m] of got.entries()) {
      const compression = codecs[Math.floor(n / 4)]!;
      const i = n % 4;
      expect(m.key).toBe(`${compression}-${i}`);
      expect(m.value).toBe(`${compression} payload ${i} `.repeat(30));
      expect(m.headers.get('codec')).toBe(compression);
      expect(m.timestamp).toBe(ts + BigInt(Math.floor(n / 4) * 10 + i));
    }
  });

  it('idempotent producer and large messages near max.message.bytes', async () => {
    await admin.createTopics({ topics: ['plt-idem'], partitions: 1, replicas: 1, configs: [{ name: 'max.message.bytes', value: '200000' }] });
    const producer = new Producer({ ...base(), serializers: stringSerializers, idempotent: true, acks: -1 });
    const big = 'x'.repeat(190_000);
    await producer.send({ messages: [{ topic: 'plt-idem', partition: 0, key: 'big', value: big }] });
    for (let i = 0; i < 5; i++) await producer.send({ messages: [{ topic: 'plt-idem', partition: 0, key: 'k', value: `v${i}` }] });
    await expect(producer.send({ messages: [{ topic: 'plt-idem', partition: 0, key: 'huge', value: 'y'.repeat(250_000) }] })).rejects.toThrow();
    await producer.close();
    const got = await consume('plt-idem', 6);
    expect(got[0]!.value).toBe(big);
    expect(got.slice(1).map((m) => m.value)).toEqual(['v0', 'v1', 'v2', 'v3', 'v4']);
  });

  it('lists offsets, deletes records, alters configs incrementally and deletes topics', async () => {
    await admin.createTopics({ topics: ['plt-admin'], partitions: 1, replicas: 1 });
    const producer = new Producer({ ...base(), serializers: stringSerializers });
    const t0 = BigInt(Date.now() - 50_000);
    for (let i = 0; i < 8; i++) await producer.send({ messages: [{ topic: 'plt-admin', partition: 0, value: `v${i}`, timestamp: t0 + BigInt(i * 1000) }] });
    await producer.close();
    const list = async (timestamp: bigint) =>
      (await admin.listOffsets({ topics: [{ name: 'plt-admin', partitions: [{ partitionIndex: 0, timestamp }] }] }))[0]!.partitions[0]!;
    expect((await list(-2n)).offset).toBe(0n);
    expect((await list(-1n)).offset).toBe(8n);
    expect((await list(t0 + 2500n)).offset).toBe(3n);
    const maxTs = await list(-3n);
    expect(maxTs.offset).toBe(7n);
    expect(maxTs.timestamp).toBe(t0 + 7000n);

    const deleted = await admin.deleteRecords({ topics: [{ name: 'plt-admin', partitions: [{ partition: 0, offset: 5n }] }] });
    expect(deleted[0]!.partitions[0]!.lowWatermark).toBe(5n);
    expect((await list(-2n)).offset).toBe(5n);

    await admin.incrementalAlterConfigs({
      resources: [{ resourceType: 2, resourceName: 'plt-admin', configs: [{ name: 'cleanup.policy', configOperation: 2, value: 'compact' }, { name: 'retention.ms', configOperation: 0, value: '3600000' }] }],
    });
    const described = await admin.describeConfigs({ resources: [{ resourceType: 2, resourceName: 'plt-admin', configurationKeys: ['cleanup.policy', 'retention.ms', 'segment.bytes'] }], includeSynonyms: true });
    const cfg = new Map(described[0]!.configs.map((c) => [c.name, c]));
    expect(cfg.get('cleanup.policy')).toMatchObject({ value: 'delete,compact', configSource: 1 });
    expect(cfg.get('retention.ms')).toMatchObject({ value: '3600000', configSource: 1 });
    expect(cfg.get('segment.bytes')).toMatchObject({ value: '1073741824', configSource: 5 });
    // log.retention.ms is unset (log.retention.hours supplies the broker's value), so as in Kafka only the override is listed.
    expect(cfg.get('retention.ms')!.synonyms.map((s) => s.name)).toEqual(['retention.ms']);
    expect(cfg.get('segment.bytes')!.synonyms.map((s) => s.name)).toEqual(['log.segment.bytes']);

    const broker = await admin.describeConfigs({ resources: [{ resourceType: 4, resourceName: '1', configurationKeys: ['num.partitions'] }] });
    expect(broker[0]!.configs[0]).toMatchObject({ name: 'num.partitions', value: '3', configSource: 4 });
    // A new cluster carries min.insync.replicas as a cluster-wide dynamic default, as Kafka 4.x does.
    const minIsr = await admin.describeConfigs({ resources: [{ resourceType: 2, resourceName: 'plt-admin', configurationKeys: ['min.insync.replicas'] }] });
    expect(minIsr[0]!.configs[0]).toMatchObject({ name: 'min.insync.replicas', value: '1', configSource: 3 });

    await admin.deleteTopics({ topics: ['plt-admin'] });
    expect(await admin.listTopics()).not.toContain('plt-admin');
  });

  it('alters and describes client quotas', async () => {
    const alter = await admin.alterClientQuotas({
      entries: [
        { entities: [{ entityType: 'user', entityName: 'alice' }], ops: [{ key: 'producer_byte_rate', value: 1024, remove: false }, { key: 'request_percentage', value: 12.5, remove: false }] },
        { entities: [{ entityType: 'client-id', entityName: null }], ops: [{ key: 'consumer_byte_rate', value: 2048, remove: false }] },
      ],
    });
    expect(alter.map((e) => e.errorCode)).toEqual([0, 0]);
    // A byte rate must be a whole number.
    await expect(
      admin.alterClientQuotas({ entries: [{ entities: [{ entityType: 'user', entityName: 'bob' }], ops: [{ key: 'producer_byte_rate', value: 1.5, remove: false }] }] }),
    ).rejects.toThrow();
    const alice = await admin.describeClientQuotas({ components: [{ entityType: 'user', matchType: 0, match: 'alice' }] });
    expect(alice[0]!.entity).toEqual([{ entityType: 'user', entityName: 'alice' }]);
    expect(new Map(alice[0]!.values.map((v) => [v.key, v.value]))).toEqual(new Map([['producer_byte_rate', 1024], ['request_percentage', 12.5]]));
    const defaults = await admin.describeClientQuotas({ components: [{ entityType: 'client-id', matchType: 1 }] });
    expect(defaults[0]!.values).toEqual([{ key: 'consumer_byte_rate', value: 2048 }]);
    await admin.alterClientQuotas({ entries: [{ entities: [{ entityType: 'user', entityName: 'alice' }], ops: [{ key: 'producer_byte_rate', remove: true }, { key: 'request_percentage', remove: true }] }] });
    expect(await admin.describeClientQuotas({ components: [{ entityType: 'user', matchType: 2 }] })).toEqual([]);
  });

  it('continues after a node restart', async () => {
    await admin.createTopics({ topics: ['plt-restart'], partitions: 2, replicas: 1 });
    let producer = new Producer({ ...base(), serializers: stringSerializers });
    await producer.send({ messages: Array.from({ length: 10 }, (_, i) => ({ topic: 'plt-restart', key: `k${i}`, value: `before-${i}` })) });
    await producer.close();
    const idBefore = (await admin.metadata({ topics: ['plt-restart'] })).topics.get('plt-restart')!.id;
    await admin.close();
    node = await node.restart();
    admin = new Admin(base());
    expect((await admin.metadata({ topics: ['plt-restart'] })).topics.get('plt-restart')!.id).toBe(idBefore);
    producer = new Producer({ ...base(), serializers: stringSerializers });
    await producer.send({ messages: Array.from({ length: 10 }, (_, i) => ({ topic: 'plt-restart', key: `k${i}`, value: `after-${i}` })) });
    await producer.close();
    const got = await consume('plt-restart', 20);
    const values = new Set(got.map((m) => m.value));
    for (let i = 0; i < 10; i++) {
      expect(values.has(`before-${i}`)).toBe(true);
      expect(values.has(`after-${i}`)).toBe(true);
    }
  });
});
