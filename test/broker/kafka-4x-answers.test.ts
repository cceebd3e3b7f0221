/**
 * Three answers where Fjord used to differ from Apache Kafka 4.1.2, over raw frames to a real node:
 * a Metadata request that auto-creates a topic, `segment.bytes` (and the other size keys) under
 * Kafka 4.x's lower bounds, and ElectLeaders with a 0 ms timeout. The expected answers are what
 * the real broker gives (the interop differential fuzzer compares them with Kafka directly).
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ErrorCode } from '../../src/protocol/generated/errors.js';
import { encodeCreateTopicsRequest } from '../../src/protocol/generated/messages/create-topics-request.js';
import { decodeCreateTopicsResponse } from '../../src/protocol/generated/messages/create-topics-response.js';
import { encodeDescribeTopicPartitionsRequest } from '../../src/protocol/generated/messages/describe-topic-partitions-request.js';
import { decodeDescribeTopicPartitionsResponse } from '../../src/protocol/generated/messages/describe-topic-partitions-response.js';
import { encodeElectLeadersRequest } from '../../src/protocol/generated/messages/elect-leaders-request.js';
import { decodeElectLeadersResponse } from '../../src/protocol/generated/messages/elect-leaders-response.js';
import { encodeIncrementalAlterConfigsRequest } from '../../src/protocol/generated/messages/incremental-alter-configs-request.js';
import { decodeIncrementalAlterConfigsResponse } from '../../src/protocol/generated/messages/incremental-alter-configs-response.js';
import { encodeInitProducerIdRequest } from '../../src/protocol/generated/messages/init-producer-id-request.js';
import { decodeInitProducerIdResponse } from '../../src/protocol/generated/messages/init-producer-id-response.js';
import { encodeMetadataRequest } from '../../src/protocol/generated/messages/metadata-request.js';
import { decodeMetadataResponse, type MetadataResponse } from '../../src/protocol/generated/messages/metadata-response.js';
import { startNode, type RunningNode } from '../helpers/node.js';
import { lastAnswer } from '../helpers/wait.js';
import { WireClient } from './wire.js';

const ZERO = '00000000-0000-0000-0000-000000000000';
let node: RunningNode;
let c: WireClient;

beforeAll(async () => {
  node = await startNode({ overrides: { 'num.partitions': 3 } });
  c = await WireClient.connect(node.port);
}, 180_000);
afterAll(async () => {
  c?.close();
  await node?.destroy();
});

const metadata = async (v: number, names: string[], allowAutoTopicCreation = true): Promise<MetadataResponse> =>
  decodeMetadataResponse(await c.call(3, v, (w) => encodeMetadataRequest(w, { topics: names.map((name) => ({ name })), allowAutoTopicCreation }, v)), v);

async function createTopic(name: string, configs: { name: string; value: string }[]): Promise<{ errorCode: number; errorMessage: string | null }> {
  const r = decodeCreateTopicsResponse(await c.call(19, 7, (w) => encodeCreateTopicsRequest(w, { topics: [{ name, numPartitions: 1, replicationFactor: 1, configs }], timeoutMs: 10_000, validateOnly: false }, 7)), 7);
  return { errorCode: r.topics[0]!.errorCode, errorMessage: r.topics[0]!.errorMessage ?? null };
}

it('a Metadata request that auto-creates a topic answers UNKNOWN_TOPIC_OR_PARTITION with no partitions, then the topic appears', async () => {
  for (const v of [1, 4, 9, 12]) {
    const name = `auto-created-v${v}`;
    const first = await metadata(v, [name]);
    expect(first.topics).toHaveLength(1);
    expect(first.topics[0]).toMatchObject({ errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, name, partitions: [] });
    if (v >= 10) expect(first.topics[0]!.topicId).toBe(ZERO);
    // The creation runs in the background; a client asks again, as Kafka's clients do on this code.
    const later = await lastAnswer(() => metadata(v, [name], v < 4), (r) => r.topics[0]!.errorCode === ErrorCode.NONE);
    expect(later.topics[0]!.errorCode).toBe(ErrorCode.NONE);
    expect(later.topics[0]!.partitions.map((p) => p.partitionIndex).sort()).toEqual([0, 1, 2]);
  }
});

it('an invalid name answers INVALID_TOPIC_EXCEPTION with or without auto-creation, and AllowAutoTopicCreation=false creates nothing', async () => {
  const bad = await metadata(12, ['bad name!']);
  expect(bad.topics[0]!.errorCode).toBe(ErrorCode.INVALID_TOPIC_EXCEPTION);
  expect((await metadata(12, ['bad name!'], false)).topics[0]!.errorCode).toBe(ErrorCode.INVALID_TOPIC_EXCEPTION);
  const no = await metadata(12, ['never-created'], false);
  expect(no.topics[0]!.errorCode).toBe(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
  const again = await metadata(12, ['never-created'], false);
  expect(again.topics[0]!.errorCode).toBe(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
});

it('segment.bytes under 1 MiB is refused with INVALID_CONFIG on CreateTopics and IncrementalAlterConfigs, 1 MiB is accepted', async () => {
  expect((await createTopic('seg-200', [{ name: 'segment.bytes', value: '200' }])).errorCode).toBe(ErrorCode.INVALID_CONFIG);
  expect((await createTopic('seg-under', [{ name: 'segment.bytes', value: '1048575' }])).errorCode).toBe(ErrorCode.INVALID_CONFIG);
  expect((await createTopic('seg-min', [{ name: 'segment.bytes', value: '1048576' }])).errorCode).toBe(ErrorCode.NONE);
  const alter = async (resourceType: number, resourceName: string, name: string, value: string): Promise<number> =>
    decodeIncrementalAlterConfigsResponse(
      await c.call(44, 1, (w) => encodeIncrementalAlterConfigsRequest(w, { resources: [{ resourceType, resourceName, configs: [{ name, configOperation: 0, value }] }], validateOnly: false }, 1)),
      1,
    ).responses[0]!.errorCode;
  expect(await alter(2, 'seg-min', 'segment.bytes', '200')).toBe(ErrorCode.INVALID_CONFIG);
  expect(await alter(2, 'seg-min', 'segment.bytes', '2097152')).toBe(ErrorCode.NONE);
  expect(await alter(4, '', 'log.segment.bytes', '1048575')).toBe(ErrorCode.INVALID_CONFIG);
});

it('ElectLeaders with a 0 ms timeout answers REQUEST_TIMED_OUT, at top level from v1 and per partition', async () => {
  expect((await createTopic('elect-0ms', [])).errorCode).toBe(ErrorCode.NONE);
  for (const v of [0, 1, 2]) {
    const r = decodeElectLeadersResponse(
      await c.call(43, v, (w) => encodeElectLeadersRequest(w, { electionType: 0, topicPartitions: [{ topic: 'elect-0ms', partitions: [0] }], timeoutMs: 0 }, v)),
      v,
    );
    if (v >= 1) expect(r.errorCode).toBe(ErrorCode.REQUEST_TIMED_OUT);
    expect(r.replicaElectionResults).toEqual([{ topic: 'elect-0ms', partitionResult: [expect.objectContaining({ partitionId: 0, errorCode: ErrorCode.REQUEST_TIMED_OUT, errorMessage: null })] }]);
  }
  // A negative timeout is as good as passed; a null list (every partition) answers no partitions.
  const all = decodeElectLeadersResponse(await c.call(43, 2, (w) => encodeElectLeadersRequest(w, { electionType: 0, topicPartitions: null, timeoutMs: -1 }, 2)), 2);
  expect(all).toMatchObject({ errorCode: ErrorCode.REQUEST_TIMED_OUT, replicaElectionResults: [] });
});

it('topic keys are bounded as Kafka 4.1.2 bounds them: values beyond get INVALID_CONFIG, values at the bound are accepted', async () => {
  const validate = async (name: string, value: string): Promise<number> =>
    decodeCreateTopicsResponse(
      await c.call(19, 7, (w) => encodeCreateTopicsRequest(w, { topics: [{ name: 'bounds-probe', numPartitions: 1, replicationFactor: 1, configs: [{ name, value }] }], timeoutMs: 10_000, validateOnly: true }, 7)),
      7,
    ).topics[0]!.errorCode;
  const refused: [string, string][] = [
    ['segment.ms', '0'],
    ['segment.jitter.ms', '-1'],
    ['flush.ms', '-1'],
    ['retention.ms', '-2'],
    ['max.compaction.lag.ms', '0'],
    ['min.compaction.lag.ms', '-1'],
    ['delete.retention.ms', '-1'],
    ['file.delete.delay.ms', '-1'],
    ['min.cleanable.dirty.ratio', '-0.1'],
    ['min.cleanable.dirty.ratio', '1.1'],
  ];
  const accepted: [string, string][] = [
    ['segment.ms', '1'],
    ['segment.jitter.ms', '0'],
    ['flush.ms', '0'],
    ['retention.ms', '-1'],
    ['max.compaction.lag.ms', '1'],
    ['min.compaction.lag.ms', '0'],
    ['delete.retention.ms', '0'],
    ['file.delete.delay.ms', '0'],
    ['min.cleanable.dirty.ratio', '0'],
    ['min.cleanable.dirty.ratio', '1'],
    ['cleanup.policy', ''],
  ];
  const got = async (cases: [string, string][]) => Promise.all(cases.map(async ([k, v]) => `${k}=${v}: ${await validate(k, v)}`));
  expect(await got(refused)).toEqual(refused.map(([k, v]) => `${k}=${v}: ${ErrorCode.INVALID_CONFIG}`));
  expect(await got(accepted)).toEqual(accepted.map(([k, v]) => `${k}=${v}: ${ErrorCode.NONE}`));
});

it('InitProducerId with an empty transactional id answers INVALID_REQUEST; a null one still gets a producer id', async () => {
  for (const v of [0, 3, 5]) {
    const empty = decodeInitProducerIdResponse(await c.call(22, v, (w) => encodeInitProducerIdRequest(w, { transactionalId: '', transactionTimeoutMs: 60_000 }, v)), v);
    expect(empty).toMatchObject({ errorCode: ErrorCode.INVALID_REQUEST, producerId: -1n, producerEpoch: -1 });
    const none = decodeInitProducerIdResponse(await c.call(22, v, (w) => encodeInitProducerIdRequest(w, { transactionalId: null, transactionTimeoutMs: 60_000 }, v)), v);
    expect(none.errorCode).toBe(ErrorCode.NONE);
    expect(none.producerId >= 0n).toBe(true);
  }
});

it('DescribeTopicPartitions answers INVALID_TOPIC_EXCEPTION for a name no topic can have, UNKNOWN_TOPIC_OR_PARTITION for a valid unknown one', async () => {
  const r = decodeDescribeTopicPartitionsResponse(
    await c.call(75, 0, (w) => encodeDescribeTopicPartitionsRequest(w, { topics: [{ name: 'bad name!' }, { name: 'no-such-topic' }], responsePartitionLimit: 100, cursor: null }, 0)),
    0,
  );
  expect(r.topics.map((t) => [t.name, t.errorCode])).toEqual([
    ['bad name!', ErrorCode.INVALID_TOPIC_EXCEPTION],
    ['no-such-topic', ErrorCode.UNKNOWN_TOPIC_OR_PARTITION],
  ]);
});
