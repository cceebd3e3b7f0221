/**
 * kafkajs 2.2.4 (old, non-flexible versions: Produce v7, Fetch v11, Metadata v6, ListOffsets v3,
 * CreateTopics v3, DescribeConfigs v2 …) against a real node process.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CompressionCodecs, CompressionTypes, Kafka, logLevel, type Admin, type Consumer, type KafkaMessage } from 'kafkajs';
import { compress, decompress } from '../../src/protocol/compression.js';
import { startNode, type RunningNode } from '../helpers/node.js';

// kafkajs ships gzip only; the other codecs are plugged in through its registry, backed by the
// same codec module the broker uses (so the bytes on the wire are the standard formats).
const codec = (id: number) => () => ({
  compress: async (encoder: { buffer: Buffer }) => compress(id, encoder.buffer),
  decompress: async (buf: Buffer) => decompress(id, buf),
});
CompressionCodecs[CompressionTypes.Snappy] = codec(2);
CompressionCodecs[CompressionTypes.LZ4] = codec(3);
CompressionCodecs[CompressionTypes.ZSTD] = codec(4);

let node: RunningNode;
let kafka: Kafka;
let admin: Admin;

const client = (): Kafka =>
  new Kafka({ clientId: 'fjord-test', brokers: [node.bootstrap], logLevel: logLevel.NOTHING, retry: { retries: 3, initialRetryTime: 100 }, connectionTimeout: 2000, requestTimeout: 10000 });

/** Reads `count` messages of a topic from the beginning with a plain (group) consumer. */
async function consumeAll(topic: string, count: number, groupId = `g-${topic}-${Math.random()}`): Promise<(KafkaMessage & { partition: number })[]> {
  const consumer: Consumer = kafka.consumer({ groupId, maxWaitTimeInMs: 200, sessionTimeout: 10000, heartbeatInterval: 500 });
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  const got: (KafkaMessage & { partition: number })[] = [];
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`only ${got.length}/${count} messages of ${topic}`)), 30000);
    void consumer.run({
      eachMessage: async ({ message, partition }) => {
        got.push({ ...message, partition });
        if (got.length >= count) {
          clearTimeout(timer);
          resolve();
        }
      },
    });
  });
  await consumer.disconnect();
  return got;
}

beforeAll(async () => {
  // The ACL APIs need an authorizer (without one they answer SECURITY_DISABLED, as Kafka's do);
  // the anonymous PLAINTEXT principal is a super user, so nothing else is restricted.
  node = await startNode({ overrides: { 'num.partitions': 2, 'authorizer.class.name': 'org.apache.kafka.metadata.authorizer.StandardAuthorizer', 'super.users': 'User:ANONYMOUS' } });
  kafka = client();
  admin = kafka.admin();
  await admin.connect();
}, 180_000);

afterAll(async () => {
  await admin?.disconnect();
  await node?.destroy();
});

describe('kafkajs against a Fjord node', () => {
  it('creates topics, sees them in metadata, refuses duplicates and bad replication factors', async () => {
    expect(await admin.createTopics({ topics: [{ topic: 'js-basic', numPartitions: 3 }], waitForLeaders: true })).toBe(true);
    expect(await admin.createTopics({ topics: [{ topic: 'js-basic', numPartitions: 3 }] })).toBe(false);
    const rf3 = await admin.createTopics({ topics: [{ topic: 'js-rf3', numPartitions: 1, replicationFactor: 3 }] }).catch((e: unknown) => e);
    expect((rf3 as { errors: { type: string }[] }).errors[0]!.type).toBe('INVALID_REPLICATION_FACTOR');
    const md = await admin.fetchTopicMetadata({ topics: ['js-basic'] });
    expect(md.topics[0]!.partitions.map((p) => p.partitionId).sort()).toEqual([0, 1, 2]);
    expect(md.topics[0]!.partitions.every((p) => p.leader === 1)).toBe(true);
    const cluster = await admin.describeCluster();
    expect(cluster.controller).toBe(1);
    expect(cluster.brokers).toEqual([{ nodeId: 1, host: '127.0.0.1', port: node.port }]);
    expect(cluster.clusterId).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(await admin.listTopics()).toContain('js-basic');
  });

  it('produces and consumes in every codec with keys, headers and timestamps preserved', async () => {
    await admin.createTopics({ topics: [{ topic: 'js-codecs', numPartitions: 1 }] });
    const producer = kafka.producer();
    await producer.connect();
    const codecs = [CompressionTypes.None, CompressionTypes.GZIP, CompressionTypes.Snappy, CompressionTypes.LZ4, CompressionTypes.ZSTD];
    const ts = Date.now() - 60_000;
    for (const c of codecs) {
      await producer.send({
        topic: 'js-codecs',
        compression: c,
        messages: Array.from({ length: 5 }, (_, i) => ({
          key: `k-${c}-${i}`,
          value: `value ${c} ${i} `.repeat(20),
          headers: { codec: String(c), idx: String(i) },
          timestamp: String(ts + c * 10 + i),
        })),
      });
    }
    await producer.disconnect();
    const got = await consumeAll('js-codecs', 25);
    expect(got.map((m) => Number(m.offset))).toEqual(Array.from({ length: 25 }, (_, i) => i));
    for (const m of got) {
      const c = Number(m.headers!['codec']!.toString());
      const i = Number(m.headers!['idx']!.toString());
      expect(m.key!.toString()).toBe(`k-${c}-${i}`);
      expect(m.value!.toString()).toBe(`value ${c} ${i} `.repeat(20));
      expect(Number(m.timestamp)).toBe(ts + c * 10 + i);
    }
  });

  it('serves messages near message.max.bytes and rejects larger ones', async () => {
    await admin.createTopics({ topics: [{ topic: 'js-large', numPartitions: 1, configEntries: [{ name: 'max.message.bytes', value: '300000' }] }] });
    const producer = kafka.producer({ retry: { retries: 0 } });
    await producer.connect();
    const big = Buffer.alloc(290_000, 7);
    await producer.send({ topic: 'js-large', messages: [{ key: 'big', value: big }] });
    await expect(producer.send({ topic: 'js-large', messages: [{ key: 'huge', value: Buffer.alloc(310_000, 1) }] })).rejects.toThrow(/too large|larger/i);
    await producer.disconnect();
    const got = await consumeAll('js-large', 1);
    expect(got[0]!.value!.equals(big)).toBe(true);
  });

  it('spreads a keyed stream over many partitions and reads every record back', async () => {
    await admin.createTopics({ topics: [{ topic: 'js-many', numPartitions: 32 }] });
    const producer = kafka.producer();
    await producer.connect();
    await producer.send({ topic: 'js-many', messages: Array.from({ length: 400 }, (_, i) => ({ key: `key-${i}`, value: String(i) })) });
    await producer.disconnect();
    const got = await consumeAll('js-many', 400);
    expect(new Set(got.map((m) => m.partition)).size).toBeGreaterThan(20);
    expect(got.map((m) => Number(m.value!.toString())).sort((a, b) => a - b)).toEqual(Array.from({ length: 400 }, (_, i) => i));
  });

  it('idempotent producer gets a producer id and writes each batch once', async () => {
    await admin.createTopics({ topics: [{ topic: 'js-idem', numPartitions: 1 }] });
    const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
    await producer.connect();
    for (let i = 0; i < 5; i++) await producer.send({ topic: 'js-idem', acks: -1, messages: [{ key: 'k', value: `m${i}` }] });
    await producer.disconnect();
    const offsets = await admin.fetchTopicOffsets('js-idem');
    expect(offsets[0]!.high).toBe('5');
    const got = await consumeAll('js-idem', 5);
    expect(got.map((m) => m.value!.toString())).toEqual(['m0', 'm1', 'm2', 'm3', 'm4']);
  });

  it('transactional producer: read_committed sees commits only, read_uncommitted sees everything', async () => {
    await admin.createTopics({ topics: [{ topic: 'js-txn', numPartitions: 1 }] });
    const producer = kafka.producer({ transactionalId: 'js-txn-1', idempotent: true, maxInFlightRequests: 1 });
    await producer.connect();
    for (const [value, commit] of [['c1', true], ['a1', false], ['c2', true]] as const) {
      const t = await producer.transaction();
      await t.send({ topic: 'js-txn', messages: [{ key: 'k', value }] });
      if (commit) await t.commit();
      else await t.abort();
    }
    await producer.disconnect();
    // Three data records and three markers.
    expect((await admin.fetchTopicOffsets('js-txn'))[0]!.high).toBe('6');
    const read = async (readUncommitted: boolean, expected: number): Promise<string[]> => {
      const consumer = kafka.consumer({ groupId: `js-txn-${readUncommitted}`, readUncommitted, maxWaitTimeInMs: 200 });
      await consumer.connect();
      await consumer.subscribe({ topic: 'js-txn', fromBeginning: true });
      const seen: string[] = [];
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`saw ${seen.join(',')}`)), 20_000);
        void consumer.run({
          eachMessage: async ({ message }) => {
            seen.push(message.value!.toString());
            if (seen.length === expected) {
              clearTimeout(timer);
              resolve();
            }
          },
        });
      });
      // Let a wrongly delivered aborted record show up before judging.
      await new Promise((r) => setTimeout(r, 500));
      await consumer.disconnect();
      return seen;
    };
    expect(await read(false, 2)).toEqual(['c1', 'c2']);
    expect(await read(true, 3)).toEqual(['c1', 'a1', 'c2']);
  });

  it('lists offsets: earliest, latest and by timestamp', async () => {
    await admin.createTopics({ topics: [{ topic: 'js-offsets', numPartitions: 1 }] });
    const producer = kafka.producer();
    await producer.connect();
    const base = Date.now() - 100_000;
    for (let i = 0; i < 10; i++) await producer.send({ topic: 'js-offsets', messages: [{ value: `v${i}`, timestamp: String(base + i * 1000) }] });
    await producer.disconnect();
    const latest = await admin.fetchTopicOffsets('js-offsets');
    expect(latest[0]).toMatchObject({ partition: 0, offset: '10', high: '10', low: '0' });
    const byTs = await admin.fetchTopicOffsetsByTimestamp('js-offsets', base + 4500);
    expect(byTs[0]).toMatchObject({ partition: 0, offset: '5' });
    // No record that late: the broker answers -1 and kafkajs substitutes the high watermark.
    const future = await admin.fetchTopicOffsetsByTimestamp('js-offsets', Date.now() + 3_600_000);
    expect(future[0]!.offset).toBe('10');
  });

  it('describes and alters topic and broker configs with sources', async () => {
    await admin.createTopics({ topics: [{ topic: 'js-configs', numPartitions: 1, configEntries: [{ name: 'retention.ms', value: '123456' }] }] });
    const d = await admin.describeConfigs({ resources: [{ type: 2, name: 'js-configs', configNames: ['retention.ms', 'cleanup.policy'] }], includeSynonyms: true });
    const entries = d.resources[0]!.configEntries;
    expect(entries.find((e) => e.configName === 'retention.ms')).toMatchObject({ configValue: '123456', isDefault: false });
    expect(entries.find((e) => e.configName === 'cleanup.policy')).toMatchObject({ configValue: 'delete', isDefault: true });
    await admin.alterConfigs({ validateOnly: false, resources: [{ type: 2, name: 'js-configs', configEntries: [{ name: 'cleanup.policy', value: 'compact' }] }] });
    const after = await admin.describeConfigs({ resources: [{ type: 2, name: 'js-configs' }], includeSynonyms: false });
    const cfg = new Map(after.resources[0]!.configEntries.map((e) => [e.configName, e.configValue]));
    expect(cfg.get('cleanup.policy')).toBe('compact');
    // AlterConfigs replaces the whole set: retention.ms fell back to the broker default.
    expect(cfg.get('retention.ms')).toBe('604800000');
    await expect(admin.alterConfigs({ validateOnly: false, resources: [{ type: 2, name: 'js-configs', configEntries: [{ name: 'retention.ms', value: 'soon' }] }] })).rejects.toThrow();
    const broker = await admin.describeConfigs({ resources: [{ type: 4, name: '1', configNames: ['num.partitions', 'log.segment.bytes'] }], includeSynonyms: false });
    expect(new Map(broker.resources[0]!.configEntries.map((e) => [e.configName, e.configValue])).get('num.partitions')).toBe('2');
  });

  it('creates partitions, deletes records and deletes topics', async () => {
    await admin.createTopics({ topics: [{ topic: 'js-admin', numPartitions: 1 }] });
    await admin.createPartitions({ topicPartitions: [{ topic: 'js-admin', count: 4 }] });
    const md = await admin.fetchTopicMetadata({ topics: ['js-admin'] });
    expect(md.topics[0]!.partitions).toHaveLength(4);
    const producer = kafka.producer();
    await producer.connect();
    await producer.send({ topic: 'js-admin', messages: Array.from({ length: 10 }, (_, i) => ({ value: `v${i}`, partition: 0 })) });
    await producer.disconnect();
    await admin.deleteTopicRecords({ topic: 'js-admin', partitions: [{ partition: 0, offset: '6' }] });
    const offs = await admin.fetchTopicOffsets('js-admin');
    expect(offs.find((o) => o.partition === 0)).toMatchObject({ low: '6', high: '10' });
    await admin.deleteTopics({ topics: ['js-admin'] });
    expect(await admin.listTopics()).not.toContain('js-admin');
    // The name is free again at once, with a fresh, empty log.
    await admin.createTopics({ topics: [{ topic: 'js-admin', numPartitions: 1 }] });
    const fresh = await admin.fetchTopicOffsets('js-admin');
    expect(fresh[0]).toMatchObject({ low: '0', high: '0' });
  });

  it('partition reassignment: the only assignment is this node, none is ever in progress', async () => {
    await admin.createTopics({ topics: [{ topic: 'js-reassign', numPartitions: 2 }] });
    await admin.alterPartitionReassignments({ topics: [{ topic: 'js-reassign', partitionAssignment: [{ partition: 0, replicas: [1] }] }] });
    await expect(admin.alterPartitionReassignments({ topics: [{ topic: 'js-reassign', partitionAssignment: [{ partition: 1, replicas: [1, 2] }] }] })).rejects.toThrow();
    expect(await admin.listPartitionReassignments({ topics: [{ topic: 'js-reassign', partitions: [0, 1] }] })).toEqual({ topics: [] });
  });

  it('stores, describes and deletes ACLs', async () => {
    const { AclResourceTypes, AclOperationTypes, AclPermissionTypes, ResourcePatternTypes } = await import('kafkajs');
    const acl = (name: string, op: number) => ({
      resourceType: AclResourceTypes.TOPIC,
      resourceName: name,
      resourcePatternType: ResourcePatternTypes.LITERAL,
      principal: 'User:alice',
      host: '*',
      operation: op,
      permissionType: AclPermissionTypes.ALLOW,
    });
    await admin.createAcls({ acl: [acl('acl-a', AclOperationTypes.READ), acl('acl-a', AclOperationTypes.WRITE), acl('acl-b', AclOperationTypes.READ)] });
    await expect(admin.createAcls({ acl: [{ ...acl('acl-c', AclOperationTypes.READ), principal: 'alice' }] })).rejects.toThrow();
    const all = await admin.describeAcls({
      resourceType: AclResourceTypes.ANY,
      resourcePatternType: ResourcePatternTypes.ANY,
      operation: AclOperationTypes.ANY,
      permissionType: AclPermissionTypes.ANY,
    });
    const a = all.resources.find((r) => r.resourceName === 'acl-a')!;
    expect(a.acls.map((x) => x.operation).sort()).toEqual([AclOperationTypes.READ, AclOperationTypes.WRITE].sort());
    const deleted = await admin.deleteAcls({
      filters: [{ resourceType: AclResourceTypes.TOPIC, resourceName: 'acl-a', resourcePatternType: ResourcePatternTypes.LITERAL, operation: AclOperationTypes.ANY, permissionType: AclPermissionTypes.ANY }],
    });
    expect(deleted.filterResponses[0]!.matchingAcls).toHaveLength(2);
    const left = await admin.describeAcls({ resourceType: AclResourceTypes.ANY, resourcePatternType: ResourcePatternTypes.ANY, operation: AclOperationTypes.ANY, permissionType: AclPermissionTypes.ANY });
    expect(left.resources.map((r) => r.resourceName)).toEqual(['acl-b']);
  });

  it('keeps topics, configs and data across a restart and continues', async () => {
    await admin.createTopics({ topics: [{ topic: 'js-restart', numPartitions: 2, configEntries: [{ name: 'retention.ms', value: '999999' }] }] });
    let producer = kafka.producer();
    await producer.connect();
    await producer.send({ topic: 'js-restart', messages: Array.from({ length: 20 }, (_, i) => ({ key: `k${i}`, value: `before-${i}` })) });
    await producer.disconnect();
    const idBefore = (await admin.fetchTopicMetadata({ topics: ['js-restart'] })).topics[0];
    await admin.disconnect();
    node = await node.restart();
    kafka = client();
    admin = kafka.admin();
    await admin.connect();
    expect(node.logs()).toContain('"cleanShutdown":true');
    expect((await admin.fetchTopicMetadata({ topics: ['js-restart'] })).topics[0]).toEqual(idBefore);
    const d = await admin.describeConfigs({ resources: [{ type: 2, name: 'js-restart', configNames: ['retention.ms'] }], includeSynonyms: false });
    expect(d.resources[0]!.configEntries[0]!.configValue).toBe('999999');
    // ACLs live in the metadata log too.
    const acls = await admin.describeAcls({ resourceType: 1, resourcePatternType: 1, operation: 1, permissionType: 1 });
    expect(acls.resources.map((r) => r.resourceName)).toEqual(['acl-b']);
    producer = kafka.producer();
    await producer.connect();
    await producer.send({ topic: 'js-restart', messages: Array.from({ length: 20 }, (_, i) => ({ key: `k${i}`, value: `after-${i}` })) });
    await producer.disconnect();
    const got = await consumeAll('js-restart', 40);
    const values = got.map((m) => m.value!.toString());
    for (let i = 0; i < 20; i++) {
      expect(values).toContain(`before-${i}`);
      expect(values).toContain(`after-${i}`);
    }
  });
});
