/**
 * Every client write path to a mirror topic is refused until the topic is stopped (KIP-1279's
 * read-only guard, carried past Produce): a transaction naming a mirror partition adds nothing,
 * so its abort writes no ABORT marker into the mirrored log; WriteTxnMarkers, TxnOffsetCommit of
 * the topic's offsets, DeleteRecords and CreatePartitions are answered READ_ONLY_TOPIC,
 * DeleteTopics MIRROR_TOPIC_NOT_STOPPED, and a change of a synced topic config INVALID_CONFIG.
 * Partitions added on the source still reach the mirror.
 * Once the topic is STOPPED every one of them works. StopMirrorTopics with a pattern takes it
 * out of `mirror.topics.include` and puts it into `mirror.topics.exclude`. Two Fjord node
 * processes: A the source, B the destination, spoken to over the wire.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Kafka, logLevel } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MirrorAdmin } from '../../src/admin/mirror-admin.js';
import type { ApiSpec } from '../../src/client/apis.js';
import { Apis } from '../../src/client/apis.js';
import { KafkaClient } from '../../src/client/kafka-client.js';
import { ErrorCode } from '../../src/protocol/generated/errors.js';
import { encodeAddOffsetsToTxnRequest, type AddOffsetsToTxnRequestInput } from '../../src/protocol/generated/messages/add-offsets-to-txn-request.js';
import { decodeAddOffsetsToTxnResponse, type AddOffsetsToTxnResponse } from '../../src/protocol/generated/messages/add-offsets-to-txn-response.js';
import { encodeAddPartitionsToTxnRequest, type AddPartitionsToTxnRequestInput } from '../../src/protocol/generated/messages/add-partitions-to-txn-request.js';
import { decodeAddPartitionsToTxnResponse, type AddPartitionsToTxnResponse } from '../../src/protocol/generated/messages/add-partitions-to-txn-response.js';
import { encodeDeleteRecordsRequest, type DeleteRecordsRequestInput } from '../../src/protocol/generated/messages/delete-records-request.js';
import { decodeDeleteRecordsResponse, type DeleteRecordsResponse } from '../../src/protocol/generated/messages/delete-records-response.js';
import { encodeEndTxnRequest, type EndTxnRequestInput } from '../../src/protocol/generated/messages/end-txn-request.js';
import { decodeEndTxnResponse, type EndTxnResponse } from '../../src/protocol/generated/messages/end-txn-response.js';
import { encodeInitProducerIdRequest, type InitProducerIdRequestInput } from '../../src/protocol/generated/messages/init-producer-id-request.js';
import { decodeInitProducerIdResponse, type InitProducerIdResponse } from '../../src/protocol/generated/messages/init-producer-id-response.js';
import { encodeTxnOffsetCommitRequest, type TxnOffsetCommitRequestInput } from '../../src/protocol/generated/messages/txn-offset-commit-request.js';
import { decodeTxnOffsetCommitResponse, type TxnOffsetCommitResponse } from '../../src/protocol/generated/messages/txn-offset-commit-response.js';
import { encodeWriteTxnMarkersRequest, type WriteTxnMarkersRequestInput } from '../../src/protocol/generated/messages/write-txn-markers-request.js';
import { decodeWriteTxnMarkersResponse, type WriteTxnMarkersResponse } from '../../src/protocol/generated/messages/write-txn-markers-response.js';
import { clusterMirrors, mirrorStates } from '../helpers/mirror-cli.js';
import { startNode, type RunningNode } from '../helpers/node.js';
import { waitFor } from '../helpers/wait.js';

const InitProducerId: ApiSpec<InitProducerIdRequestInput, InitProducerIdResponse> = { apiKey: 22, versions: [4, 4], encode: encodeInitProducerIdRequest, decode: decodeInitProducerIdResponse };
const AddPartitionsToTxn: ApiSpec<AddPartitionsToTxnRequestInput, AddPartitionsToTxnResponse> = { apiKey: 24, versions: [3, 3], encode: encodeAddPartitionsToTxnRequest, decode: decodeAddPartitionsToTxnResponse };
const AddOffsetsToTxn: ApiSpec<AddOffsetsToTxnRequestInput, AddOffsetsToTxnResponse> = { apiKey: 25, versions: [3, 3], encode: encodeAddOffsetsToTxnRequest, decode: decodeAddOffsetsToTxnResponse };
const EndTxn: ApiSpec<EndTxnRequestInput, EndTxnResponse> = { apiKey: 26, versions: [3, 3], encode: encodeEndTxnRequest, decode: decodeEndTxnResponse };
const WriteTxnMarkers: ApiSpec<WriteTxnMarkersRequestInput, WriteTxnMarkersResponse> = { apiKey: 27, versions: [1, 1], encode: encodeWriteTxnMarkersRequest, decode: decodeWriteTxnMarkersResponse };
const TxnOffsetCommit: ApiSpec<TxnOffsetCommitRequestInput, TxnOffsetCommitResponse> = { apiKey: 28, versions: [3, 3], encode: encodeTxnOffsetCommitRequest, decode: decodeTxnOffsetCommitResponse };
const DeleteRecords: ApiSpec<DeleteRecordsRequestInput, DeleteRecordsResponse> = { apiKey: 21, versions: [2, 2], encode: encodeDeleteRecordsRequest, decode: decodeDeleteRecordsResponse };

const TOPIC = 'ro';
let a: RunningNode;
let b: RunningNode;
let client: KafkaClient;
const work = mkdtempSync(join(tmpdir(), 'fjord-mirror-write-paths-'));

beforeAll(async () => {
  const overrides = { 'mirror.metadata.refresh.interval.ms': 500, 'mirror.failed.retry.initial.backoff.ms': 200 };
  [a, b] = await Promise.all([startNode({ overrides }), startNode({ overrides })]);
  const admin = new Kafka({ clientId: 'write-paths', brokers: [a.bootstrap], logLevel: logLevel.NOTHING }).admin();
  await admin.connect();
  await admin.createTopics({ topics: [{ topic: TOPIC, numPartitions: 1 }], waitForLeaders: true });
  await admin.disconnect();
  const producer = new Kafka({ clientId: 'write-paths', brokers: [a.bootstrap], logLevel: logLevel.NOTHING }).producer({ allowAutoTopicCreation: false });
  await producer.connect();
  await producer.send({ topic: TOPIC, acks: -1, messages: [{ partition: 0, value: 'a0' }, { partition: 0, value: 'a1' }, { partition: 0, value: 'a2' }] });
  await producer.disconnect();
  const file = join(work, 'm.properties');
  writeFileSync(file, `bootstrap.servers=${a.bootstrap}\nmirror.fetch.wait.max.ms=100\n`);
  expect((await clusterMirrors(b.bootstrap, '--create', '--mirror', 'm', '--mirror-config', file)).code).toBe(0);
  expect((await clusterMirrors(b.bootstrap, '--start', '--mirror', 'm', '--topics', TOPIC)).code).toBe(0);
  client = new KafkaClient({ bootstrapServers: [b.bootstrap], clientId: 'write-paths' });
  await waitFor('B mirrors all three records', async () => (await mirrorStates(b.bootstrap, 'm', TOPIC))[0] === 'MIRRORING' && (await logEnd(0)) === 3);
}, 120_000);

afterAll(async () => {
  client?.close();
  await Promise.all([a?.destroy(), b?.destroy()]);
  rmSync(work, { recursive: true, force: true });
});

async function offsetOf(partition: number, timestamp: bigint): Promise<number> {
  const r = await client.send(Apis.ListOffsets, { replicaId: -1, isolationLevel: 0, topics: [{ name: TOPIC, partitions: [{ partitionIndex: partition, currentLeaderEpoch: -1, timestamp }] }] });
  return Number(r.topics[0]?.partitions[0]?.offset ?? -1);
}
const logEnd = (partition: number): Promise<number> => offsetOf(partition, -1n);
const logStart = (partition: number): Promise<number> => offsetOf(partition, -2n);

/** A transactional producer id on B (the coordinator may still be loading its log at first). */
async function producer(transactionalId: string): Promise<{ producerId: bigint; producerEpoch: number }> {
  let out: { producerId: bigint; producerEpoch: number } | undefined;
  await waitFor(`producer id for ${transactionalId}`, async () => {
    const r = await client.send(InitProducerId, { transactionalId, transactionTimeoutMs: 60_000, producerId: -1n, producerEpoch: -1 });
    if (r.errorCode !== 0) return false;
    out = { producerId: r.producerId, producerEpoch: r.producerEpoch };
    return true;
  });
  return out!;
}

const addPartition = async (transactionalId: string, p: { producerId: bigint; producerEpoch: number }): Promise<number> => {
  const r = await client.send(AddPartitionsToTxn, { v3AndBelowTransactionalId: transactionalId, v3AndBelowProducerId: p.producerId, v3AndBelowProducerEpoch: p.producerEpoch, v3AndBelowTopics: [{ name: TOPIC, partitions: [0] }] });
  return r.resultsByTopicV3AndBelow[0]?.resultsByPartition[0]?.partitionErrorCode ?? -999;
};

const deleteRecords = async (offset: number): Promise<number> => {
  const r = await client.send(DeleteRecords, { topics: [{ name: TOPIC, partitions: [{ partitionIndex: 0, offset: BigInt(offset) }] }], timeoutMs: 5000 });
  return r.topics[0]?.partitions[0]?.errorCode ?? -999;
};

const createPartitions = async (count: number): Promise<number> => {
  const r = await client.send(Apis.CreatePartitions, { topics: [{ name: TOPIC, count, assignments: null }], timeoutMs: 5000, validateOnly: false });
  return r.results[0]?.errorCode ?? -999;
};

const alterTopicConfig = async (name: string, value: string): Promise<number> => {
  const r = await client.send(Apis.IncrementalAlterConfigs, { resources: [{ resourceType: 2, resourceName: TOPIC, configs: [{ name, configOperation: 0, value }] }], validateOnly: false });
  return r.responses[0]?.errorCode ?? -999;
};

const deleteTopic = async (): Promise<number> => {
  const r = await client.send(Apis.DeleteTopics, { topicNames: [TOPIC], timeoutMs: 5000 });
  return r.responses[0]?.errorCode ?? -999;
};

describe('write paths to a mirror topic', () => {
  it('adds no mirror partition to a transaction, so aborting it writes no marker into the mirrored log', async () => {
    const p = await producer('tx-abort');
    expect(await addPartition('tx-abort', p)).toBe(ErrorCode.READ_ONLY_TOPIC);
    await client.send(EndTxn, { transactionalId: 'tx-abort', producerId: p.producerId, producerEpoch: p.producerEpoch, committed: false });
    // A marker needs no fetch round to land: had it been written, the log end would be 4 by now.
    const again = await producer('tx-abort');
    expect(again.producerEpoch).toBeGreaterThan(p.producerEpoch);
    expect(await logEnd(0)).toBe(3);
  });

  it('refuses a transaction marker sent to a mirror partition', async () => {
    const r = await client.send(WriteTxnMarkers, {
      markers: [{ producerId: 4242n, producerEpoch: 0, transactionResult: false, coordinatorEpoch: 0, topics: [{ name: TOPIC, partitionIndexes: [0] }] }],
    });
    expect(r.markers[0]?.topics[0]?.partitions[0]?.errorCode).toBe(ErrorCode.READ_ONLY_TOPIC);
    expect(await logEnd(0)).toBe(3);
  });

  it('refuses a transactional commit of the mirror topic\'s offsets', async () => {
    const p = await producer('tx-offsets');
    expect((await client.send(AddOffsetsToTxn, { transactionalId: 'tx-offsets', producerId: p.producerId, producerEpoch: p.producerEpoch, groupId: 'g-ro' })).errorCode).toBe(0);
    const r = await client.send(TxnOffsetCommit, {
      transactionalId: 'tx-offsets',
      groupId: 'g-ro',
      producerId: p.producerId,
      producerEpoch: p.producerEpoch,
      generationIdOrMemberEpoch: -1,
      memberId: '',
      groupInstanceId: null,
      topics: [{ name: TOPIC, partitions: [{ partitionIndex: 0, committedOffset: 2n, committedLeaderEpoch: -1, committedMetadata: null }] }],
    });
    expect(r.topics[0]?.partitions[0]?.errorCode).toBe(ErrorCode.READ_ONLY_TOPIC);
    expect((await client.send(EndTxn, { transactionalId: 'tx-offsets', producerId: p.producerId, producerEpoch: p.producerEpoch, committed: false })).errorCode).toBe(0);
  });

  it('refuses DeleteRecords, CreatePartitions and DeleteTopics, and still follows the source\'s new partitions', async () => {
    expect(await deleteRecords(1)).toBe(ErrorCode.READ_ONLY_TOPIC);
    expect(await logStart(0)).toBe(0);
    expect(await createPartitions(3)).toBe(ErrorCode.READ_ONLY_TOPIC);
    expect(await deleteTopic()).toBe(ErrorCode.MIRROR_TOPIC_NOT_STOPPED);
    expect((await client.metadata([TOPIC])).topics[0]?.partitions).toHaveLength(1);
    // Synced topic configs are the source's; the excluded ones and the mirror.* keys are this cluster's.
    expect(await alterTopicConfig('retention.ms', '1000')).toBe(ErrorCode.INVALID_CONFIG);
    expect(await alterTopicConfig('min.insync.replicas', '1')).toBe(0);
    expect(await alterTopicConfig('mirror.support.unclean.leader.election', 'false')).toBe(0);

    // The source grows: the mirror adds the partition itself, past the refused API.
    const admin = new Kafka({ clientId: 'write-paths', brokers: [a.bootstrap], logLevel: logLevel.NOTHING }).admin();
    await admin.connect();
    await admin.createPartitions({ topicPartitions: [{ topic: TOPIC, count: 2 }] });
    await admin.disconnect();
    await waitFor('B grew to two partitions, both mirroring', async () => {
      const states = await mirrorStates(b.bootstrap, 'm', TOPIC);
      return states.length === 2 && states.every((s) => s === 'MIRRORING');
    });
  });

  it('takes every one of those writes once the topic is stopped', async () => {
    expect((await clusterMirrors(b.bootstrap, '--stop', '--mirror', 'm', '--topics', TOPIC)).code).toBe(0);
    await waitFor('stopped', async () => (await mirrorStates(b.bootstrap, 'm', TOPIC)).every((s) => s === 'STOPPED'));
    const stoppedAt = await logEnd(0);
    const p = await producer('tx-after');
    expect(await addPartition('tx-after', p)).toBe(0);
    expect((await client.send(EndTxn, { transactionalId: 'tx-after', producerId: p.producerId, producerEpoch: p.producerEpoch, committed: false })).errorCode).toBe(0);
    await waitFor('the abort marker landed', async () => (await logEnd(0)) === stoppedAt + 1);
    expect(await deleteRecords(1)).toBe(0);
    expect(await alterTopicConfig('retention.ms', '1000')).toBe(0);
    expect(await createPartitions(3)).toBe(0);
    expect(await deleteTopic()).toBe(0);
  });
});

describe('StopMirrorTopics with patterns', () => {
  it('removes each pattern from mirror.topics.include and adds it to mirror.topics.exclude', async () => {
    const admin = new MirrorAdmin({ bootstrapServers: [b.bootstrap] });
    try {
      await admin.alterMirrorConfig('m', [{ name: 'mirror.topics.include', op: 0, value: 'pay-.*,keep' }]);
      await admin.stopMirrorTopics('m', [], { patterns: ['pay-.*'] });
      const cfg = new Map((await admin.describeMirrorConfig('m')).map((c) => [c.name, c.value]));
      expect(cfg.get('mirror.topics.include')?.split(',')).toEqual(['keep']);
      expect(cfg.get('mirror.topics.exclude')?.split(',')).toContain('pay-.*');
    } finally {
      admin.close();
    }
  });
});
