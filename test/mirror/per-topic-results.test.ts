/**
 * Start / Stop / Pause / Resume MirrorTopics answer and apply per topic (KIP-1279 spec §4.3: the
 * top-level error is the first per-topic error): one bad topic gets its own error code and the
 * others are applied, and one bad topic in pattern discovery does not keep the others from being
 * discovered. Apache Kafka is the source; a destination topic with the source's name but another
 * topic id is the bad topic (INCONSISTENT_TOPIC_ID).
 */
import { Kafka, logLevel } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrorCode } from '../../src/protocol/generated/errors.js';
import type { KafkaBroker } from './helpers/kafka-source.js';
import { startKafkaSourcedMirror, type KafkaSourcedMirror } from './helpers/kafka-sourced-mirror.js';
import { describedPartition, waitFor } from './helpers/mirror-rpc.js';
import type { MirrorTestHost } from './helpers/mirror-test-host.js';

let setup: KafkaSourcedMirror | undefined;
let kafka: KafkaBroker;
let client: Kafka;
let host: MirrorTestHost;
let mirror: KafkaSourcedMirror['mirror'];
let rpc: KafkaSourcedMirror['rpc'];

beforeAll(async () => {
  setup = await startKafkaSourcedMirror('fjord-mirror-per-topic-', { 'mirror.state.topic.num.partitions': '1', 'mirror.metadata.refresh.interval.ms': '300' });
  ({ kafka, host, mirror, rpc } = setup);
  client = new Kafka({ clientId: 'per-topic', brokers: [kafka.bootstrap], logLevel: logLevel.NOTHING });
  expect((await rpc.create('m1', { 'bootstrap.servers': kafka.bootstrap, 'mirror.fetch.wait.max.ms': '100' })).errorCode).toBe(0);
}, 120_000);

afterAll(async () => {
  await setup?.close();
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
