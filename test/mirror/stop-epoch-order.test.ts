/**
 * The order of STOPPING against destination epoch bumps (KIP-1279 spec §8.5, §9.4). Once a topic
 * is desired STOPPED, the node writes destination leader epochs into the partition's epoch cache;
 * the fetcher may still be appending source batches until STOPPING has removed it. A bump that
 * lands in that window (a BumpLeaderEpochs from a fetcher, a proactive bump) would put a
 * destination epoch in the cache below source batches, and `endOffsetForEpoch` of the last
 * mirrored epoch, the failback truncation point, would be wrong. Nothing may write a destination
 * epoch before the fetcher is removed and its in-flight append has finished.
 *
 * Apache Kafka is the source; the destination's mirror append of one batch is held in flight
 * while the stop arrives and a BumpLeaderEpochs is sent.
 */
import { Kafka, logLevel, type Producer } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrorCode } from '../../src/protocol/generated/errors.js';
import type { KafkaBroker } from './helpers/kafka-source.js';
import { startKafkaSourcedMirror, type KafkaSourcedMirror } from './helpers/kafka-sourced-mirror.js';
import { describedPartition, waitFor } from './helpers/mirror-rpc.js';
import type { MirrorTestHost } from './helpers/mirror-test-host.js';

let setup: KafkaSourcedMirror | undefined;
let kafka: KafkaBroker;
let host: MirrorTestHost;
let rpc: KafkaSourcedMirror['rpc'];
let producer: Producer;

beforeAll(async () => {
  setup = await startKafkaSourcedMirror('fjord-mirror-epoch-order-', { 'mirror.state.topic.num.partitions': '1' });
  ({ kafka, host, rpc } = setup);
}, 120_000);

afterAll(async () => {
  await producer?.disconnect();
  await setup?.close();
});

describe('STOPPING against destination epoch bumps', () => {
  it('keeps every destination epoch above the last mirrored batch', async () => {
    const topic = 'epoch-order';
    const client = new Kafka({ clientId: 'epoch-order', brokers: [kafka.bootstrap], logLevel: logLevel.NOTHING });
    const admin = client.admin();
    await admin.connect();
    await admin.createTopics({ topics: [{ topic, numPartitions: 1, replicationFactor: 1 }], waitForLeaders: true });
    await admin.disconnect();
    producer = client.producer({ allowAutoTopicCreation: false });
    await producer.connect();
    await producer.send({ topic, acks: -1, messages: [0, 1, 2].map((i) => ({ partition: 0, value: `v-${i}` })) });

    expect((await rpc.create('m1', { 'bootstrap.servers': kafka.bootstrap, 'mirror.fetch.wait.max.ms': '100' })).errorCode).toBe(0);
    expect((await rpc.start('m1', [topic])).topics[0]?.errorCode).toBe(0);
    const stateOf = async () => describedPartition(await rpc.describe(['m1']), topic, 0)?.stateValue;
    await waitFor('caught up', async () => (await stateOf()) === 'MIRRORING' && host.partitionLog(topic, 0)?.logEndOffset === 3);

    // One more source batch (offset 3); its append on the destination is held in flight.
    const gate = host.gateMirrorAppends(topic, 0);
    await producer.send({ topic, acks: -1, messages: [{ partition: 0, value: 'v-3' }] });
    await gate.reached;

    // The stop lands, and a bump request arrives before the fetcher is out.
    expect((await rpc.stop('m1', [topic])).topics[0]?.errorCode).toBe(0);
    const topicId = host.topicIdByName(topic)!;
    const bump = await rpc.bumpLeaderEpochs(topicId, 0, 20);
    gate.release();
    await waitFor('STOPPED', async () => (await stateOf()) === 'STOPPED');

    const log = host.log(topic, 0);
    // The mirrored batches (offsets 0-3) carry the source epoch 0; the destination's own epoch
    // starts with STOPPING's PID reset barrier at offset 4.
    expect(log.logEndOffset).toBe(5);
    expect(log.endOffsetForEpoch(0)).toEqual({ epoch: 0, endOffset: 4 });
    expect(log.epochEntries.map((e) => [e.epoch, e.startOffset])).toEqual([
      [0, 0],
      [host.leaderEpoch(topic, 0), 4],
    ]);
    expect(bump.topics[0]?.partitions[0]?.errorCode).toBe(ErrorCode.MIRROR_TOPIC_BEING_STOPPED);
  });
});
