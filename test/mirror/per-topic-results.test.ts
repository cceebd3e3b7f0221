/**
 * Start / Stop / Pause / Resume MirrorTopics answer and apply per topic (KIP-1279 spec §4.3: the
 * top-level error is the first per-topic error): one bad topic gets its own error code and the
 * others are applied, and one bad topic in pattern discovery does not keep the others from being
 * discovered. Apache Kafka is the source; a destination topic with the source's name but another
 * topic id is the bad topic (INCONSISTENT_TOPIC_ID).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Kafka, logLevel } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMirrorApiHandlers } from '../../src/mirror/mirror-api-handlers.js';
import type { MirrorApiHandlers } from '../../src/mirror/mirror-host.js';
import { ErrorCode } from '../../src/protocol/generated/errors.js';
import { startKafkaSource, type KafkaBroker } from './helpers/kafka-source.js';
import { describedPartition, mirrorRpc, waitFor } from './helpers/mirror-rpc.js';
import { MirrorTestHost } from './helpers/mirror-test-host.js';

let kafka: KafkaBroker;
let client: Kafka;
let host: MirrorTestHost;
let mirror: MirrorApiHandlers;
let rpc: ReturnType<typeof mirrorRpc>;
const work = mkdtempSync(join(tmpdir(), 'fjord-mirror-per-topic-'));

beforeAll(async () => {
  kafka = await startKafkaSource();
  client = new Kafka({ clientId: 'per-topic', brokers: [kafka.bootstrap], logLevel: logLevel.NOTHING });
  host = new MirrorTestHost(work, { 'mirror.state.topic.num.partitions': '1', 'mirror.metadata.refresh.interval.ms': '300' });
  mirror = await createMirrorApiHandlers(host);
  rpc = mirrorRpc(mirror);
  expect((await rpc.create('m1', { 'bootstrap.servers': kafka.bootstrap, 'mirror.fetch.wait.max.ms': '100' })).errorCode).toBe(0);
}, 120_000);

afterAll(async () => {
  await mirror?.close();
  await host?.close();
  await kafka?.stop();
  rmSync(work, { recursive: true, force: true });
});

async function sourceTopics(...topics: string[]): Promise<void> {
  const admin = client.admin();
  await admin.connect();
  await admin.createTopics({ topics: topics.map((topic) => ({ topic, numPartitions: 1, replicationFactor: 1 })), waitForLeaders: true });
  await admin.disconnect();
  const producer = client.producer({ allowAutoTopicCreation: false });
  await producer.connect();
  for (const topic of topics) await producer.send({ topic, acks: -1, messages: [{ partition: 0, value: 'a' }, { partition: 0, value: 'b' }] });
  await producer.disconnect();
}

const stateOf = async (topic: string) => describedPartition(await rpc.describe(['m1']), topic, 0)?.stateValue;

describe('per-topic results of the mirror topic RPCs', () => {
  it('starts the good topics of a start that names a bad one, and says which is bad', async () => {
    await sourceTopics('fine', 'clash');
    await host.createTopic('clash', 1); // another topic id than the source's
    const r = await rpc.start('m1', ['fine', 'clash']);
    expect(r.topics.map((t) => [t.name, t.errorCode])).toEqual([
      ['fine', 0],
      ['clash', ErrorCode.INCONSISTENT_TOPIC_ID],
    ]);
    expect(r.errorCode).toBe(ErrorCode.INCONSISTENT_TOPIC_ID);
    await waitFor('fine mirrored', async () => (await stateOf('fine')) === 'MIRRORING' && host.partitionLog('fine', 0)?.logEndOffset === 2);
    expect(host.mirrorTopicBinding('clash')).toBeUndefined();
    expect(mirror.isProduceAllowed('clash', 0)).toBe(true);
  });

  it('stops the good topics of a stop that names a bad one', async () => {
    const r = await rpc.stop('m1', ['fine', 'no-such-topic']);
    expect(r.topics.map((t) => [t.name, t.errorCode])).toEqual([
      ['fine', 0],
      ['no-such-topic', ErrorCode.UNKNOWN_TOPIC_OR_PARTITION],
    ]);
    await waitFor('fine stopped', async () => (await stateOf('fine')) === 'STOPPED');
    expect(mirror.isProduceAllowed('fine', 0)).toBe(true);
  });

  it('discovers the topics a pattern matches although one of them cannot be started', async () => {
    await sourceTopics('disc-clash', 'disc-ok');
    await host.createTopic('disc-clash', 1);
    expect((await rpc.start('m1', [], ['disc-.*'])).errorCode).toBe(0);
    await waitFor('disc-ok discovered and mirrored', async () => (await stateOf('disc-ok')) === 'MIRRORING' && host.partitionLog('disc-ok', 0)?.logEndOffset === 2);
    expect(host.mirrorTopicBinding('disc-clash')).toBeUndefined();
  });
});
