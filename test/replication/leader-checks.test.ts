/**
 * DeleteRecords and DescribeProducers on a real three-node cluster (one etcd, three `fjord start`
 * processes), answered per node as Kafka answers them. The topic's one partition is placed on
 * nodes 1 (leader) and 2 (follower); node 3 holds no replica.
 *
 * - DeleteRecords moves the log start only at the unfenced leader (Kafka's
 *   Partition.deleteRecordsOnLeader): a follower, a node without a replica and a fenced leader
 *   answer NOT_LEADER_OR_FOLLOWER, and the follower's log keeps its records.
 * - DescribeProducers is answered from any replica's producer state (Kafka's
 *   Partition.activeProducerState reads the local log, leader or follower); a node without a
 *   replica of a partition the metadata has answers NOT_LEADER_OR_FOLLOWER
 *   (ReplicaManager.getPartitionOrError), and a partition the metadata lacks is
 *   UNKNOWN_TOPIC_OR_PARTITION.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { ApiSpec } from '../../src/client/apis.js';
import { Apis } from '../../src/client/apis.js';
import { KafkaClient } from '../../src/client/kafka-client.js';
import { ApiKey } from '../../src/protocol/generated/api-table.js';
import { ErrorCode } from '../../src/protocol/generated/errors.js';
import { encodeDeleteRecordsRequest, type DeleteRecordsRequestInput } from '../../src/protocol/generated/messages/delete-records-request.js';
import { decodeDeleteRecordsResponse, type DeleteRecordsResponse } from '../../src/protocol/generated/messages/delete-records-response.js';
import { encodeDescribeProducersRequest, type DescribeProducersRequestInput } from '../../src/protocol/generated/messages/describe-producers-request.js';
import { decodeDescribeProducersResponse, type DescribeProducersResponse } from '../../src/protocol/generated/messages/describe-producers-response.js';
import { encodeInitProducerIdRequest, type InitProducerIdRequestInput } from '../../src/protocol/generated/messages/init-producer-id-request.js';
import { decodeInitProducerIdResponse, type InitProducerIdResponse } from '../../src/protocol/generated/messages/init-producer-id-response.js';
import { encodeProduceRequest, type ProduceRequestInput } from '../../src/protocol/generated/messages/produce-request.js';
import { decodeProduceResponse, type ProduceResponse } from '../../src/protocol/generated/messages/produce-response.js';
import { buildRecordBatch } from '../../src/protocol/records.js';
import { eventually, startCluster, type RunningCluster } from '../helpers/cluster.js';

const TOPIC = 'leader-checks';

const at = <Req, Res>(apiKey: number, v: number, encode: ApiSpec<Req, Res>['encode'], decode: ApiSpec<Req, Res>['decode']): ApiSpec<Req, Res> => ({ apiKey, versions: [v, v], encode, decode });
const DELETE_RECORDS = at<DeleteRecordsRequestInput, DeleteRecordsResponse>(ApiKey.DeleteRecords, 2, encodeDeleteRecordsRequest, decodeDeleteRecordsResponse);
const DESCRIBE_PRODUCERS = at<DescribeProducersRequestInput, DescribeProducersResponse>(ApiKey.DescribeProducers, 0, encodeDescribeProducersRequest, decodeDescribeProducersResponse);
const INIT = at<InitProducerIdRequestInput, InitProducerIdResponse>(ApiKey.InitProducerId, 5, encodeInitProducerIdRequest, decodeInitProducerIdResponse);
const PRODUCE = at<ProduceRequestInput, ProduceResponse>(ApiKey.Produce, 9, encodeProduceRequest, decodeProduceResponse);

let cluster: RunningCluster;
const clients: KafkaClient[] = [];
let producerId = -1n;

function client(nodeId: number): KafkaClient {
  const c = new KafkaClient({ bootstrapServers: [cluster.node(nodeId).bootstrap], clientId: 'leader-checks', requestTimeoutMs: 10_000 });
  clients.push(c);
  return c;
}

async function deleteRecords(nodeId: number, partitionIndex: number, offset: bigint): Promise<{ errorCode: number; lowWatermark: bigint }> {
  const r = await client(nodeId).send(DELETE_RECORDS, { topics: [{ name: TOPIC, partitions: [{ partitionIndex, offset }] }], timeoutMs: 10_000 });
  const p = r.topics[0]!.partitions[0]!;
  return { errorCode: p.errorCode, lowWatermark: p.lowWatermark };
}

async function describeProducers(nodeId: number, partitionIndex: number): Promise<{ errorCode: number; producerIds: bigint[] }> {
  const r = await client(nodeId).send(DESCRIBE_PRODUCERS, { topics: [{ name: TOPIC, partitionIndexes: [partitionIndex] }] });
  const p = r.topics[0]!.partitions[0]!;
  return { errorCode: p.errorCode, producerIds: p.activeProducers.map((a) => a.producerId) };
}

async function leaderOf(): Promise<number> {
  const md = await client(3).send(Apis.Metadata, { topics: [{ name: TOPIC, topicId: '00000000-0000-0000-0000-000000000000' }], allowAutoTopicCreation: false, includeTopicAuthorizedOperations: false });
  return md.topics[0]?.partitions[0]?.leaderId ?? -1;
}

beforeAll(async () => {
  cluster = await startCluster({ nodes: 3, overrides: { 'auto.leader.rebalance.enable': false } });
  const ct = await client(1).send(Apis.CreateTopics, {
    topics: [{ name: TOPIC, numPartitions: -1, replicationFactor: -1, assignments: [{ partitionIndex: 0, brokerIds: [1, 2] }], configs: [] }],
    timeoutMs: 10_000,
    validateOnly: false,
  });
  expect(ct.topics[0]!.errorCode).toBe(ErrorCode.NONE);
  await eventually('node 1 to lead the partition', async () => (await leaderOf()) === 1);
  // One idempotent batch of three records, acknowledged by both replicas.
  const init = await eventually('a producer id', async () => {
    const r = await client(1).send(INIT, { transactionalId: null, transactionTimeoutMs: 60_000, producerId: -1n, producerEpoch: -1 });
    return r.errorCode === ErrorCode.NONE ? r : null;
  });
  producerId = init.producerId;
  const records = buildRecordBatch({ producerId: Number(producerId), producerEpoch: init.producerEpoch, baseSequence: 0, records: [{ value: Buffer.from('a') }, { value: Buffer.from('b') }, { value: Buffer.from('c') }] });
  await eventually('the batch to be acknowledged by both replicas', async () => {
    const r = await client(1).send(PRODUCE, { transactionalId: null, acks: -1, timeoutMs: 10_000, topicData: [{ name: TOPIC, partitionData: [{ index: 0, records }] }] });
    const code = r.responses[0]!.partitionResponses[0]!.errorCode;
    return code === ErrorCode.NONE || code === ErrorCode.DUPLICATE_SEQUENCE_NUMBER;
  });
  await eventually('the follower to hold the producer', async () => (await describeProducers(2, 0)).producerIds.includes(producerId));
}, 180_000);

afterAll(async () => {
  for (const c of clients) c.close();
  cluster?.etcd.resume();
  await cluster?.destroy();
});

it('DescribeProducers: any replica answers; a node without one is NOT_LEADER_OR_FOLLOWER; an unknown partition is UNKNOWN_TOPIC_OR_PARTITION', async () => {
  expect(await describeProducers(1, 0)).toEqual({ errorCode: ErrorCode.NONE, producerIds: [producerId] });
  expect(await describeProducers(2, 0)).toEqual({ errorCode: ErrorCode.NONE, producerIds: [producerId] });
  expect(await describeProducers(3, 0)).toEqual({ errorCode: ErrorCode.NOT_LEADER_OR_FOLLOWER, producerIds: [] });
  expect(await describeProducers(1, 7)).toEqual({ errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, producerIds: [] });
});

it('DeleteRecords: a follower and a node without a replica answer NOT_LEADER_OR_FOLLOWER; the leader moves the log start', async () => {
  expect(await deleteRecords(2, 0, 2n)).toEqual({ errorCode: ErrorCode.NOT_LEADER_OR_FOLLOWER, lowWatermark: -1n });
  expect(await deleteRecords(3, 0, 2n)).toEqual({ errorCode: ErrorCode.NOT_LEADER_OR_FOLLOWER, lowWatermark: -1n });
  expect(await deleteRecords(1, 7, 2n)).toEqual({ errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, lowWatermark: -1n });
  expect(await deleteRecords(1, 0, 1n)).toEqual({ errorCode: ErrorCode.NONE, lowWatermark: 1n });
});

it('a fenced leader refuses DeleteRecords with NOT_LEADER_OR_FOLLOWER and still describes its producers', async () => {
  cluster.etcd.pause();
  await eventually('node 1 to fence itself', async () => (cluster.node(1).logs().includes('"msg":"broker fenced"') ? true : null));
  expect(await deleteRecords(1, 0, 2n)).toEqual({ errorCode: ErrorCode.NOT_LEADER_OR_FOLLOWER, lowWatermark: -1n });
  expect(await describeProducers(1, 0)).toEqual({ errorCode: ErrorCode.NONE, producerIds: [producerId] });
}, 60_000);
