/**
 * A `__mirror_state` write that fails (KIP-1279 spec §7: a transition is persisted before its
 * action runs). The transition must be retried with backoff until the write succeeds, and a
 * partition whose transition stays unpersisted longer than the bound says so in
 * DescribeClusterMirrors. Apache Kafka is the source; the destination's `__mirror_state` appends
 * fail with KAFKA_STORAGE_ERROR while the test says so.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSourceTopic, type KafkaBroker } from './helpers/kafka-source.js';
import { startKafkaSourcedMirror, type KafkaSourcedMirror } from './helpers/kafka-sourced-mirror.js';
import { describedPartition, waitFor } from './helpers/mirror-rpc.js';
import type { MirrorTestHost } from './helpers/mirror-test-host.js';

let setup: KafkaSourcedMirror | undefined;
let kafka: KafkaBroker;
let host: MirrorTestHost;
let mirror: KafkaSourcedMirror['mirror'];
let rpc: KafkaSourcedMirror['rpc'];

beforeAll(async () => {
  setup = await startKafkaSourcedMirror('fjord-mirror-write-retry-', { 'mirror.state.topic.num.partitions': '1' });
  ({ kafka, host, mirror, rpc } = setup);
}, 120_000);

afterAll(async () => {
  await setup?.close();
});

describe('a failed __mirror_state write', () => {
  it('is retried until it succeeds, and a partition stuck on it shows in describe', async () => {
    const topic = 'stuck-write';
    await createSourceTopic(kafka.bootstrap, topic, Array.from({ length: 3 }, (_, i) => `v-${i}`));

    expect((await rpc.create('m1', { 'bootstrap.servers': kafka.bootstrap, 'mirror.fetch.wait.max.ms': '100' })).errorCode).toBe(0);
    expect((await rpc.start('m1', [topic])).topics[0]?.errorCode).toBe(0);
    const described = async () => describedPartition(await rpc.describe(['m1']), topic, 0);
    await waitFor('MIRRORING', async () => (await described())?.stateValue === 'MIRRORING' && host.partitionLog(topic, 0)?.logEndOffset === 3);

    host.failInternalAppends = true;
    expect((await rpc.stop('m1', [topic])).topics[0]?.errorCode).toBe(0);
    // The STOPPING write is retried, not dropped after the first failure.
    await waitFor('retried state writes', () => host.failedInternalAppends >= 3);
    // Past the bound, describe says what the partition is stuck on.
    await waitFor('stuck partition in describe', async () => /STOPPING has not been persisted/.test((await described())?.errorMessage ?? ''), 30_000);
    const stuck = await described();
    expect(stuck?.stateValue).toBe('MIRRORING');
    expect(stuck?.errorMessage).toMatch(/\(\d+ attempts, retrying\)/);
    expect(mirror.isProduceAllowed(topic, 0)).toBe(false);

    // The coordinator's log heals: the stop goes through on its own.
    host.failInternalAppends = false;
    await waitFor('STOPPED', async () => (await described())?.stateValue === 'STOPPED', 30_000);
    expect((await described())?.errorMessage).toBeNull();
    expect(mirror.isProduceAllowed(topic, 0)).toBe(true);
  });
});
