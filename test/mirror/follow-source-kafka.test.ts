/**
 * The mirror follows its source (Apache Kafka 4.x, one broker shared by the file) in what changes
 * after a topic started: DeleteRecords moves the destination's log start; partitions added on
 * the source are added and mirrored here; a source topic deleted and recreated under the same
 * name fails the partition for good without copying the new topic's data, configs or offsets;
 * a synced topic config cannot be edited here while an excluded key can; group
 * offset sync clamps to the high watermark, leaves groups active here alone, skips paused topics
 * and stops with `mirror.groups.sync.enabled=false`.
 *
 * "A sync round ran" is proven, not waited for by time: a config change on a sentinel topic is
 * made and seen here twice in a row; the second sighting is from a round that began after the
 * first ended, and in a round group offsets are synced before topic configs.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Admin as PlatformaticAdmin } from '@platformatic/kafka';
import { Kafka, logLevel, type Admin } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigOp, MirrorAdmin } from '../../src/admin/mirror-admin.js';
import { clusterMirrors, type CliRun } from '../helpers/mirror-cli.js';
import { startNode, type RunningNode } from '../helpers/node.js';
import { startKafkaSource, type KafkaBroker } from './helpers/kafka-source.js';
import { waitFor } from '../helpers/wait.js';

const MIRROR = 'follow';
let kafka: KafkaBroker;
let fjord: RunningNode;
let src: Admin;
let dst: Admin;
const work = mkdtempSync(join(tmpdir(), 'fjord-follow-source-'));

const cli = (...argv: string[]): Promise<CliRun> => clusterMirrors(fjord.bootstrap, ...argv);

interface Row {
  topic: string;
  partition: number;
  state: string;
  lag: number;
  retryAttempt: number;
  errorMessage: string | null;
}

async function rows(topic: string): Promise<Row[]> {
  const r = await cli('--describe', '--mirror', MIRROR, '--json');
  if (r.code !== 0) throw new Error(r.err);
  return (JSON.parse(r.out) as Row[]).filter((p) => p.topic === topic);
}

async function produce(topic: string, values: readonly string[], partition = 0): Promise<void> {
  const p = new Kafka({ clientId: 'follow', brokers: [kafka.bootstrap], logLevel: logLevel.NOTHING }).producer({ allowAutoTopicCreation: false });
  await p.connect();
  try {
    await p.send({ topic, acks: -1, messages: values.map((value) => ({ partition, value })) });
  } finally {
    await p.disconnect();
  }
}

async function startMirrored(topic: string, partitions = 1, values: readonly string[] = [], configEntries: { name: string; value: string }[] = []): Promise<void> {
  await src.createTopics({ topics: [{ topic, numPartitions: partitions, configEntries }], waitForLeaders: true });
  if (values.length > 0) await produce(topic, values);
  expect((await cli('--start', '--mirror', MIRROR, '--topics', topic)).code).toBe(0);
  await waitFor(`${topic} mirrored`, async () => {
    const r = await rows(topic);
    return r.length === partitions && r.every((p) => p.state === 'MIRRORING' && p.lag === 0);
  });
}

async function destConfig(topic: string, name: string): Promise<string | undefined> {
  const r = await dst.describeConfigs({ includeSynonyms: false, resources: [{ type: 2, name: topic }] });
  return r.resources[0]?.configEntries.find((e) => e.configName === name)?.configValue;
}

async function destOffset(groupId: string, topic: string): Promise<string | undefined> {
  const r = await dst.fetchOffsets({ groupId, topics: [topic] });
  return r[0]?.partitions.find((p) => p.partition === 0)?.offset;
}

async function setGroupSync(value: 'true' | 'false'): Promise<void> {
  const admin = new MirrorAdmin({ bootstrapServers: [fjord.bootstrap] });
  try {
    await admin.alterMirrorConfig(MIRROR, [{ name: 'mirror.groups.sync.enabled', op: ConfigOp.SET, value }]);
  } finally {
    admin.close();
  }
}

const SENTINEL = 'follow-sentinel';
let sentinelValue = 600_000;

/** Two sync rounds in a row have run from start to end since the call (see the header). */
async function syncRounds(): Promise<void> {
  for (let i = 0; i < 2; i++) {
    const v = String(++sentinelValue);
    await src.alterConfigs({ validateOnly: false, resources: [{ type: 2, name: SENTINEL, configEntries: [{ name: 'retention.ms', value: v }] }] });
    await waitFor(`sync round ${i + 1}`, async () => (await destConfig(SENTINEL, 'retention.ms')) === v);
  }
}

beforeAll(async () => {
  [kafka, fjord] = await Promise.all([startKafkaSource(), startNode({ overrides: { 'mirror.metadata.refresh.interval.ms': 500 } })]);
  src = new Kafka({ clientId: 'follow-src', brokers: [kafka.bootstrap], logLevel: logLevel.NOTHING }).admin();
  dst = new Kafka({ clientId: 'follow-dst', brokers: [fjord.bootstrap], logLevel: logLevel.NOTHING }).admin();
  await Promise.all([src.connect(), dst.connect()]);
  const cfg = join(work, 'follow.properties');
  writeFileSync(cfg, `bootstrap.servers=${kafka.bootstrap}\nmirror.fetch.wait.max.ms=100\nmirror.topic.properties.exclude=min.insync.replicas,segment.ms\n`);
  expect((await cli('--create', '--mirror', MIRROR, '--mirror-config', cfg)).code).toBe(0);
  await startMirrored(SENTINEL);
}, 180_000);

afterAll(async () => {
  await Promise.all([src?.disconnect(), dst?.disconnect()]);
  await Promise.all([kafka?.stop(), fjord?.destroy()]);
  rmSync(work, { recursive: true, force: true });
});

describe('the mirror follows its Apache Kafka source', () => {
  it('moves the log start offset when records are deleted on the source', async () => {
    const topic = 'follow-logstart';
    await startMirrored(topic, 1, Array.from({ length: 30 }, (_, i) => `v${i}`));
    // DeleteRecords v2 (kafkajs sends v0, which Kafka 4 no longer takes).
    const deleter = new PlatformaticAdmin({ clientId: 'follow-delete', bootstrapBrokers: [kafka.bootstrap] });
    try {
      await deleter.deleteRecords({ topics: [{ name: topic, partitions: [{ partition: 0, offset: 20n }] }] });
    } finally {
      await deleter.close();
    }
    await waitFor('destination log start 20', async () => (await dst.fetchTopicOffsets(topic))[0]?.low === '20');
    const consumed: string[] = [];
    const consumer = new Kafka({ clientId: 'follow', brokers: [fjord.bootstrap], logLevel: logLevel.NOTHING }).consumer({ groupId: 'follow-logstart-reader' });
    await consumer.connect();
    await consumer.subscribe({ topic, fromBeginning: true });
    await consumer.run({ eachMessage: async ({ message }) => void consumed.push(message.value?.toString() ?? '') });
    await waitFor('consumed the rest', () => consumed.length >= 10);
    await consumer.disconnect();
    expect(consumed[0]).toBe('v20');
  });

  it('adds and mirrors partitions added on the source', async () => {
    const topic = 'follow-grow';
    await startMirrored(topic, 1, ['a', 'b']);
    await src.createPartitions({ topicPartitions: [{ topic, count: 3 }] });
    await produce(topic, ['p1-a', 'p1-b', 'p1-c'], 1);
    await produce(topic, ['p2-a'], 2);
    await waitFor('three partitions mirroring, caught up', async () => {
      const r = await rows(topic);
      return r.length === 3 && r.every((p) => p.state === 'MIRRORING' && p.lag === 0);
    });
    const offsets = await dst.fetchTopicOffsets(topic);
    expect(offsets.map((o) => [o.partition, o.high]).sort()).toEqual([
      [0, '2'],
      [1, '3'],
      [2, '1'],
    ]);
  });

  it('fails a source topic deleted and recreated under the same name for good, copying nothing of the new one', async () => {
    const topic = 'follow-recreate';
    await startMirrored(topic, 1, ['old-0', 'old-1', 'old-2']);
    await src.deleteTopics({ topics: [topic] });
    await waitFor('recreated on the source', async () => {
      await src.createTopics({ topics: [{ topic, numPartitions: 1, configEntries: [{ name: 'max.message.bytes', value: '200000' }] }], waitForLeaders: true });
      return true;
    });
    await produce(topic, ['new-0', 'new-1', 'new-2', 'new-3', 'new-4']);
    await src.setOffsets({ groupId: 'follow-recreate-group', topic, partitions: [{ partition: 0, offset: '4' }] });
    await waitFor('failed', async () => (await rows(topic)).some((p) => p.state === 'FAILED'));
    const [p] = await rows(topic);
    expect(p?.retryAttempt).toBe(-1);
    expect(p?.errorMessage).toMatch(/The source topic (was recreated with topic id \S+|is deleted)\./);
    await syncRounds();
    expect((await dst.fetchTopicOffsets(topic))[0]?.high).toBe('3');
    expect(await destConfig(topic, 'max.message.bytes')).not.toBe('200000');
    expect(await destOffset('follow-recreate-group', topic)).toBe('-1');
    expect((await cli('--stop', '--mirror', MIRROR, '--topics', topic)).code).toBe(0);
    await waitFor('stopped', async () => (await rows(topic)).every((r) => r.state === 'STOPPED'));
  });

  it('refuses a synced topic config edited here, and leaves an excluded one as edited', async () => {
    const topic = 'follow-configs';
    await startMirrored(topic, 1, [], [
      { name: 'retention.ms', value: '3600000' },
      { name: 'segment.ms', value: '7200000' },
    ]);
    await waitFor('synced', async () => (await destConfig(topic, 'retention.ms')) === '3600000');
    expect(await destConfig(topic, 'segment.ms')).not.toBe('7200000');
    // A synced key is the source's while the topic is mirrored: changing it here is refused.
    await expect(
      dst.alterConfigs({
        validateOnly: false,
        resources: [{ type: 2, name: topic, configEntries: [{ name: 'retention.ms', value: '1000' }, { name: 'segment.ms', value: '5400000' }] }],
      }),
    ).rejects.toThrow();
    expect(await destConfig(topic, 'retention.ms')).toBe('3600000');
    // An excluded key is this cluster's own (AlterConfigs restates the synced one as it is).
    await dst.alterConfigs({
      validateOnly: false,
      resources: [{ type: 2, name: topic, configEntries: [{ name: 'retention.ms', value: '3600000' }, { name: 'segment.ms', value: '5400000' }] }],
    });
    await syncRounds();
    expect(await destConfig(topic, 'segment.ms')).toBe('5400000');
    expect(await destConfig(topic, 'retention.ms')).toBe('3600000');
  });

  it('syncs group offsets clamped to the high watermark, never over a group active here, not while paused or disabled', async () => {
    const topic = 'follow-groups';
    await startMirrored(topic, 1, Array.from({ length: 10 }, (_, i) => `g${i}`));
    // Kafka takes a commit past its log end; here it is clamped to what a consumer can read.
    await src.setOffsets({ groupId: 'ahead', topic, partitions: [{ partition: 0, offset: '1000' }] });
    await waitFor('clamped', async () => (await destOffset('ahead', topic)) === '10');

    // A group with a live member here is left alone.
    const consumer = new Kafka({ clientId: 'follow', brokers: [fjord.bootstrap], logLevel: logLevel.NOTHING }).consumer({ groupId: 'live-here' });
    await consumer.connect();
    await consumer.subscribe({ topic, fromBeginning: true });
    let seen = 0;
    await consumer.run({ autoCommitThreshold: 1, eachMessage: async () => void seen++ });
    await waitFor('live group consumed and committed', async () => seen === 10 && (await destOffset('live-here', topic)) === '10');
    await src.setOffsets({ groupId: 'live-here', topic, partitions: [{ partition: 0, offset: '3' }] });
    await syncRounds();
    expect(await destOffset('live-here', topic)).toBe('10');
    await consumer.disconnect();
    await waitFor('synced once the group is empty here', async () => (await destOffset('live-here', topic)) === '3');

    // Paused topics are not synced; resumed, they are.
    expect((await cli('--pause', '--mirror', MIRROR, '--topics', topic)).code).toBe(0);
    await waitFor('paused', async () => (await rows(topic)).every((p) => p.state === 'PAUSED'));
    await src.setOffsets({ groupId: 'ahead', topic, partitions: [{ partition: 0, offset: '4' }] });
    await syncRounds();
    expect(await destOffset('ahead', topic)).toBe('10');
    expect((await cli('--resume', '--mirror', MIRROR, '--topics', topic)).code).toBe(0);
    await waitFor('synced after resume', async () => (await destOffset('ahead', topic)) === '4');

    // mirror.groups.sync.enabled=false stops the group sync alone.
    await setGroupSync('false');
    await src.setOffsets({ groupId: 'ahead', topic, partitions: [{ partition: 0, offset: '6' }] });
    await syncRounds();
    expect(await destOffset('ahead', topic)).toBe('4');
    await setGroupSync('true');
    await waitFor('synced when enabled again', async () => (await destOffset('ahead', topic)) === '6');
  });
});
