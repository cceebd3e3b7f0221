/**
 * Apache Kafka 4.x as the source (started by the interop harness's launcher) and a Fjord node
 * process as the destination, driven through `fjord cluster-mirrors` and kafkajs: start,
 * byte-identical segments, read-only while mirroring and paused, pause/resume, stop (writable
 * afterwards, for kafkajs too), source topic deletion shown as a non-retryable failure, and
 * deletion of the mirror once everything is stopped.
 */
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CompressionTypes, Kafka, logLevel, type Admin } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clusterMirrors, type CliRun } from '../helpers/mirror-cli.js';
import { startNode, type RunningNode } from '../helpers/node.js';
import { startKafkaSource as startKafkaBroker, type KafkaBroker } from './helpers/kafka-source.js';
import { waitFor } from '../helpers/wait.js';

let kafka: KafkaBroker;
let kafkaAdmin: Admin;
let fjord: RunningNode;
const work = mkdtempSync(join(tmpdir(), 'fjord-mirror-kafka-src-'));

beforeAll(async () => {
  [kafka, fjord] = await Promise.all([startKafkaBroker(), startNode()]);
  kafkaAdmin = new Kafka({ clientId: 'scn', brokers: [kafka.bootstrap], logLevel: logLevel.NOTHING }).admin();
  await kafkaAdmin.connect();
}, 120_000);

afterAll(async () => {
  await kafkaAdmin?.disconnect();
  await Promise.all([kafka?.stop(), fjord?.destroy()]);
  rmSync(work, { recursive: true, force: true });
});

const cli = (...argv: string[]): Promise<CliRun> => clusterMirrors(fjord.bootstrap, ...argv);

async function partitions(): Promise<{ topic: string; partition: number; state: string; lag: number; errorMessage: string | null; retryAttempt: number }[]> {
  const r = await cli('--describe', '--mirror', 'from-kafka', '--json');
  if (r.code !== 0) throw new Error(r.err);
  return JSON.parse(r.out) as never;
}

function segments(dir: string): Buffer {
  const files = readdirSync(dir).filter((f) => f.endsWith('.log')).sort();
  return Buffer.concat(files.map((f) => readFileSync(join(dir, f))));
}

async function produceTo(bootstrap: string, topic: string, count: number, compression = CompressionTypes.None): Promise<void> {
  const p = new Kafka({ clientId: 'scn', brokers: [bootstrap], logLevel: logLevel.NOTHING, retry: { retries: 0 } }).producer({ allowAutoTopicCreation: false });
  await p.connect();
  try {
    await p.send({ topic, acks: -1, compression, messages: Array.from({ length: count }, (_, i) => ({ partition: 0, value: `${topic}-${i}`.padEnd(80, '~') })) });
  } finally {
    await p.disconnect();
  }
}

describe('Apache Kafka → Fjord node, through the CLI', () => {
  it('mirrors, pauses, resumes, stops and deletes', async () => {
    const topic = 'inventory';
    await kafkaAdmin.createTopics({ topics: [{ topic, numPartitions: 1 }], waitForLeaders: true });
    await produceTo(kafka.bootstrap, topic, 30, CompressionTypes.GZIP);
    await produceTo(kafka.bootstrap, topic, 30);
    const cfg = join(work, 'from-kafka.properties');
    writeFileSync(cfg, `bootstrap.servers=${kafka.bootstrap}\nmirror.fetch.wait.max.ms=100\n`);
    expect((await cli('--create', '--mirror', 'from-kafka', '--mirror-config', cfg)).code).toBe(0);
    expect((await cli('--start', '--mirror', 'from-kafka', '--topics', 'inv.*')).out).toBe(`Started mirroring of topic ${topic}.`);
    const kafkaDir = join(kafka.dataDir, 'logs', `${topic}-0`);
    const fjordDir = join(fjord.dataDir, `${topic}-0`);
    await waitFor('mirrored', async () => (await partitions()).every((p) => p.state === 'MIRRORING' && p.lag === 0));
    await waitFor('segments equal', () => segments(fjordDir).equals(segments(kafkaDir)));
    await expect(produceTo(fjord.bootstrap, topic, 1)).rejects.toThrow();

    expect((await cli('--pause', '--mirror', 'from-kafka', '--topics', topic)).code).toBe(0);
    await waitFor('paused', async () => (await partitions()).every((p) => p.state === 'PAUSED'));
    await produceTo(kafka.bootstrap, topic, 10);
    await new Promise((r) => setTimeout(r, 1000));
    expect(segments(fjordDir).equals(segments(kafkaDir))).toBe(false);
    await expect(produceTo(fjord.bootstrap, topic, 1)).rejects.toThrow();
    expect((await cli('--resume', '--mirror', 'from-kafka', '--topics', topic)).code).toBe(0);
    await waitFor('caught up after resume', () => segments(fjordDir).equals(segments(kafkaDir)));

    expect((await cli('--delete', '--mirror', 'from-kafka')).err).toContain('CLUSTER_MIRROR_NOT_EMPTY');
    expect((await cli('--stop', '--mirror', 'from-kafka', '--topics', topic)).code).toBe(0);
    await waitFor('stopped', async () => (await partitions()).every((p) => p.state === 'STOPPED'));
    await produceTo(fjord.bootstrap, topic, 3);
    const consumed: string[] = [];
    const consumer = new Kafka({ clientId: 'scn', brokers: [fjord.bootstrap], logLevel: logLevel.NOTHING }).consumer({ groupId: 'after-failover' });
    await consumer.connect();
    await consumer.subscribe({ topic, fromBeginning: true });
    await consumer.run({ eachMessage: async ({ message }) => void consumed.push(message.value?.toString() ?? '') });
    await waitFor('consumed everything', () => consumed.length === 73);
    await consumer.disconnect();
    expect(consumed.slice(0, 3)).toEqual([0, 1, 2].map((i) => `${topic}-${i}`.padEnd(80, '~')));
  });

  it('carries consumer group offsets over at failover, so consumers resume where they were', async () => {
    const topic = 'clicks';
    await kafkaAdmin.createTopics({ topics: [{ topic, numPartitions: 1 }], waitForLeaders: true });
    await produceTo(kafka.bootstrap, topic, 20);
    await kafkaAdmin.setOffsets({ groupId: 'reporting', topic, partitions: [{ partition: 0, offset: '12' }] });
    expect((await cli('--start', '--mirror', 'from-kafka', '--topics', topic)).code).toBe(0);
    await waitFor('mirrored', async () => (await partitions()).some((p) => p.topic === topic && p.state === 'MIRRORING' && p.lag === 0));
    expect((await cli('--stop', '--mirror', 'from-kafka', '--topics', topic)).code).toBe(0);
    await waitFor('stopped', async () => (await partitions()).filter((p) => p.topic === topic).every((p) => p.state === 'STOPPED'));
    const fjordKafka = new Kafka({ clientId: 'scn', brokers: [fjord.bootstrap], logLevel: logLevel.NOTHING });
    const fjordAdmin = fjordKafka.admin();
    await fjordAdmin.connect();
    const offsets = await fjordAdmin.fetchOffsets({ groupId: 'reporting', topics: [topic] });
    await fjordAdmin.disconnect();
    expect(offsets[0]?.partitions).toEqual([expect.objectContaining({ partition: 0, offset: '12' })]);
    const seen: number[] = [];
    const consumer = fjordKafka.consumer({ groupId: 'reporting' });
    await consumer.connect();
    await consumer.subscribe({ topic });
    await consumer.run({ eachMessage: async ({ message }) => void seen.push(Number(message.offset)) });
    await waitFor('resumed consumption', () => seen.length >= 8);
    await consumer.disconnect();
    expect(seen[0]).toBe(12);
  });

  it('copies the source topic configs that were set explicitly, except the excluded ones', async () => {
    const topic = 'configured';
    await kafkaAdmin.createTopics({
      topics: [{ topic, numPartitions: 1, configEntries: [{ name: 'retention.ms', value: '3600000' }, { name: 'min.insync.replicas', value: '2' }, { name: 'max.message.bytes', value: '500000' }] }],
      waitForLeaders: true,
    });
    expect((await cli('--start', '--mirror', 'from-kafka', '--topics', topic)).code).toBe(0);
    const fjordAdmin = new Kafka({ clientId: 'scn', brokers: [fjord.bootstrap], logLevel: logLevel.NOTHING }).admin();
    await fjordAdmin.connect();
    try {
      const values = async () => {
        const r = await fjordAdmin.describeConfigs({ includeSynonyms: false, resources: [{ type: 2, name: topic }] });
        return new Map(r.resources[0]?.configEntries.map((e) => [e.configName, e.configValue]) ?? []);
      };
      await waitFor('configs synced', async () => (await values()).get('retention.ms') === '3600000');
      const v = await values();
      expect(v.get('max.message.bytes')).toBe('500000');
      expect(v.get('min.insync.replicas')).not.toBe('2'); // excluded by mirror.topic.properties.exclude
    } finally {
      await fjordAdmin.disconnect();
    }
    expect((await cli('--stop', '--mirror', 'from-kafka', '--topics', topic)).code).toBe(0);
    await waitFor('stopped', async () => (await partitions()).filter((p) => p.topic === topic).every((p) => p.state === 'STOPPED'));
  });

  it('shows a deleted source topic as FAILED, non-retryable, and lets it be stopped and the mirror deleted', async () => {
    const topic = 'temporary';
    await kafkaAdmin.createTopics({ topics: [{ topic, numPartitions: 1 }], waitForLeaders: true });
    await produceTo(kafka.bootstrap, topic, 5);
    expect((await cli('--start', '--mirror', 'from-kafka', '--topics', topic)).code).toBe(0);
    await waitFor('mirroring', async () => (await partitions()).some((p) => p.topic === topic && p.state === 'MIRRORING' && p.lag === 0));
    await kafkaAdmin.deleteTopics({ topics: [topic] });
    await waitFor('failed', async () => (await partitions()).some((p) => p.topic === topic && p.state === 'FAILED'));
    const failed = await cli('--describe', '--mirror', 'from-kafka', '--failed');
    expect(failed.out).toMatch(/temporary\s+0\s+-\s+-\s+-\s+FAILED\s+MIRRORING\s+NonRetryable\s+The source topic is deleted\./);
    expect((await cli('--stop', '--mirror', 'from-kafka', '--topics', topic)).code).toBe(0);
    await waitFor('stopped', async () => (await partitions()).every((p) => p.state === 'STOPPED'));
    expect(await cli('--delete', '--mirror', 'from-kafka')).toMatchObject({ code: 0, out: 'Deleted cluster mirror from-kafka.' });
  });
});
