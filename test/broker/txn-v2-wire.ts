/**
 * Transactions V2 (KIP-890 part 2) spoken over one raw connection, as a Java 4.x producer does
 * when `transaction.version` is finalized at 2: no AddPartitionsToTxn or AddOffsetsToTxn, Produce
 * v12 and TxnOffsetCommit v5 add the partitions themselves, EndTxn v5 bumps the epoch and returns
 * it. Used against a Fjord node (test/broker/txn-v2.test.ts) and against Apache Kafka 4.4 by the
 * differential runner (test/interop/kafka-44-protocol.test.ts), so both are asked the same.
 */
import { expect } from 'vitest';
import { ErrorCode } from '../../src/protocol/generated/errors.js';
import { encodeApiVersionsRequest } from '../../src/protocol/generated/messages/api-versions-request.js';
import { decodeApiVersionsResponse } from '../../src/protocol/generated/messages/api-versions-response.js';
import { encodeCreateTopicsRequest } from '../../src/protocol/generated/messages/create-topics-request.js';
import { decodeCreateTopicsResponse } from '../../src/protocol/generated/messages/create-topics-response.js';
import { encodeEndTxnRequest } from '../../src/protocol/generated/messages/end-txn-request.js';
import { decodeEndTxnResponse } from '../../src/protocol/generated/messages/end-txn-response.js';
import { encodeFindCoordinatorRequest } from '../../src/protocol/generated/messages/find-coordinator-request.js';
import { encodeInitProducerIdRequest } from '../../src/protocol/generated/messages/init-producer-id-request.js';
import { decodeInitProducerIdResponse } from '../../src/protocol/generated/messages/init-producer-id-response.js';
import { encodeListOffsetsRequest } from '../../src/protocol/generated/messages/list-offsets-request.js';
import { decodeListOffsetsResponse } from '../../src/protocol/generated/messages/list-offsets-response.js';
import { encodeOffsetFetchRequest } from '../../src/protocol/generated/messages/offset-fetch-request.js';
import { decodeOffsetFetchResponse } from '../../src/protocol/generated/messages/offset-fetch-response.js';
import { encodeProduceRequest } from '../../src/protocol/generated/messages/produce-request.js';
import { decodeProduceResponse } from '../../src/protocol/generated/messages/produce-response.js';
import { encodeTxnOffsetCommitRequest } from '../../src/protocol/generated/messages/txn-offset-commit-request.js';
import { decodeTxnOffsetCommitResponse } from '../../src/protocol/generated/messages/txn-offset-commit-response.js';
import { buildRecordBatch } from '../../src/protocol/records.js';
import type { WireClient } from './wire.js';
import { lastAnswer } from '../helpers/wait.js';

export type TxnV2Observation = Record<string, unknown>;

const NOT_READY: readonly number[] = [ErrorCode.COORDINATOR_LOAD_IN_PROGRESS, ErrorCode.COORDINATOR_NOT_AVAILABLE, ErrorCode.NOT_COORDINATOR, ErrorCode.CONCURRENT_TRANSACTIONS];

/** Runs the whole exchange on `c` with a fresh `topic`; returns what a producer would see. */
export async function runTxnV2(c: WireClient, topic: string): Promise<TxnV2Observation> {
  const txnId = `${topic}-txn`;
  const group = `${topic}-group`;
  const av = decodeApiVersionsResponse(await c.call(18, 4, (w) => encodeApiVersionsRequest(w, { clientSoftwareName: 'wire-test', clientSoftwareVersion: '1.0' }, 4)), 4);
  const max = Object.fromEntries(av.apiKeys.filter((k) => [0, 26, 27, 28].includes(k.apiKey)).map((k) => [k.apiKey, k.maxVersion]));
  const feature = av.finalizedFeatures.find((f) => f.name === 'transaction.version');
  const supported = av.supportedFeatures.find((f) => f.name === 'transaction.version');

  const ct = decodeCreateTopicsResponse(await c.call(19, 7, (w) => encodeCreateTopicsRequest(w, { topics: [{ name: topic, numPartitions: 1, replicationFactor: 1 }], timeoutMs: 10_000 }, 7)), 7);
  expect(ct.topics[0]!.errorCode).toBe(0);

  const init = await lastAnswer(
    async () => {
      await c.call(10, 4, (w) => encodeFindCoordinatorRequest(w, { keyType: 1, coordinatorKeys: [txnId] }, 4));
      return decodeInitProducerIdResponse(await c.call(22, 5, (w) => encodeInitProducerIdRequest(w, { transactionalId: txnId, transactionTimeoutMs: 60_000, producerId: -1n, producerEpoch: -1 }, 5)), 5);
    },
    (r) => !NOT_READY.includes(r.errorCode),
  );
  expect(init.errorCode).toBe(0);
  const pid = init.producerId;
  const epoch0 = init.producerEpoch;

  const produce = async (epoch: number, baseSequence: number, value: string): Promise<number> => {
    const records = buildRecordBatch({ producerId: Number(pid), producerEpoch: epoch, baseSequence, isTransactional: true, records: [{ value: Buffer.from(value) }] });
    const r = await lastAnswer(
      async () => decodeProduceResponse(await c.call(0, 12, (w) => encodeProduceRequest(w, { transactionalId: txnId, acks: -1, timeoutMs: 10_000, topicData: [{ name: topic, partitionData: [{ index: 0, records }] }] }, 12)), 12),
      (res) => res.responses[0]!.partitionResponses[0]!.errorCode !== ErrorCode.NOT_ENOUGH_REPLICAS,
    );
    return r.responses[0]!.partitionResponses[0]!.errorCode;
  };
  const endTxn = async (epoch: number, committed: boolean) => {
    const r = await lastAnswer(
      async () => decodeEndTxnResponse(await c.call(26, 5, (w) => encodeEndTxnRequest(w, { transactionalId: txnId, producerId: pid, producerEpoch: epoch, committed }, 5)), 5),
      (res) => res.errorCode !== ErrorCode.CONCURRENT_TRANSACTIONS,
    );
    return { errorCode: r.errorCode, samePid: r.producerId === pid, epochDelta: r.producerEpoch - epoch0 };
  };
  const offsets = async (isolationLevel: number): Promise<number> => {
    const r = await c.call(2, 9, (w) => encodeListOffsetsRequest(w, { replicaId: -1, isolationLevel, topics: [{ name: topic, partitions: [{ partitionIndex: 0, currentLeaderEpoch: -1, timestamp: -1n }] }] }, 9));
    return Number(decodeListOffsetsResponse(r, 9).topics[0]!.partitions[0]!.offset);
  };
  // Kafka answers EndTxn once Prepare is durable and writes the markers after; wait for them.
  const settled = async (end: number): Promise<number[]> => {
    let last: number[] = [];
    await lastAnswer(
      async () => (last = [await offsets(1), await offsets(0)]),
      (o) => o[0] === end && o[1] === end,
    );
    return last;
  };
  const txnOffsetCommit = async (epoch: number, offset: bigint): Promise<number> => {
    const r = await lastAnswer(
      async () => {
        // Kafka creates __consumer_offsets on the first group lookup.
        await c.call(10, 4, (w) => encodeFindCoordinatorRequest(w, { keyType: 0, coordinatorKeys: [group] }, 4));
        return decodeTxnOffsetCommitResponse(
          await c.call(28, 5, (w) =>
            encodeTxnOffsetCommitRequest(w, { transactionalId: txnId, groupId: group, producerId: pid, producerEpoch: epoch, generationIdOrMemberEpoch: -1, memberId: '', groupInstanceId: null, topics: [{ name: topic, partitions: [{ partitionIndex: 0, committedOffset: offset, committedLeaderEpoch: -1, committedMetadata: '' }] }] }, 5),
          ),
          5,
        );
      },
      (res) => !NOT_READY.includes(res.topics[0]!.partitions[0]!.errorCode),
    );
    return r.topics[0]!.partitions[0]!.errorCode;
  };
  const committedOffset = async (): Promise<number | string> => {
    const r = await lastAnswer(
      async () => decodeOffsetFetchResponse(await c.call(9, 8, (w) => encodeOffsetFetchRequest(w, { groups: [{ groupId: group, topics: [{ name: topic, partitionIndexes: [0] }] }], requireStable: true }, 8)), 8),
      (res) => !NOT_READY.includes(res.groups[0]!.errorCode) && res.groups[0]!.topics[0]?.partitions[0]?.errorCode !== ErrorCode.UNSTABLE_OFFSET_COMMIT,
    );
    const g = r.groups[0]!;
    const p = g.topics[0]?.partitions[0];
    return p === undefined ? `group error ${g.errorCode}` : p.errorCode !== 0 ? `error ${p.errorCode}` : Number(p.committedOffset);
  };

  const obs: TxnV2Observation = {
    apiVersions: { max, finalized: feature === undefined ? null : [feature.minVersionLevel, feature.maxVersionLevel], supported: supported === undefined ? null : [supported.minVersion, supported.maxVersion], epochKnown: av.finalizedFeaturesEpoch >= 0n },
  };
  // Transaction 1: a produce without AddPartitionsToTxn, committed.
  obs.produce1 = await produce(epoch0, 0, 'one');
  obs.lsoWhileOpen = await offsets(1);
  obs.commit1 = await endTxn(epoch0, true);
  obs.afterCommit1 = await settled(2);
  // The old epoch is fenced everywhere once the markers carry the bumped one.
  obs.lateProduceOldEpoch = await produce(epoch0, 1, 'late');
  obs.retryCommit1 = await endTxn(epoch0, true);
  obs.abortWithOldEpoch = await endTxn(epoch0, false);
  // Transaction 2, at the epoch EndTxn returned: offsets without AddOffsetsToTxn, and a record.
  const epoch1 = epoch0 + 1;
  obs.txnOffsetCommit2 = await txnOffsetCommit(epoch1, 42n);
  obs.produce2 = await produce(epoch1, 0, 'two');
  obs.commit2 = await endTxn(epoch1, true);
  obs.afterCommit2 = await settled(4);
  obs.committedOffset2 = await committedOffset();
  // Transaction 3 is aborted: its record stays below the LSO but is never read committed.
  const epoch2 = epoch0 + 2;
  obs.produce3 = await produce(epoch2, 0, 'three');
  obs.txnOffsetCommit3 = await txnOffsetCommit(epoch2, 99n);
  obs.abort3 = await endTxn(epoch2, false);
  obs.afterAbort3 = await settled(6);
  obs.committedOffset3 = await committedOffset();
  // An abort with nothing in the transaction still moves to the next epoch.
  obs.emptyAbort = await endTxn(epoch0 + 3, false);
  obs.emptyCommit = await endTxn(epoch0 + 4, true);
  return obs;
}

/** What holds on any broker that serves transactions V2. */
export function checkTxnV2(o: TxnV2Observation): void {
  expect(o.apiVersions).toEqual({ max: { 0: 13, 26: 5, 27: 2, 28: 6 }, finalized: [2, 2], supported: [0, 2], epochKnown: true });
  expect(o.produce1).toBe(0);
  expect(o.lsoWhileOpen).toBe(0);
  expect(o.commit1).toEqual({ errorCode: 0, samePid: true, epochDelta: 1 });
  expect(o.afterCommit1).toEqual([2, 2]);
  expect(o.lateProduceOldEpoch).toBe(ErrorCode.INVALID_PRODUCER_EPOCH);
  expect(o.retryCommit1).toEqual({ errorCode: 0, samePid: true, epochDelta: 1 });
  expect(o.abortWithOldEpoch).toEqual({ errorCode: ErrorCode.INVALID_TXN_STATE, samePid: false, epochDelta: -1 });
  expect(o.txnOffsetCommit2).toBe(0);
  expect(o.produce2).toBe(0);
  expect(o.commit2).toEqual({ errorCode: 0, samePid: true, epochDelta: 2 });
  expect(o.committedOffset2).toBe(42);
  expect(o.afterCommit2).toEqual([4, 4]);
  expect(o.produce3).toBe(0);
  expect(o.abort3).toEqual({ errorCode: 0, samePid: true, epochDelta: 3 });
  expect(o.committedOffset3).toBe(42);
  expect(o.afterAbort3).toEqual([6, 6]);
  expect(o.emptyAbort).toEqual({ errorCode: 0, samePid: true, epochDelta: 4 });
  expect(o.emptyCommit).toEqual({ errorCode: ErrorCode.INVALID_TXN_STATE, samePid: false, epochDelta: -1 });
}
