/**
 * KIP-890 on a real three-node cluster (one etcd, three `fjord start` processes) whose only
 * listener is SASL_PLAINTEXT with StandardAuthorizer on: a partition leader that is not the
 * producer's transaction coordinator checks each transactional produce with the coordinator over
 * AddPartitionsToTxn v4+, on its inter-broker connection with its own SASL login.
 *
 * - transactions V1 (part 1): a transactional Produce v10 to a partition the producer never added
 *   is refused with INVALID_TXN_STATE "Partition was not added to the transaction", v11 with
 *   TRANSACTION_ABORTABLE, and nothing is appended; once added (AddPartitionsToTxn v3) it is taken;
 * - transactions V2 (part 2): every node finalizes transaction.version=2, and a Produce v12 to a
 *   partition led elsewhere adds it to the transaction itself; a stale epoch is
 *   INVALID_PRODUCER_EPOCH;
 * - AddPartitionsToTxn v4 from a principal without CLUSTER_ACTION is refused with the top-level
 *   CLUSTER_AUTHORIZATION_FAILED, as Kafka refuses it; a super user's is served.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiSpec } from '../../src/client/apis.js';
import { Apis } from '../../src/client/apis.js';
import { clientOptionsFromConfig } from '../../src/client/client-options.js';
import { KafkaClient } from '../../src/client/kafka-client.js';
import { ApiKey } from '../../src/protocol/generated/api-table.js';
import { ErrorCode } from '../../src/protocol/generated/errors.js';
import { encodeAddPartitionsToTxnRequest, type AddPartitionsToTxnRequestInput } from '../../src/protocol/generated/messages/add-partitions-to-txn-request.js';
import { decodeAddPartitionsToTxnResponse, type AddPartitionsToTxnResponse } from '../../src/protocol/generated/messages/add-partitions-to-txn-response.js';
import { encodeApiVersionsRequest, type ApiVersionsRequestInput } from '../../src/protocol/generated/messages/api-versions-request.js';
import { decodeApiVersionsResponse, type ApiVersionsResponse } from '../../src/protocol/generated/messages/api-versions-response.js';
import { encodeDescribeTransactionsRequest, type DescribeTransactionsRequestInput } from '../../src/protocol/generated/messages/describe-transactions-request.js';
import { decodeDescribeTransactionsResponse, type DescribeTransactionsResponse } from '../../src/protocol/generated/messages/describe-transactions-response.js';
import { encodeEndTxnRequest, type EndTxnRequestInput } from '../../src/protocol/generated/messages/end-txn-request.js';
import { decodeEndTxnResponse, type EndTxnResponse } from '../../src/protocol/generated/messages/end-txn-response.js';
import { encodeInitProducerIdRequest, type InitProducerIdRequestInput } from '../../src/protocol/generated/messages/init-producer-id-request.js';
import { decodeInitProducerIdResponse, type InitProducerIdResponse } from '../../src/protocol/generated/messages/init-producer-id-response.js';
import { encodeProduceRequest, type ProduceRequestInput } from '../../src/protocol/generated/messages/produce-request.js';
import { decodeProduceResponse, type ProduceResponse } from '../../src/protocol/generated/messages/produce-response.js';
import { buildRecordBatch } from '../../src/protocol/records.js';
import { eventually, startCluster, type RunningCluster } from '../helpers/cluster.js';

const JAAS =
  'org.apache.kafka.common.security.plain.PlainLoginModule required username="broker" password="broker-secret" ' +
  'user_broker="broker-secret" user_admin="admin-secret" user_alice="alice-secret";';
const TOPIC = 'ledger';

const at = <Req, Res>(apiKey: number, v: number, encode: ApiSpec<Req, Res>['encode'], decode: ApiSpec<Req, Res>['decode']): ApiSpec<Req, Res> => ({ apiKey, versions: [v, v], encode, decode });
const produceV = (v: number): ApiSpec<ProduceRequestInput, ProduceResponse> => at(ApiKey.Produce, v, encodeProduceRequest, decodeProduceResponse);
const INIT = at<InitProducerIdRequestInput, InitProducerIdResponse>(ApiKey.InitProducerId, 5, encodeInitProducerIdRequest, decodeInitProducerIdResponse);
const ADD_V3 = at<AddPartitionsToTxnRequestInput, AddPartitionsToTxnResponse>(ApiKey.AddPartitionsToTxn, 3, encodeAddPartitionsToTxnRequest, decodeAddPartitionsToTxnResponse);
const ADD_V4 = at<AddPartitionsToTxnRequestInput, AddPartitionsToTxnResponse>(ApiKey.AddPartitionsToTxn, 4, encodeAddPartitionsToTxnRequest, decodeAddPartitionsToTxnResponse);
const END = (v: number): ApiSpec<EndTxnRequestInput, EndTxnResponse> => at(ApiKey.EndTxn, v, encodeEndTxnRequest, decodeEndTxnResponse);
const DESCRIBE_TXN = at<DescribeTransactionsRequestInput, DescribeTransactionsResponse>(ApiKey.DescribeTransactions, 0, encodeDescribeTransactionsRequest, decodeDescribeTransactionsResponse);
const API_VERSIONS = at<ApiVersionsRequestInput, ApiVersionsResponse>(ApiKey.ApiVersions, 4, encodeApiVersionsRequest, decodeApiVersionsResponse);

let cluster: RunningCluster;
const clients: KafkaClient[] = [];

/** A client of node `nodeId` only, logged in as `user`. */
function client(nodeId: number, user = 'admin'): KafkaClient {
  const cfg = new Map([
    ['bootstrap.servers', cluster.node(nodeId).bootstrap],
    ['security.protocol', 'SASL_PLAINTEXT'],
    ['sasl.mechanism', 'PLAIN'],
    ['sasl.jaas.config', `org.apache.kafka.common.security.plain.PlainLoginModule required username="${user}" password="${user}-secret";`],
    ['request.timeout.ms', '10000'],
  ]);
  const c = new KafkaClient(clientOptionsFromConfig(cfg, 'txn-partition-checks'));
  clients.push(c);
  return c;
}

/** The leader of every TOPIC partition, by partition. */
async function leaders(): Promise<number[]> {
  const md = await client(1).metadata([TOPIC]);
  const t = md.topics.find((x) => x.name === TOPIC)!;
  return [...t.partitions].sort((a, b) => a.partitionIndex - b.partitionIndex).map((p) => p.leaderId);
}

/** The transaction coordinator of `txnId` and a TOPIC partition led by another node. */
async function coordinatorAndForeignPartition(txnId: string): Promise<{ coordinator: number; partition: number; leader: number }> {
  return eventually(`a coordinator for ${txnId} and a partition led elsewhere`, async () => {
    const r = await client(1).send(Apis.FindCoordinator, { keyType: 1, coordinatorKeys: [txnId] });
    const c = r.coordinators[0]!;
    if (c.errorCode !== 0) return null;
    const ls = await leaders();
    const partition = ls.findIndex((l) => l >= 0 && l !== c.nodeId);
    return partition < 0 ? null : { coordinator: c.nodeId, partition, leader: ls[partition]! };
  });
}

async function initProducer(coordinator: number, txnId: string): Promise<{ producerId: bigint; producerEpoch: number }> {
  return eventually(`InitProducerId for ${txnId}`, async () => {
    const r = await client(coordinator).send(INIT, { transactionalId: txnId, transactionTimeoutMs: 60_000, producerId: -1n, producerEpoch: -1 });
    return r.errorCode === 0 ? { producerId: r.producerId, producerEpoch: r.producerEpoch } : null;
  });
}

/** One transactional produce of one record to TOPIC-`partition` through `leader`; its partition answer. */
async function produce(leader: number, version: number, txnId: string, producerId: bigint, producerEpoch: number, partition: number, baseSequence: number) {
  const records = buildRecordBatch({ producerId: Number(producerId), producerEpoch, baseSequence, isTransactional: true, records: [{ value: Buffer.from(`v${version}-${baseSequence}`) }] });
  const r = await client(leader).send(produceV(version), { transactionalId: txnId, acks: -1, timeoutMs: 10_000, topicData: [{ name: TOPIC, partitionData: [{ index: partition, records }] }] });
  const p = r.responses[0]!.partitionResponses[0]!;
  return { errorCode: p.errorCode, errorMessage: p.errorMessage ?? null };
}

/** One transactional produce of one record, acks=1, through `c`: its partition answer and base offset. */
async function produceAcks1(c: KafkaClient, txnId: string, producerId: bigint, producerEpoch: number, partition: number, baseSequence: number) {
  const records = buildRecordBatch({ producerId: Number(producerId), producerEpoch, baseSequence, isTransactional: true, records: [{ value: Buffer.from(`ordered-${producerEpoch}-${baseSequence}`) }] });
  const r = await c.send(produceV(12), { transactionalId: txnId, acks: 1, timeoutMs: 10_000, topicData: [{ name: TOPIC, partitionData: [{ index: partition, records }] }] });
  const p = r.responses[0]!.partitionResponses[0]!;
  return { errorCode: p.errorCode, errorMessage: p.errorMessage ?? null, baseOffset: Number(p.baseOffset) };
}

/** TOPIC-`partition`'s log end offset as its leader answers ListOffsets (read_uncommitted). */
async function logEnd(leader: number, partition: number): Promise<number> {
  const r = await client(leader).send(Apis.ListOffsets, { replicaId: -1, isolationLevel: 0, topics: [{ name: TOPIC, partitions: [{ partitionIndex: partition, currentLeaderEpoch: -1, timestamp: -1n }] }] });
  return Number(r.topics[0]!.partitions[0]!.offset);
}

beforeAll(async () => {
  cluster = await startCluster({
    nodes: 3,
    overrides: {
      'listener.security.protocol.map': 'SASL:SASL_PLAINTEXT',
      'inter.broker.listener.name': 'SASL',
      'sasl.mechanism.inter.broker.protocol': 'PLAIN',
      'listener.name.sasl.sasl.enabled.mechanisms': 'PLAIN',
      'listener.name.sasl.plain.sasl.jaas.config': JAAS,
      'authorizer.class.name': 'org.apache.kafka.metadata.authorizer.StandardAuthorizer',
      'super.users': 'User:admin;User:broker',
      'transaction.state.log.num.partitions': 3,
      'offsets.topic.num.partitions': 3,
      'auto.leader.rebalance.enable': false,
    },
    nodeOverrides: (_id, port) => ({ listeners: `SASL://127.0.0.1:${port}` }),
  });
  const ct = await client(1).send(Apis.CreateTopics, { topics: [{ name: TOPIC, numPartitions: 3, replicationFactor: 3, assignments: [], configs: [] }], timeoutMs: 10_000, validateOnly: false });
  expect(ct.topics[0]!.errorCode).toBe(0);
  await eventually('every partition to have a leader', async () => (await leaders()).every((l) => l > 0));
}, 180_000);

afterAll(async () => {
  for (const c of clients) c.close();
  await cluster?.destroy();
});

describe('transactional produce to a partition led by another node than the coordinator', () => {
  it('finalizes transaction.version=2 on every node', async () => {
    for (const id of [1, 2, 3]) {
      const av = await client(id).send(API_VERSIONS, { clientSoftwareName: 'fjord-test', clientSoftwareVersion: '1' });
      expect(av.finalizedFeatures.find((f) => f.name === 'transaction.version')).toMatchObject({ minVersionLevel: 2, maxVersionLevel: 2 });
      expect(av.apiKeys.find((k) => k.apiKey === ApiKey.EndTxn)?.maxVersion).toBe(5);
      expect(av.apiKeys.find((k) => k.apiKey === ApiKey.AddPartitionsToTxn)?.maxVersion).toBe(5);
    }
  });

  it('V1: refuses a partition never added (INVALID_TXN_STATE before v11, TRANSACTION_ABORTABLE at v11) and appends nothing', async () => {
    const txnId = 'v1-never-added';
    const { coordinator, partition, leader } = await coordinatorAndForeignPartition(txnId);
    const { producerId, producerEpoch } = await initProducer(coordinator, txnId);
    const before = await logEnd(leader, partition);

    expect(await produce(leader, 10, txnId, producerId, producerEpoch, partition, 0)).toEqual({ errorCode: ErrorCode.INVALID_TXN_STATE, errorMessage: 'Partition was not added to the transaction' });
    expect(await produce(leader, 11, txnId, producerId, producerEpoch, partition, 0)).toEqual({ errorCode: ErrorCode.TRANSACTION_ABORTABLE, errorMessage: null });
    expect(await logEnd(leader, partition)).toBe(before);

    // Added by the producer (AddPartitionsToTxn v3 at its coordinator), the same batch is taken.
    const add = await client(coordinator).send(ADD_V3, { v3AndBelowTransactionalId: txnId, v3AndBelowProducerId: producerId, v3AndBelowProducerEpoch: producerEpoch, v3AndBelowTopics: [{ name: TOPIC, partitions: [partition] }] });
    expect(add.resultsByTopicV3AndBelow[0]!.resultsByPartition[0]!.partitionErrorCode).toBe(0);
    expect(await produce(leader, 10, txnId, producerId, producerEpoch, partition, 0)).toEqual({ errorCode: 0, errorMessage: null });
    expect(await logEnd(leader, partition)).toBe(before + 1);
    const end = await client(coordinator).send(END(4), { transactionalId: txnId, producerId, producerEpoch, committed: true });
    expect(end.errorCode).toBe(0);
  }, 60_000);

  it('V2: Produce v12 adds the partition at the coordinator on another node; a stale epoch is INVALID_PRODUCER_EPOCH', async () => {
    const txnId = 'v2-implicit-add';
    const { coordinator, partition, leader } = await coordinatorAndForeignPartition(txnId);
    const { producerId, producerEpoch } = await initProducer(coordinator, txnId);

    expect(await produce(leader, 12, txnId, producerId, producerEpoch, partition, 0)).toEqual({ errorCode: 0, errorMessage: null });
    const d = await client(coordinator).send(DESCRIBE_TXN, { transactionalIds: [txnId] });
    expect(d.transactionStates[0]).toMatchObject({ errorCode: 0, transactionState: 'Ongoing', topics: [{ topic: TOPIC, partitions: [partition] }] });

    const end = await client(coordinator).send(END(5), { transactionalId: txnId, producerId, producerEpoch, committed: true });
    expect(end).toMatchObject({ errorCode: 0, producerId, producerEpoch: producerEpoch + 1 });
    // The old epoch is fenced: at the coordinator for a partition it never saw, by the markers here.
    const other = (partition + 1) % 3;
    const otherLeader = (await leaders())[other]!;
    expect((await produce(otherLeader, 12, txnId, producerId, producerEpoch, other, 0)).errorCode).toBe(ErrorCode.INVALID_PRODUCER_EPOCH);
    expect((await produce(leader, 12, txnId, producerId, producerEpoch, partition, 1)).errorCode).toBe(ErrorCode.INVALID_PRODUCER_EPOCH);
    // The next transaction at the bumped epoch goes on.
    expect(await produce(leader, 12, txnId, producerId, producerEpoch + 1, partition, 0)).toEqual({ errorCode: 0, errorMessage: null });
    const abort = await client(coordinator).send(END(5), { transactionalId: txnId, producerId, producerEpoch: producerEpoch + 1, committed: false });
    expect(abort.errorCode).toBe(0);
  }, 60_000);
  it('V2: a batch sent while an earlier one of the transaction is still being checked is appended after it, not refused OUT_OF_ORDER_SEQUENCE_NUMBER', async () => {
    const txnId = 'v2-pipelined';
    const { coordinator, partition, leader } = await coordinatorAndForeignPartition(txnId);
    let { producerId, producerEpoch } = await initProducer(coordinator, txnId);
    // One connection to the leader, as a producer has: requests on it arrive in the order sent.
    const conn = client(leader);
    // A Java producer's pattern (max.in.flight 5): sequence 0 and 1 of a new transaction leave
    // together and both wait for the check with the coordinator on another node; sequence 2 leaves
    // once 0 is answered, while 1 may still be waiting. Each round is a new transaction.
    for (let round = 0; round < 40; round++) {
      const s0 = produceAcks1(conn, txnId, producerId, producerEpoch, partition, 0);
      const s1 = produceAcks1(conn, txnId, producerId, producerEpoch, partition, 1);
      const first = await s0;
      const s2 = produceAcks1(conn, txnId, producerId, producerEpoch, partition, 2);
      const answers = [first, await s1, await s2];
      expect(answers.map((a) => [a.errorCode, a.errorMessage]), `round ${round}`).toEqual([[0, null], [0, null], [0, null]]);
      expect(answers.map((a) => a.baseOffset - first.baseOffset), `round ${round}`).toEqual([0, 1, 2]);
      const end = await client(coordinator).send(END(5), { transactionalId: txnId, producerId, producerEpoch, committed: true });
      expect(end.errorCode).toBe(0);
      ({ producerId, producerEpoch } = end);
    }
  }, 120_000);
});

describe('AddPartitionsToTxn v4 (inter-broker)', () => {
  it('is refused with CLUSTER_AUTHORIZATION_FAILED for a principal without CLUSTER_ACTION, and served for a super user', async () => {
    const txnId = 'v4-verify';
    const { coordinator } = await coordinatorAndForeignPartition(txnId);
    const { producerId, producerEpoch } = await initProducer(coordinator, txnId);
    const req: AddPartitionsToTxnRequestInput = { transactions: [{ transactionalId: txnId, producerId, producerEpoch, verifyOnly: true, topics: [{ name: TOPIC, partitions: [0] }] }] };

    const refused = await client(coordinator, 'alice').send(ADD_V4, req);
    expect(refused).toMatchObject({ errorCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED, resultsByTransaction: [] });

    const served = await client(coordinator, 'admin').send(ADD_V4, req);
    expect(served.errorCode).toBe(0);
    expect(served.resultsByTransaction).toMatchObject([{ transactionalId: txnId, topicResults: [{ name: TOPIC, resultsByPartition: [{ partitionIndex: 0, partitionErrorCode: ErrorCode.TRANSACTION_ABORTABLE }] }] }]);
  }, 60_000);
});
