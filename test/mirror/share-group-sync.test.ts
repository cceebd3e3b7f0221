/**
 * Share group offset sync (spec §10.2) into a Fjord node, from a Fjord node and from Apache
 * Kafka 4.4 (share groups on by default there):
 *
 *  - a share group that consumed and acknowledged on the source has the same share-partition
 *    start offset here (DescribeShareGroupOffsets on the destination);
 *  - a start offset past what the destination holds is clamped to its high watermark;
 *  - a share group with a member here is not overwritten, and is synced once it is empty;
 *  - a stopped topic's start offsets are no longer overwritten;
 *  - the Java 4.4 KafkaShareConsumer's group on Kafka arrives here the same way.
 *
 * "A sync round ran" is proven, not waited for by time: a probe group's start offset on another
 * mirrored topic is moved on the source and seen here; a round that carries the second move began
 * after the first was seen, so every group the source listed then was considered.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrorCode } from '../../src/protocol/generated/errors.js';
import { encodeAlterShareGroupOffsetsRequest } from '../../src/protocol/generated/messages/alter-share-group-offsets-request.js';
import { decodeAlterShareGroupOffsetsResponse } from '../../src/protocol/generated/messages/alter-share-group-offsets-response.js';
import { encodeCreateTopicsRequest } from '../../src/protocol/generated/messages/create-topics-request.js';
import { decodeCreateTopicsResponse } from '../../src/protocol/generated/messages/create-topics-response.js';
import { encodeDescribeShareGroupOffsetsRequest } from '../../src/protocol/generated/messages/describe-share-group-offsets-request.js';
import { decodeDescribeShareGroupOffsetsResponse } from '../../src/protocol/generated/messages/describe-share-group-offsets-response.js';
import { encodeIncrementalAlterConfigsRequest } from '../../src/protocol/generated/messages/incremental-alter-configs-request.js';
import { decodeIncrementalAlterConfigsResponse } from '../../src/protocol/generated/messages/incremental-alter-configs-response.js';
import { encodeProduceRequest } from '../../src/protocol/generated/messages/produce-request.js';
import { decodeProduceResponse } from '../../src/protocol/generated/messages/produce-response.js';
import { encodeShareAcknowledgeRequest } from '../../src/protocol/generated/messages/share-acknowledge-request.js';
import { decodeShareAcknowledgeResponse } from '../../src/protocol/generated/messages/share-acknowledge-response.js';
import { encodeShareFetchRequest } from '../../src/protocol/generated/messages/share-fetch-request.js';
import { decodeShareFetchResponse } from '../../src/protocol/generated/messages/share-fetch-response.js';
import { encodeShareGroupHeartbeatRequest, type ShareGroupHeartbeatRequestInput } from '../../src/protocol/generated/messages/share-group-heartbeat-request.js';
import { decodeShareGroupHeartbeatResponse } from '../../src/protocol/generated/messages/share-group-heartbeat-response.js';
import { buildRecordBatch } from '../../src/protocol/records.js';
import { WireClient } from '../broker/wire.js';
import { LOG4J2_CONFIG, KAFKA_NEWEST_VERSION, clientsClasspath } from '../interop/lib/paths.js';
import { lastJsonLine, run, tail } from '../interop/lib/run.js';
import { clusterMirrors, type CliRun } from '../helpers/mirror-cli.js';
import { startNode, type RunningNode } from '../helpers/node.js';
import { waitFor } from '../helpers/wait.js';
import { startKafkaSource, type KafkaBroker } from './helpers/kafka-source.js';

const FAST = { 'mirror.metadata.refresh.interval.ms': 500, 'mirror.failed.retry.initial.backoff.ms': 200, 'mirror.failed.retry.max.backoff.ms': 1000 };
let a: RunningNode;
let b: RunningNode;
let kafka: KafkaBroker;
let onA: WireClient;
let onB: WireClient;
const topicIds = new Map<string, string>();
const work = mkdtempSync(join(tmpdir(), 'fjord-share-sync-'));

const cli = (...argv: string[]): Promise<CliRun> => clusterMirrors(b.bootstrap, ...argv);

async function createTopic(c: WireClient, name: string): Promise<void> {
  const r = decodeCreateTopicsResponse(await c.call(19, 7, (w) => encodeCreateTopicsRequest(w, { topics: [{ name, numPartitions: 1, replicationFactor: 1 }], timeoutMs: 5000 }, 7)), 7);
  expect(r.topics[0]!.errorCode).toBe(0);
  topicIds.set(name, r.topics[0]!.topicId);
}

/** `batches` batches of 5 records each to partition 0 of `topic` on the source node A. */
async function produce(topic: string, batches: number): Promise<void> {
  for (let n = 0; n < batches; n++) {
    const batch = buildRecordBatch({ records: [0, 1, 2, 3, 4].map((i) => ({ value: Buffer.from(`${topic}-${n}-${i}`) })) });
    const r = decodeProduceResponse(await onA.call(0, 11, (w) => encodeProduceRequest(w, { transactionalId: null, acks: -1, timeoutMs: 5000, topicData: [{ name: topic, partitionData: [{ index: 0, records: batch }] }] }, 11)), 11);
    expect(r.responses[0]!.partitionResponses[0]!.errorCode).toBe(0);
  }
}

async function earliest(c: WireClient, group: string): Promise<void> {
  const r = decodeIncrementalAlterConfigsResponse(
    await c.call(44, 1, (w) => encodeIncrementalAlterConfigsRequest(w, { resources: [{ resourceType: 32, resourceName: group, configs: [{ name: 'share.auto.offset.reset', configOperation: 0, value: 'earliest' }] }], validateOnly: false }, 1)),
    1,
  );
  expect(r.responses[0]!.errorCode).toBe(0);
}

const heartbeat = async (c: WireClient, req: ShareGroupHeartbeatRequestInput) => decodeShareGroupHeartbeatResponse(await c.call(76, 1, (w) => encodeShareGroupHeartbeatRequest(w, req, 1)), 1);

/** Sets the start offset of an empty share group on a source (node A by default). */
async function alterOnA(group: string, topic: string, startOffset: bigint, on: WireClient = onA): Promise<void> {
  const r = decodeAlterShareGroupOffsetsResponse(await on.call(91, 0, (w) => encodeAlterShareGroupOffsetsRequest(w, { groupId: group, topics: [{ topicName: topic, partitions: [{ partitionIndex: 0, startOffset }] }] }, 0)), 0);
  expect(r.errorCode).toBe(0);
  expect(r.responses[0]!.partitions[0]!.errorCode).toBe(0);
}

/** A node's share-partition start offset of partition 0 (-1: no state; null: no such group); the destination B by default. */
async function startOffsetOnB(group: string, topic: string, on: WireClient = onB): Promise<bigint | null> {
  const r = decodeDescribeShareGroupOffsetsResponse(await on.call(90, 1, (w) => encodeDescribeShareGroupOffsetsRequest(w, { groups: [{ groupId: group, topics: [{ topicName: topic, partitions: [0] }] }] }, 1)), 1);
  const g = r.groups[0]!;
  if (g.errorCode === ErrorCode.GROUP_ID_NOT_FOUND) return null;
  expect(g.errorCode).toBe(0);
  return g.topics[0]?.partitions[0]?.startOffset ?? null;
}

async function rows(mirror: string, topic: string): Promise<{ state: string; lag: number }[]> {
  const r = await cli('--describe', '--mirror', mirror, '--json');
  if (r.code !== 0) throw new Error(r.err);
  return (JSON.parse(r.out) as { topic: string; state: string; lag: number }[]).filter((p) => p.topic === topic);
}

async function startMirrored(mirror: string, topic: string): Promise<void> {
  const r = await cli('--start', '--mirror', mirror, '--topics', topic);
  expect(r.code, r.err).toBe(0);
  await waitFor(`${topic} mirrored`, async () => (await rows(mirror, topic)).every((p) => p.state === 'MIRRORING' && p.lag === 0) && (await rows(mirror, topic)).length === 1);
}

const PROBE_TOPIC = 'share-probe';
let probeOffset = 0n;

/** Two sync rounds of the Fjord mirror have run since the call (see the header). */
async function syncRounds(): Promise<void> {
  for (let i = 0; i < 2; i++) {
    const v = ++probeOffset;
    await alterOnA('probe', PROBE_TOPIC, v);
    await waitFor(`sync round ${i + 1}`, async () => (await startOffsetOnB('probe', PROBE_TOPIC)) === v);
  }
}

beforeAll(async () => {
  [a, b, kafka] = await Promise.all([startNode({ overrides: FAST }), startNode({ overrides: FAST }), startKafkaSource({ version: KAFKA_NEWEST_VERSION })]);
  [onA, onB] = await Promise.all([WireClient.connect(a.port), WireClient.connect(b.port)]);
  for (const [name, bootstrap] of [['from-a', a.bootstrap], ['from-kafka', kafka.bootstrap]] as const) {
    const file = join(work, `${name}.properties`);
    writeFileSync(file, `bootstrap.servers=${bootstrap}\nmirror.fetch.wait.max.ms=100\nmirror.socket.timeout.ms=2000\n`);
    const r = await cli('--create', '--mirror', name, '--mirror-config', file);
    expect(r.code, r.err).toBe(0);
  }
  await createTopic(onA, PROBE_TOPIC);
  await produce(PROBE_TOPIC, 4);
  await startMirrored('from-a', PROBE_TOPIC);
}, 180_000);

afterAll(async () => {
  onA?.close();
  onB?.close();
  await Promise.all([a?.destroy(), b?.destroy(), kafka?.stop()]);
  rmSync(work, { recursive: true, force: true });
});

describe('share group offset sync', () => {
  it('carries a consuming share group over from a Fjord source, clamped to what the destination holds', async () => {
    const topic = 'share-orders';
    await createTopic(onA, topic);
    await produce(topic, 2);
    await startMirrored('from-a', topic);

    // A share group consumes on the source: all ten records acquired, 0-5 accepted, 6-9 released.
    await earliest(onA, 'workers');
    expect((await heartbeat(onA, { groupId: 'workers', memberId: 'w1', memberEpoch: 0, subscribedTopicNames: [topic] })).errorCode).toBe(0);
    const topicId = topicIds.get(topic)!;
    const fetched = decodeShareFetchResponse(
      await onA.call(78, 1, (w) => encodeShareFetchRequest(w, { groupId: 'workers', memberId: 'w1', shareSessionEpoch: 0, maxWaitMs: 0, minBytes: 1, maxRecords: 500, batchSize: 500, topics: [{ topicId, partitions: [{ partitionIndex: 0 }] }] }, 1)),
      1,
    );
    expect(fetched.responses[0]!.partitions[0]!.acquiredRecords).toEqual([expect.objectContaining({ firstOffset: 0n, lastOffset: 9n })]);
    const acked = decodeShareAcknowledgeResponse(
      await onA.call(79, 1, (w) =>
        encodeShareAcknowledgeRequest(w, { groupId: 'workers', memberId: 'w1', shareSessionEpoch: -1, topics: [{ topicId, partitions: [{ partitionIndex: 0, acknowledgementBatches: [{ firstOffset: 0n, lastOffset: 9n, acknowledgeTypes: [1, 1, 1, 1, 1, 1, 2, 2, 2, 2] }] }] }] }, 1),
      ),
      1,
    );
    expect(acked.responses[0]!.partitions[0]!.errorCode).toBe(0);
    await waitFor('the consuming group synced', async () => (await startOffsetOnB('workers', topic)) === 6n);

    // Past the destination's end (10): clamped to its high watermark.
    await alterOnA('ahead', topic, 1000n);
    await waitFor('clamped', async () => (await startOffsetOnB('ahead', topic)) === 10n);
  });

  it('leaves a share group with members here alone, syncs it once empty, and never overwrites a stopped topic', async () => {
    const topic = 'share-live';
    await createTopic(onA, topic);
    await produce(topic, 2);
    await startMirrored('from-a', topic);

    // A member here: the source's start offset 3 is not applied.
    expect((await heartbeat(onB, { groupId: 'live-here', memberId: 'l1', memberEpoch: 0, subscribedTopicNames: [topic] })).errorCode).toBe(0);
    await alterOnA('live-here', topic, 3n);
    await syncRounds();
    expect(await startOffsetOnB('live-here', topic)).toBe(-1n);
    expect((await heartbeat(onB, { groupId: 'live-here', memberId: 'l1', memberEpoch: -1, subscribedTopicNames: null })).errorCode).toBe(0);
    await waitFor('synced once the group is empty here', async () => (await startOffsetOnB('live-here', topic)) === 3n);

    // Stopped (failed over): the source's later moves are not applied.
    const stopped = await cli('--stop', '--mirror', 'from-a', '--topics', topic);
    expect(stopped.code, stopped.err).toBe(0);
    await waitFor('stopped', async () => (await rows('from-a', topic)).every((p) => p.state === 'STOPPED'));
    await alterOnA('live-here', topic, 7n);
    await syncRounds();
    expect(await startOffsetOnB('live-here', topic)).toBe(3n);
  });

  it('carries the share group of a Java 4.4 KafkaShareConsumer over from Apache Kafka 4.4', async () => {
    const topic = 'kafka-share-orders';
    // Creates the topic, produces 40 records and consumes them all with acknowledgements.
    const r = await run(
      'java',
      ['-Xmx384m', '-XX:+UseSerialGC', '-XX:TieredStopAtLevel=1', `-Dlog4j2.configurationFile=${LOG4J2_CONFIG}`, '-Dfjord.loglevel=ERROR', '-cp', clientsClasspath(KAFKA_NEWEST_VERSION), 'fjord.interop.ShareGroups', 'consume', `bootstrap=${kafka.bootstrap}`, `topic=${topic}`, 'group=kafka-workers', 'count=40'],
      { timeoutMs: 150_000 },
    );
    const obs = lastJsonLine(r);
    expect(obs, tail(r.stderr, 15)).toEqual({ produced: 40, distinct: 40, deliveries: 40, valuesMatch: true });
    await startMirrored('from-kafka', topic);
    const onKafka = await WireClient.connect(kafka.port);
    try {
      // Kafka reports the start offset its share coordinator last persisted (it may trail the
      // acknowledgements); whatever it reports is what arrives here.
      const reported = await startOffsetOnB('kafka-workers', topic, onKafka);
      expect(reported).not.toBeNull();
      expect(reported! >= 0n).toBe(true);
      await waitFor('the Kafka share group synced', async () => (await startOffsetOnB('kafka-workers', topic)) === (await startOffsetOnB('kafka-workers', topic, onKafka)));
      // The group is empty on Kafka now: moved there, it moves here; past the end, it is clamped.
      await alterOnA('kafka-workers', topic, 25n, onKafka);
      await waitFor('moved on Kafka, moved here', async () => (await startOffsetOnB('kafka-workers', topic)) === 25n);
      await alterOnA('kafka-workers', topic, 1000n, onKafka);
      await waitFor('clamped to the destination high watermark', async () => (await startOffsetOnB('kafka-workers', topic)) === 40n);
    } finally {
      onKafka.close();
    }
  }, 180_000);
});
