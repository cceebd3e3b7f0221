/**
 * KIP-890 part 1 (transaction verification) over raw requests, which kafka-44-protocol.test.ts
 * runs against Apache Kafka 4.4.0 and against Fjord by the differential runner: a transactional
 * Produce v10 to a partition the producer never added to its transaction (AddPartitionsToTxn) is
 * refused with INVALID_TXN_STATE and Kafka's message, v11 with TRANSACTION_ABORTABLE, another epoch with INVALID_PRODUCER_EPOCH,
 * and nothing is appended; once added, the batch is taken. AddPartitionsToTxn v4 with VerifyOnly
 * (the partition leaders' request) answers TRANSACTION_ABORTABLE for a partition no longer in the
 * transaction. Kafka's answers are the expected ones; Fjord's must equal them.
 */
import { expect } from 'vitest';
import { ErrorCode } from '../../src/protocol/generated/errors.js';
import { encodeAddPartitionsToTxnRequest } from '../../src/protocol/generated/messages/add-partitions-to-txn-request.js';
import { decodeAddPartitionsToTxnResponse } from '../../src/protocol/generated/messages/add-partitions-to-txn-response.js';
import { encodeCreateTopicsRequest } from '../../src/protocol/generated/messages/create-topics-request.js';
import { decodeCreateTopicsResponse } from '../../src/protocol/generated/messages/create-topics-response.js';
import { encodeEndTxnRequest } from '../../src/protocol/generated/messages/end-txn-request.js';
import { decodeEndTxnResponse } from '../../src/protocol/generated/messages/end-txn-response.js';
import { encodeFindCoordinatorRequest } from '../../src/protocol/generated/messages/find-coordinator-request.js';
import { encodeInitProducerIdRequest } from '../../src/protocol/generated/messages/init-producer-id-request.js';
import { decodeInitProducerIdResponse } from '../../src/protocol/generated/messages/init-producer-id-response.js';
import { encodeListOffsetsRequest } from '../../src/protocol/generated/messages/list-offsets-request.js';
import { decodeListOffsetsResponse } from '../../src/protocol/generated/messages/list-offsets-response.js';
import { encodeProduceRequest } from '../../src/protocol/generated/messages/produce-request.js';
import { decodeProduceResponse } from '../../src/protocol/generated/messages/produce-response.js';
import { buildRecordBatch } from '../../src/protocol/records.js';
import { WireClient } from '../broker/wire.js';
import { lastAnswer } from '../helpers/wait.js';

type Obs = Record<string, unknown>;

const NOT_READY: readonly number[] = [ErrorCode.COORDINATOR_LOAD_IN_PROGRESS, ErrorCode.COORDINATOR_NOT_AVAILABLE, ErrorCode.NOT_COORDINATOR, ErrorCode.CONCURRENT_TRANSACTIONS];

export async function runTxnVerification(c: WireClient, topic: string): Promise<Obs> {
  const txnId = `${topic}-txn`;
  const ct = decodeCreateTopicsResponse(await c.call(19, 7, (w) => encodeCreateTopicsRequest(w, { topics: [{ name: topic, numPartitions: 1, replicationFactor: 1 }], timeoutMs: 10_000 }, 7)), 7);
  expect(ct.topics[0]!.errorCode).toBe(0);
  const init = await lastAnswer(
    async () => {
      await c.call(10, 4, (w) => encodeFindCoordinatorRequest(w, { keyType: 1, coordinatorKeys: [txnId] }, 4));
      return decodeInitProducerIdResponse(await c.call(22, 4, (w) => encodeInitProducerIdRequest(w, { transactionalId: txnId, transactionTimeoutMs: 60_000, producerId: -1n, producerEpoch: -1 }, 4)), 4);
    },
    (r) => !NOT_READY.includes(r.errorCode),
  );
  expect(init.errorCode).toBe(0);
  const pid = init.producerId;
  const epoch = init.producerEpoch;

  /** One transactional batch at Produce `v`; the partition's code and message (retrying a coordinator still loading). */
  const produce = async (v: number, producerEpoch: number, baseSequence: number): Promise<[number, string | null]> => {
    const records = buildRecordBatch({ producerId: Number(pid), producerEpoch, baseSequence, isTransactional: true, records: [{ value: Buffer.from(`v${v}`) }] });
    const r = await lastAnswer(
      async () => decodeProduceResponse(await c.call(0, v, (w) => encodeProduceRequest(w, { transactionalId: txnId, acks: -1, timeoutMs: 10_000, topicData: [{ name: topic, partitionData: [{ index: 0, records }] }] }, v)), v),
      // A new partition may still be without a leader (NOT_LEADER_OR_FOLLOWER, nothing appended).
      (res) => !([ErrorCode.NOT_ENOUGH_REPLICAS, ErrorCode.NOT_LEADER_OR_FOLLOWER] as readonly number[]).includes(res.responses[0]!.partitionResponses[0]!.errorCode),
    );
    const p = r.responses[0]!.partitionResponses[0]!;
    return [p.errorCode, p.errorMessage ?? null];
  };
  const logEnd = async (): Promise<number> => {
    const r = decodeListOffsetsResponse(await c.call(2, 9, (w) => encodeListOffsetsRequest(w, { replicaId: -1, isolationLevel: 0, topics: [{ name: topic, partitions: [{ partitionIndex: 0, currentLeaderEpoch: -1, timestamp: -1n }] }] }, 9)), 9);
    return Number(r.topics[0]!.partitions[0]!.offset);
  };
  const verify = async (): Promise<unknown> => {
    const r = decodeAddPartitionsToTxnResponse(
      await c.call(24, 4, (w) => encodeAddPartitionsToTxnRequest(w, { transactions: [{ transactionalId: txnId, producerId: pid, producerEpoch: epoch, verifyOnly: true, topics: [{ name: topic, partitions: [0] }] }] }, 4)),
      4,
    );
    return { errorCode: r.errorCode, partitions: r.resultsByTransaction.map((t) => t.topicResults.map((tr) => tr.resultsByPartition.map((p) => p.partitionErrorCode))) };
  };

  const obs: Obs = {};
  obs.v10NotAdded = await produce(10, epoch, 0);
  obs.v11NotAdded = await produce(11, epoch, 0);
  obs.v10OtherEpoch = await produce(10, epoch + 1, 0);
  obs.logEndAfterRefusals = await logEnd();
  const add = decodeAddPartitionsToTxnResponse(
    await c.call(24, 3, (w) => encodeAddPartitionsToTxnRequest(w, { v3AndBelowTransactionalId: txnId, v3AndBelowProducerId: pid, v3AndBelowProducerEpoch: epoch, v3AndBelowTopics: [{ name: topic, partitions: [0] }] }, 3)),
    3,
  );
  obs.added = add.resultsByTopicV3AndBelow[0]!.resultsByPartition[0]!.partitionErrorCode;
  obs.verifyWhileAdded = await verify();
  obs.v10Added = await produce(10, epoch, 0);
  obs.logEndAfterAdd = await logEnd();
  const end = await lastAnswer(
    async () => decodeEndTxnResponse(await c.call(26, 4, (w) => encodeEndTxnRequest(w, { transactionalId: txnId, producerId: pid, producerEpoch: epoch, committed: true }, 4)), 4),
    (r) => r.errorCode !== ErrorCode.CONCURRENT_TRANSACTIONS,
  );
  obs.endTxn = end.errorCode;
  // Once the transaction is complete the partition is no longer in it.
  obs.verifyAfterCommit = await lastAnswer(verify, (v) => JSON.stringify(v) !== JSON.stringify({ errorCode: 0, partitions: [[[ErrorCode.CONCURRENT_TRANSACTIONS]]] }));
  return obs;
}

export function checkTxnVerification(o: Obs): void {
  expect(o.v10NotAdded).toEqual([ErrorCode.INVALID_TXN_STATE, 'Partition was not added to the transaction']);
  expect(o.v11NotAdded).toEqual([ErrorCode.TRANSACTION_ABORTABLE, null]);
  expect(o.v10OtherEpoch).toEqual([ErrorCode.INVALID_PRODUCER_EPOCH, null]);
  expect(o.logEndAfterRefusals).toBe(0);
  expect(o.added).toBe(0);
  expect(o.verifyWhileAdded).toEqual({ errorCode: 0, partitions: [[[0]]] });
  expect(o.v10Added).toEqual([0, null]);
  expect(o.logEndAfterAdd).toBe(1);
  expect(o.endTxn).toBe(0);
  expect(o.verifyAfterCommit).toEqual({ errorCode: 0, partitions: [[[ErrorCode.TRANSACTION_ABORTABLE]]] });
}
