/**
 * `fjord cluster-mirrors` and the admin client over the real wire, against the mirroring handlers
 * served on a loopback listener, with a real Apache Kafka broker as the source: create from a
 * properties file, start by regex (resolved on the source), list, describe (table, --json,
 * --failed), pause/resume, a connection-config change that reconnects, stop, delete, and the
 * usage errors.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Kafka, logLevel, type Admin } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigOp, MirrorAdmin, MirrorAdminError } from '../../src/admin/mirror-admin.js';
import { runClusterMirrorsCli } from '../../src/cli/cluster-mirrors.js';
import { ErrorCode } from '../../src/protocol/generated/errors.js';
import { startKafkaSource as startKafkaBroker, type KafkaBroker } from '../mirror/helpers/kafka-source.js';
import { startMirrorTestServer, type MirrorTestServer } from '../admin/helpers/mirror-test-server.js';
import { waitFor } from '../helpers/wait.js';
import { clusterMirrors, type CliRun } from '../helpers/mirror-cli.js';

let kafka: KafkaBroker;
let kafkaAdmin: Admin;
let kafkaClient: Kafka;
let dest: MirrorTestServer;
const work = mkdtempSync(join(tmpdir(), 'fjord-cli-'));

const cli = (...argv: string[]): Promise<CliRun> => clusterMirrors(dest.bootstrap, ...argv);

async function describeJson(): Promise<{ topic: string; partition: number; state: string; lag: number; sourceOffset: number; destinationOffset: number }[]> {
  const r = await cli('--describe', '--mirror', 'm1', '--json');
  expect(r.code).toBe(0);
  return JSON.parse(r.out) as never;
}

beforeAll(async () => {
  kafka = await startKafkaBroker();
  kafkaClient = new Kafka({ clientId: 'cli-test', brokers: [kafka.bootstrap], logLevel: logLevel.NOTHING });
  kafkaAdmin = kafkaClient.admin();
  await kafkaAdmin.connect();
  await kafkaAdmin.createTopics({
    topics: [
      { topic: 'orders-eu', numPartitions: 2 },
      { topic: 'orders-us', numPartitions: 1 },
      { topic: 'orders-test', numPartitions: 1 },
      { topic: 'audit', numPartitions: 1 },
    ],
    waitForLeaders: true,
  });
  const producer = kafkaClient.producer({ allowAutoTopicCreation: false });
  await producer.connect();
  for (const topic of ['orders-eu', 'orders-us', 'audit']) {
    await producer.send({ topic, acks: -1, messages: Array.from({ length: 10 }, (_, i) => ({ partition: 0, value: `${topic}-${i}` })) });
  }
  await producer.disconnect();
  dest = await startMirrorTestServer({
    'mirror.state.topic.num.partitions': '2',
    'mirror.failed.retry.initial.backoff.ms': '200',
    'mirror.failed.retry.max.backoff.ms': '1000',
    'mirror.metadata.refresh.interval.ms': '300',
  });
}, 120_000);

afterAll(async () => {
  await dest?.close();
  await kafkaAdmin?.disconnect();
  await kafka?.stop();
  rmSync(work, { recursive: true, force: true });
});

describe('fjord cluster-mirrors', () => {
  it('rejects bad usage with exit code 2', async () => {
    expect((await cli('--start', '--mirror', 'm1')).code).toBe(2);
    expect((await cli('--list', '--delete')).code).toBe(2);
    expect((await cli('--stop', '--mirror', 'm1', '--topics', 'x', '--exclude', 'y')).code).toBe(2);
    expect((await runClusterMirrorsCli(['--list'], { out: () => undefined, err: () => undefined }))).toBe(2);
    expect((await cli('--create', '--mirror', 'm1')).code).toBe(2);
  });

  it('creates a mirror from a properties file and lists it', async () => {
    const file = join(work, 'm1.properties');
    writeFileSync(file, `# the source\nbootstrap.servers=${kafka.bootstrap}\nmirror.fetch.wait.max.ms=100\nmirror.socket.timeout.ms=1000\nmirror.fetch.backoff.ms=200\n`);
    const r = await cli('--create', '--mirror', 'm1', '--mirror-config', file);
    expect(r).toMatchObject({ code: 0, out: 'Created cluster mirror m1.' });
    const again = await cli('--create', '--mirror', 'm1', '--mirror-config', file);
    expect(again.code).toBe(1);
    expect(again.err).toContain('CLUSTER_MIRROR_ALREADY_EXISTS');
    const list = await cli('--list');
    expect(list.out.split('\n')[0]).toMatch(/^MIRROR\s+TOPICS\s+SOURCE-CLUSTER-ID\s+SOURCE-BOOTSTRAP-SERVER$/);
    expect(list.out).toContain(kafka.bootstrap);
  });

  it('starts topics by regex with an exclude, and describes them', async () => {
    const r = await cli('--start', '--mirror', 'm1', '--topics', 'orders-.*', '--exclude', 'orders-test');
    expect(r.code).toBe(0);
    expect(r.out.split('\n').sort()).toEqual(['Started mirroring of topic orders-eu.', 'Started mirroring of topic orders-us.']);
    await waitFor('caught up', async () => {
      const d = await describeJson();
      return d.length === 3 && d.every((p) => p.state === 'MIRRORING' && p.lag === 0 && p.sourceOffset >= 0);
    });
    const d = await describeJson();
    expect(d.find((p) => p.topic === 'orders-eu' && p.partition === 0)).toMatchObject({ sourceOffset: 10, destinationOffset: 10, lag: 0 });
    expect(dest.host.topicIdByName('orders-test')).toBeUndefined();
    const table = await cli('--describe', '--mirror', 'm1');
    expect(table.out.split('\n')[0]).toMatch(/^MIRROR\s+TOPIC\s+PARTITION\s+SOURCE-OFFSET\s+DESTINATION-OFFSET\s+LAG\s+STATE\s+DESIRED\s+TIME-LAG\s+LAST-FETCH\s+LINK$/);
    expect(table.out).toMatch(/m1\s+orders-eu\s+0\s+10\s+10\s+0\s+MIRRORING\s+MIRRORING\s+0ms\s+\d+\.\ds ago\s+ok/);
    const listed = await new MirrorAdmin({ bootstrapServers: [dest.bootstrap] }).listClusterMirrors();
    expect(listed[0]).toMatchObject({ mirrorName: 'm1', topicCount: 2, topicNames: ['orders-eu', 'orders-us'] });
  });

  it('discovers new source topics by include pattern and stops those that become excluded', async () => {
    const saved = await cli('--start', '--mirror', 'm1', '--topics', 'late-.*');
    expect(saved).toMatchObject({ code: 0, out: 'No source topic matches yet; the patterns were saved for discovery.' });
    await kafkaAdmin.createTopics({ topics: [{ topic: 'late-1', numPartitions: 1 }], waitForLeaders: true });
    const producer = kafkaClient.producer({ allowAutoTopicCreation: false });
    await producer.connect();
    await producer.send({ topic: 'late-1', acks: -1, messages: [{ value: 'discovered' }] });
    await producer.disconnect();
    await waitFor('late-1 discovered and mirrored', async () => (await describeJson()).some((p) => p.topic === 'late-1' && p.state === 'MIRRORING' && p.destinationOffset === 1));
    const admin = new MirrorAdmin({ bootstrapServers: [dest.bootstrap] });
    try {
      await admin.alterMirrorConfig('m1', [{ name: 'mirror.topics.exclude', op: ConfigOp.APPEND, value: 'late-.*' }]);
    } finally {
      admin.close();
    }
    await waitFor('late-1 stopped by the exclude list', async () => (await describeJson()).some((p) => p.topic === 'late-1' && p.state === 'STOPPED'));
  });

  it('pauses and resumes', async () => {
    expect((await cli('--pause', '--mirror', 'm1', '--topics', 'orders-us')).out).toBe('Paused mirroring of topic orders-us.');
    await waitFor('paused', async () => (await describeJson()).find((p) => p.topic === 'orders-us')?.state === 'PAUSED');
    expect((await cli('--resume', '--mirror', 'm1', '--topics', 'orders-u.*')).out).toBe('Resumed mirroring of topic orders-us.');
    await waitFor('resumed', async () => (await describeJson()).find((p) => p.topic === 'orders-us')?.state === 'MIRRORING');
    const none = await cli('--pause', '--mirror', 'm1', '--topics', 'nothing-.*');
    expect(none.code).toBe(1);
  });

  it('rejects an invalid config change and reconnects after a valid one', async () => {
    const admin = new MirrorAdmin({ bootstrapServers: [dest.bootstrap] });
    try {
      await expect(admin.alterMirrorConfig('m1', [{ name: 'bootstrap.servers', op: ConfigOp.SET, value: 'nonsense' }])).rejects.toMatchObject({ code: ErrorCode.INVALID_CONFIG });
      // Point the mirror at an address where nothing listens: the fetchers are rebuilt on it and
      // copy nothing more …
      await admin.alterMirrorConfig('m1', [{ name: 'bootstrap.servers', op: ConfigOp.SET, value: '127.0.0.1:1' }]);
      const producer = kafkaClient.producer({ allowAutoTopicCreation: false });
      await producer.connect();
      await producer.send({ topic: 'orders-eu', acks: -1, messages: [{ partition: 1, value: 'while pointed away' }] });
      await new Promise((r) => setTimeout(r, 1500));
      expect(dest.host.partitionLog('orders-eu', 1)?.logEndOffset).toBe(0);
      // … until the mirror points at the source again (another address form of the same broker).
      await admin.alterMirrorConfig('m1', [{ name: 'bootstrap.servers', op: ConfigOp.SET, value: `localhost:${kafka.port}` }]);
      const cfg = await admin.describeMirrorConfig('m1');
      expect(cfg.find((c) => c.name === 'bootstrap.servers')?.value).toBe(`localhost:${kafka.port}`);
      await producer.send({ topic: 'orders-eu', acks: -1, messages: [{ partition: 1, value: 'after reconnect' }] });
      await producer.disconnect();
      await waitFor('mirrored after reconnect', () => dest.host.partitionLog('orders-eu', 1)?.logEndOffset === 2);
      await waitFor('all MIRRORING again', async () => (await describeJson()).filter((p) => p.topic.startsWith('orders-')).every((p) => p.state === 'MIRRORING'));
    } finally {
      admin.close();
    }
  });

  it('refuses deletion while mirroring, then stops, shows failures and deletes', async () => {
    const refused = await cli('--delete', '--mirror', 'm1');
    expect(refused.code).toBe(1);
    expect(refused.err).toContain('CLUSTER_MIRROR_NOT_EMPTY');
    await kafkaAdmin.deleteTopics({ topics: ['orders-us'] });
    await waitFor('failed shown', async () => (await cli('--describe', '--mirror', 'm1', '--failed')).out.includes('The source topic is deleted.'));
    const failed = await cli('--describe', '--mirror', 'm1', '--failed');
    expect(failed.out).toMatch(/m1\s+orders-us\s+0\s+-\s+-\s+-\s+FAILED\s+MIRRORING\s+NonRetryable\s+The source topic is deleted\./);
    const stopped = await cli('--stop', '--mirror', 'm1', '--topics', 'orders-.*');
    expect(stopped.code).toBe(0);
    await waitFor('stopped', async () => (await describeJson()).every((p) => p.state === 'STOPPED'));
    expect(dest.mirror.isProduceAllowed('orders-eu', 0)).toBe(true);
    expect(await cli('--delete', '--mirror', 'm1')).toMatchObject({ code: 0, out: 'Deleted cluster mirror m1.' });
    expect((await cli('--list')).out.split('\n')).toHaveLength(1);
    await expect(new MirrorAdmin({ bootstrapServers: [dest.bootstrap] }).deleteClusterMirror('m1')).rejects.toBeInstanceOf(MirrorAdminError);
  });
});
