/**
 * KIP-932 share groups over raw sockets to a real node: what ApiVersions advertises, the
 * ShareGroupHeartbeat member-epoch rules and the simple assignor, share sessions on ShareFetch and
 * ShareAcknowledge, acquisition returning the stored batches unchanged, RELEASE redelivery up to
 * `share.delivery.count.limit` and then ARCHIVED (the start offset moves past), acknowledgements
 * by a member that does not hold the records, and Describe/Alter/DeleteShareGroupOffsets.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrorCode } from '../../src/protocol/generated/errors.js';
import { encodeAlterShareGroupOffsetsRequest } from '../../src/protocol/generated/messages/alter-share-group-offsets-request.js';
import { decodeAlterShareGroupOffsetsResponse } from '../../src/protocol/generated/messages/alter-share-group-offsets-response.js';
import { encodeApiVersionsRequest } from '../../src/protocol/generated/messages/api-versions-request.js';
import { decodeApiVersionsResponse } from '../../src/protocol/generated/messages/api-versions-response.js';
import { encodeDeleteShareGroupOffsetsRequest } from '../../src/protocol/generated/messages/delete-share-group-offsets-request.js';
import { decodeDeleteShareGroupOffsetsResponse } from '../../src/protocol/generated/messages/delete-share-group-offsets-response.js';
import { encodeEndTxnRequest } from '../../src/protocol/generated/messages/end-txn-request.js';
import { decodeEndTxnResponse } from '../../src/protocol/generated/messages/end-txn-response.js';
import { encodeInitProducerIdRequest } from '../../src/protocol/generated/messages/init-producer-id-request.js';
import { decodeInitProducerIdResponse } from '../../src/protocol/generated/messages/init-producer-id-response.js';
import { encodeListOffsetsRequest } from '../../src/protocol/generated/messages/list-offsets-request.js';
import { decodeListOffsetsResponse } from '../../src/protocol/generated/messages/list-offsets-response.js';
import { encodeDescribeShareGroupOffsetsRequest } from '../../src/protocol/generated/messages/describe-share-group-offsets-request.js';
import { decodeDescribeShareGroupOffsetsResponse } from '../../src/protocol/generated/messages/describe-share-group-offsets-response.js';
import { encodeFindCoordinatorRequest } from '../../src/protocol/generated/messages/find-coordinator-request.js';
import { decodeFindCoordinatorResponse } from '../../src/protocol/generated/messages/find-coordinator-response.js';
import { encodeProduceRequest } from '../../src/protocol/generated/messages/produce-request.js';
import { decodeProduceResponse } from '../../src/protocol/generated/messages/produce-response.js';
import { encodeShareAcknowledgeRequest, type ShareAcknowledgeRequestInput } from '../../src/protocol/generated/messages/share-acknowledge-request.js';
import { decodeShareAcknowledgeResponse } from '../../src/protocol/generated/messages/share-acknowledge-response.js';
import { encodeShareFetchRequest, type ShareFetchRequestInput } from '../../src/protocol/generated/messages/share-fetch-request.js';
import { decodeShareFetchResponse } from '../../src/protocol/generated/messages/share-fetch-response.js';
import { encodeShareGroupDescribeRequest } from '../../src/protocol/generated/messages/share-group-describe-request.js';
import { decodeShareGroupDescribeResponse } from '../../src/protocol/generated/messages/share-group-describe-response.js';
import { type ShareGroupHeartbeatRequestInput } from '../../src/protocol/generated/messages/share-group-heartbeat-request.js';
import { buildRecordBatch } from '../../src/protocol/records.js';
import { encodeInitializeShareGroupStateRequest } from '../../src/protocol/generated/messages/initialize-share-group-state-request.js';
import { decodeInitializeShareGroupStateResponse } from '../../src/protocol/generated/messages/initialize-share-group-state-response.js';
import { encodeReadShareGroupStateRequest } from '../../src/protocol/generated/messages/read-share-group-state-request.js';
import { decodeReadShareGroupStateResponse } from '../../src/protocol/generated/messages/read-share-group-state-response.js';
import { encodeWriteShareGroupStateRequest } from '../../src/protocol/generated/messages/write-share-group-state-request.js';
import { decodeWriteShareGroupStateResponse } from '../../src/protocol/generated/messages/write-share-group-state-response.js';
import { encodeDeleteShareGroupStateRequest } from '../../src/protocol/generated/messages/delete-share-group-state-request.js';
import { encodeReadShareGroupStateSummaryRequest } from '../../src/protocol/generated/messages/read-share-group-state-summary-request.js';
import { decodeReadShareGroupStateSummaryResponse } from '../../src/protocol/generated/messages/read-share-group-state-summary-response.js';
import { decodeDeleteShareGroupStateResponse } from '../../src/protocol/generated/messages/delete-share-group-state-response.js';
import { eventually } from '../helpers/cluster.js';
import { type RunningNode } from '../helpers/node.js';
import { createTopicWithId, nodeWithClient, removeNode, setGroupConfigs, shareHeartbeat } from '../helpers/share-wire.js';
import { lastAnswer } from '../helpers/wait.js';
import { WireClient } from './wire.js';

let node: RunningNode;
let c: WireClient;
const topicIds = new Map<string, string>();

async function createTopic(name: string, numPartitions: number): Promise<void> {
  topicIds.set(name, await createTopicWithId(c, name, numPartitions));
}

const groupConfig = (group: string, configs: Record<string, string>) => setGroupConfigs(c, group, configs);

/** Produces `batches` batches of 3 records each to partition 0 and returns the batches sent. */
async function produce(topic: string, batches: number): Promise<Buffer[]> {
  const sent: Buffer[] = [];
  for (let b = 0; b < batches; b++) {
    const batch = buildRecordBatch({ records: [0, 1, 2].map((i) => ({ value: Buffer.from(`b${b}-${i}`) })) });
    const r = decodeProduceResponse(await c.call(0, 11, (w) => encodeProduceRequest(w, { transactionalId: null, acks: -1, timeoutMs: 5000, topicData: [{ name: topic, partitionData: [{ index: 0, records: batch }] }] }, 11)), 11);
    expect(r.responses[0]!.partitionResponses[0]!.errorCode).toBe(0);
    sent.push(batch);
  }
  return sent;
}

/** Base offsets of the batches in a ShareFetch partition's records. */
function batchBases(records: Buffer | null): number[] {
  const out: number[] = [];
  for (let pos = 0; records !== null && pos + 12 <= records.length; pos += 12 + records.readInt32BE(pos + 8)) out.push(Number(records.readBigInt64BE(pos)));
  return out;
}

/** A transactional producer on one partition (transactions V2: Produce v12 adds the partition, EndTxn v5 bumps the epoch). */
async function txnProducer(topic: string) {
  const txnId = `${topic}-producer`;
  const busy: readonly number[] = [ErrorCode.COORDINATOR_LOAD_IN_PROGRESS, ErrorCode.COORDINATOR_NOT_AVAILABLE, ErrorCode.NOT_COORDINATOR, ErrorCode.CONCURRENT_TRANSACTIONS];
  const init = await lastAnswer(
    async () => {
      await c.call(10, 4, (w) => encodeFindCoordinatorRequest(w, { keyType: 1, coordinatorKeys: [txnId] }, 4));
      return decodeInitProducerIdResponse(await c.call(22, 5, (w) => encodeInitProducerIdRequest(w, { transactionalId: txnId, transactionTimeoutMs: 60_000, producerId: -1n, producerEpoch: -1 }, 5)), 5);
    },
    (r) => !busy.includes(r.errorCode),
  );
  expect(init.errorCode).toBe(0);
  let epoch = init.producerEpoch;
  return {
    async produce(values: string[]): Promise<void> {
      const records = buildRecordBatch({ producerId: Number(init.producerId), producerEpoch: epoch, baseSequence: 0, isTransactional: true, records: values.map((v) => ({ value: Buffer.from(v) })) });
      const r = decodeProduceResponse(await c.call(0, 12, (w) => encodeProduceRequest(w, { transactionalId: txnId, acks: -1, timeoutMs: 5000, topicData: [{ name: topic, partitionData: [{ index: 0, records }] }] }, 12)), 12);
      expect(r.responses[0]!.partitionResponses[0]!.errorCode).toBe(0);
    },
    async end(committed: boolean): Promise<void> {
      const r = await lastAnswer(
        async () => decodeEndTxnResponse(await c.call(26, 5, (w) => encodeEndTxnRequest(w, { transactionalId: txnId, producerId: init.producerId, producerEpoch: epoch, committed }, 5)), 5),
        (res) => res.errorCode !== ErrorCode.CONCURRENT_TRANSACTIONS,
      );
      expect(r.errorCode).toBe(0);
      epoch = r.producerEpoch;
    },
  };
}

async function plainRecord(topic: string, value: string): Promise<void> {
  const r = decodeProduceResponse(await c.call(0, 11, (w) => encodeProduceRequest(w, { transactionalId: null, acks: -1, timeoutMs: 5000, topicData: [{ name: topic, partitionData: [{ index: 0, records: buildRecordBatch({ records: [{ value: Buffer.from(value) }] }) }] }] }, 11)), 11);
  expect(r.responses[0]!.partitionResponses[0]!.errorCode).toBe(0);
}

/** Waits until the partition's last stable offset (read_committed ListOffsets) and log end offset are as given. */
async function settledAt(topic: string, lso: number, end: number): Promise<void> {
  const at = async (isolationLevel: number) =>
    Number(decodeListOffsetsResponse(await c.call(2, 9, (w) => encodeListOffsetsRequest(w, { replicaId: -1, isolationLevel, topics: [{ name: topic, partitions: [{ partitionIndex: 0, currentLeaderEpoch: -1, timestamp: -1n }] }] }, 9)), 9).topics[0]!.partitions[0]!.offset);
  const got = await lastAnswer(async () => [await at(1), await at(0)], (o) => o[0] === lso && o[1] === end);
  expect(got).toEqual([lso, end]);
}

const heartbeat = async (req: ShareGroupHeartbeatRequestInput) => shareHeartbeat(c, req);
const shareFetch = async (req: ShareFetchRequestInput, v = 1) => decodeShareFetchResponse(await c.call(78, v, (w) => encodeShareFetchRequest(w, { maxWaitMs: 0, minBytes: 1, maxRecords: 500, batchSize: 500, ...req }, v)), v);
const shareAck = async (req: ShareAcknowledgeRequestInput) => decodeShareAcknowledgeResponse(await c.call(79, 1, (w) => encodeShareAcknowledgeRequest(w, req, 1)), 1);
const describeOffsets = async (groupId: string, topic: string) =>
  decodeDescribeShareGroupOffsetsResponse(await c.call(90, 1, (w) => encodeDescribeShareGroupOffsetsRequest(w, { groups: [{ groupId, topics: [{ topicName: topic, partitions: [0] }] }] }, 1)), 1).groups[0]!;

beforeAll(async () => {
  // Sessions as short as 10 s, so a member that never comes back after a restart is seen to time out.
  ({ node, c } = await nodeWithClient({ 'num.partitions': 1, 'group.share.min.session.timeout.ms': 1000 }));
  await createTopic('share-hb', 2);
  await createTopic('share-fetch', 1);
  await createTopic('share-offsets', 1);
  await createTopic('share-restart', 1);
  await createTopic('share-limit', 1);
  await createTopic('share-txn', 1);
  await createTopic('share-state-rpc', 4);
}, 180_000);
afterAll(() => removeNode(node, c));

describe('share group APIs', () => {
  it('advertises ShareGroupHeartbeat/Describe v1, ShareFetch/ShareAcknowledge v1-2 and share.version 1', async () => {
    const res = decodeApiVersionsResponse(await c.call(18, 4, (w) => encodeApiVersionsRequest(w, { clientSoftwareName: 'wire-test', clientSoftwareVersion: '1.0' }, 4)), 4);
    const range = new Map(res.apiKeys.map((k) => [k.apiKey, `${k.minVersion}-${k.maxVersion}`]));
    expect([76, 77, 78, 79, 90, 91, 92].map((k) => range.get(k))).toEqual(['1-1', '1-1', '1-2', '1-2', '0-1', '0-0', '0-0']);
    expect(res.finalizedFeatures).toEqual(expect.arrayContaining([expect.objectContaining({ name: 'share.version', minVersionLevel: 1, maxVersionLevel: 1 })]));
  });

  it('ShareGroupHeartbeat: member ids, epochs, the simple assignor, leave', async () => {
    const g = 'hb-group';
    expect((await heartbeat({ groupId: g, memberId: '', memberEpoch: 0, subscribedTopicNames: ['share-hb'] })).errorCode).toBe(ErrorCode.INVALID_REQUEST);
    expect((await heartbeat({ groupId: g, memberId: 'm1', memberEpoch: 0, subscribedTopicNames: null })).errorCode).toBe(ErrorCode.INVALID_REQUEST);
    expect((await heartbeat({ groupId: g, memberId: 'nobody', memberEpoch: 3, subscribedTopicNames: null })).errorCode).toBe(ErrorCode.GROUP_ID_NOT_FOUND);
    const id = topicIds.get('share-hb')!;
    const a = await heartbeat({ groupId: g, memberId: 'm-a', memberEpoch: 0, subscribedTopicNames: ['share-hb'] });
    expect(a).toMatchObject({ errorCode: 0, memberId: 'm-a', memberEpoch: 1, heartbeatIntervalMs: 5000, assignment: { topicPartitions: [{ topicId: id, partitions: [0, 1] }] } });
    expect((await heartbeat({ groupId: g, memberId: 'm-a', memberEpoch: 7, subscribedTopicNames: null })).errorCode).toBe(ErrorCode.FENCED_MEMBER_EPOCH);
    const b = await heartbeat({ groupId: g, memberId: 'm-b', memberEpoch: 0, subscribedTopicNames: ['share-hb'] });
    expect(b).toMatchObject({ errorCode: 0, memberEpoch: 2, assignment: { topicPartitions: [{ topicId: id, partitions: [1] }] } });
    // m-a still holds epoch 1; its next heartbeat moves it to 2 with its new share.
    const a2 = await heartbeat({ groupId: g, memberId: 'm-a', memberEpoch: 1, subscribedTopicNames: null });
    expect(a2).toMatchObject({ errorCode: 0, memberEpoch: 2, assignment: { topicPartitions: [{ topicId: id, partitions: [0] }] } });
    // Unchanged since: no assignment is sent.
    expect((await heartbeat({ groupId: g, memberId: 'm-a', memberEpoch: 2, subscribedTopicNames: null })).assignment).toBeNull();
    // A third member on two partitions shares one of them.
    const m3 = await heartbeat({ groupId: g, memberId: 'm-c', memberEpoch: 0, subscribedTopicNames: ['share-hb'] });
    expect(m3.assignment?.topicPartitions[0]?.partitions).toEqual([0]);

    const d = decodeShareGroupDescribeResponse(await c.call(77, 1, (w) => encodeShareGroupDescribeRequest(w, { groupIds: [g, 'no-such-share-group'], includeAuthorizedOperations: false }, 1)), 1);
    expect(d.groups[0]).toMatchObject({ errorCode: 0, groupState: 'Stable', groupEpoch: 3, assignmentEpoch: 3, assignorName: 'simple' });
    expect(d.groups[0]!.members.map((m) => m.memberId).sort()).toEqual(['m-a', 'm-b', 'm-c']);
    expect(d.groups[1]).toMatchObject({ errorCode: ErrorCode.GROUP_ID_NOT_FOUND, groupState: 'Dead' });

    for (const m of ['m-a', 'm-b', 'm-c']) {
      expect(await heartbeat({ groupId: g, memberId: m, memberEpoch: -1, subscribedTopicNames: null })).toMatchObject({ errorCode: 0, memberEpoch: -1 });
    }
    const empty = decodeShareGroupDescribeResponse(await c.call(77, 1, (w) => encodeShareGroupDescribeRequest(w, { groupIds: [g], includeAuthorizedOperations: false }, 1)), 1);
    expect(empty.groups[0]).toMatchObject({ groupState: 'Empty', members: [] });
  });

  it('ShareFetch acquires stored batches, RELEASE redelivers up to the delivery count limit, then the records are archived', async () => {
    const g = 'fetch-group';
    const topicId = topicIds.get('share-fetch')!;
    await groupConfig(g, { 'share.auto.offset.reset': 'earliest', 'share.delivery.count.limit': '2' });
    const sent = await produce('share-fetch', 2);
    for (const m of ['f1', 'f2']) expect((await heartbeat({ groupId: g, memberId: m, memberEpoch: 0, subscribedTopicNames: ['share-fetch'] })).errorCode).toBe(0);
    const part = (acks: { firstOffset: bigint; lastOffset: bigint; acknowledgeTypes: number[] }[] = []) => [{ topicId, partitions: [{ partitionIndex: 0, acknowledgementBatches: acks }] }];

    // No session yet: an incremental request, and acknowledgements on epoch 0, are refused.
    expect((await shareFetch({ groupId: g, memberId: 'f1', shareSessionEpoch: 4, topics: part() })).errorCode).toBe(ErrorCode.SHARE_SESSION_NOT_FOUND);
    expect((await shareAck({ groupId: g, memberId: 'f1', shareSessionEpoch: 0, topics: [] })).errorCode).toBe(ErrorCode.INVALID_SHARE_SESSION_EPOCH);

    const first = await shareFetch({ groupId: g, memberId: 'f1', shareSessionEpoch: 0, topics: part() });
    expect(first.errorCode).toBe(0);
    expect(first.acquisitionLockTimeoutMs).toBe(30000);
    const p = first.responses[0]!.partitions[0]!;
    expect(p.acquiredRecords).toEqual([expect.objectContaining({ firstOffset: 0n, lastOffset: 5n, deliveryCount: 1 })]);
    // The stored batches as produced: only baseOffset and partitionLeaderEpoch (before the CRC) were set by the log.
    const n0 = sent[0]!.length;
    expect(p.records!.length).toBe(n0 + sent[1]!.length);
    expect(p.records!.subarray(16, n0).equals(sent[0]!.subarray(16))).toBe(true);
    expect(p.records!.subarray(n0 + 16).equals(sent[1]!.subarray(16))).toBe(true);
    expect(p.records!.readBigInt64BE(n0)).toBe(3n);

    // Another member holds nothing: its acknowledgement is INVALID_RECORD_STATE and changes nothing.
    await shareFetch({ groupId: g, memberId: 'f2', shareSessionEpoch: 0, topics: part() });
    const foreign = await shareAck({ groupId: g, memberId: 'f2', shareSessionEpoch: 1, topics: [{ topicId, partitions: [{ partitionIndex: 0, acknowledgementBatches: [{ firstOffset: 0n, lastOffset: 5n, acknowledgeTypes: [1] }] }] }] });
    expect(foreign.responses[0]!.partitions[0]!.errorCode).toBe(ErrorCode.INVALID_RECORD_STATE);
    expect(await shareAck({ groupId: g, memberId: 'f1', shareSessionEpoch: 3, topics: [] })).toMatchObject({ errorCode: ErrorCode.INVALID_SHARE_SESSION_EPOCH });

    // ACCEPT 0-1, REJECT 2, RELEASE 3-5: 3-5 come back with delivery count 2.
    const second = await shareFetch({ groupId: g, memberId: 'f1', shareSessionEpoch: 1, topics: part([{ firstOffset: 0n, lastOffset: 5n, acknowledgeTypes: [1, 1, 3, 2, 2, 2] }]) });
    const p2 = second.responses[0]!.partitions[0]!;
    expect(p2.acknowledgeErrorCode).toBe(0);
    expect(p2.acquiredRecords).toEqual([expect.objectContaining({ firstOffset: 3n, lastOffset: 5n, deliveryCount: 2 })]);
    expect((await describeOffsets(g, 'share-fetch')).topics[0]!.partitions[0]).toMatchObject({ startOffset: 3n, lag: 3n });

    // Released at the limit (2 deliveries): archived, never delivered again; the start offset passes them.
    const third = await shareFetch({ groupId: g, memberId: 'f1', shareSessionEpoch: 2, topics: part([{ firstOffset: 3n, lastOffset: 5n, acknowledgeTypes: [2] }]) });
    expect(third.responses[0]!.partitions[0]!.acquiredRecords).toEqual([]);
    expect((await describeOffsets(g, 'share-fetch')).topics[0]!.partitions[0]).toMatchObject({ startOffset: 6n, lag: 0n });

    // Closing the session with a final ShareAcknowledge; the session is gone afterwards.
    expect((await shareAck({ groupId: g, memberId: 'f1', shareSessionEpoch: -1, topics: [] })).errorCode).toBe(0);
    expect((await shareFetch({ groupId: g, memberId: 'f1', shareSessionEpoch: 4, topics: part() })).errorCode).toBe(ErrorCode.SHARE_SESSION_NOT_FOUND);
  });

  it('ShareFetch v2 record_limit acquires exactly MaxRecords, inside a batch, and returns the batches holding them', async () => {
    const g = 'limit-group';
    const topicId = topicIds.get('share-limit')!;
    await groupConfig(g, { 'share.auto.offset.reset': 'earliest' });
    const sent = await produce('share-limit', 2);
    const r = await shareFetch({ groupId: g, memberId: 'l1', shareSessionEpoch: 0, maxRecords: 2, shareAcquireMode: 1, topics: [{ topicId, partitions: [{ partitionIndex: 0 }] }] }, 2);
    const p = r.responses[0]!.partitions[0]!;
    expect(p.acquiredRecords).toEqual([expect.objectContaining({ firstOffset: 0n, lastOffset: 1n, deliveryCount: 1 })]);
    // The limit falls inside the first batch: that batch still comes with them, else the client has acquired records it cannot read.
    expect(p.records!.length).toBe(sent[0]!.length);
    expect(p.records!.subarray(16).equals(sent[0]!.subarray(16))).toBe(true);
    const r2 = await shareFetch({ groupId: g, memberId: 'l1', shareSessionEpoch: 1, maxRecords: 2, shareAcquireMode: 1, topics: [] }, 2);
    const p2 = r2.responses[0]!.partitions[0]!;
    expect(p2.acquiredRecords).toEqual([expect.objectContaining({ firstOffset: 2n, lastOffset: 3n })]);
    expect(p2.records!.length).toBe(sent[0]!.length + sent[1]!.length);
  });

  it('share.isolation.level=read_committed acquires up to the last stable offset and archives aborted transactions', async () => {
    const topic = 'share-txn';
    const topicId = topicIds.get(topic)!;
    const txn = await txnProducer(topic);
    await plainRecord(topic, 'p0'); // 0
    await txn.produce(['c1', 'c2']); // 1-2, its commit marker at 3
    await txn.end(true);
    await txn.produce(['a1', 'a2']); // 4-5, its abort marker at 6
    await txn.end(false);
    await txn.produce(['o1']); // 7, left open: the last stable offset stays at 7
    await plainRecord(topic, 'p1'); // 8
    await settledAt(topic, 7, 9);
    const part = (acks: { firstOffset: bigint; lastOffset: bigint; acknowledgeTypes: number[] }[] = []) => [{ topicId, partitions: [{ partitionIndex: 0, acknowledgementBatches: acks }] }];
    const ranges = (r: Awaited<ReturnType<typeof shareFetch>>) => r.responses[0]!.partitions[0]!.acquiredRecords.map((a) => [Number(a.firstOffset), Number(a.lastOffset), a.deliveryCount]);

    await groupConfig('rc-group', { 'share.auto.offset.reset': 'earliest', 'share.isolation.level': 'read_committed' });
    await groupConfig('ru-group', { 'share.auto.offset.reset': 'earliest' });
    for (const [g, m] of [['rc-group', 'rc'], ['ru-group', 'ru']] as const) expect((await heartbeat({ groupId: g, memberId: m, memberEpoch: 0, subscribedTopicNames: [topic] })).errorCode).toBe(0);

    // read_committed: the committed transaction and the plain record before it; the aborted one never, nothing at or past the LSO.
    const rc = await shareFetch({ groupId: 'rc-group', memberId: 'rc', shareSessionEpoch: 0, topics: part() });
    expect(ranges(rc)).toEqual([[0, 2, 1]]);
    expect(batchBases(rc.responses[0]!.partitions[0]!.records)).toEqual([0, 1]);
    const rc2 = await shareFetch({ groupId: 'rc-group', memberId: 'rc', shareSessionEpoch: 1, topics: part([{ firstOffset: 0n, lastOffset: 2n, acknowledgeTypes: [1] }]) });
    expect(rc2.responses[0]!.partitions[0]!.acknowledgeErrorCode).toBe(0);
    expect(ranges(rc2)).toEqual([]);
    // The markers and the aborted records are archived: the start offset waits at the open transaction.
    expect((await describeOffsets('rc-group', topic)).topics[0]!.partitions[0]).toMatchObject({ startOffset: 7n });

    // read_uncommitted: every data record up to the high watermark, aborted and open ones too; control batches never.
    const ru = await shareFetch({ groupId: 'ru-group', memberId: 'ru', shareSessionEpoch: 0, topics: part() });
    expect(ranges(ru)).toEqual([
      [0, 2, 1],
      [4, 5, 1],
      [7, 8, 1],
    ]);

    // Once the open transaction commits (its marker at 9), the rest is delivered.
    await txn.end(true);
    await settledAt(topic, 10, 10);
    const rc3 = await shareFetch({ groupId: 'rc-group', memberId: 'rc', shareSessionEpoch: 2, topics: part() });
    expect(ranges(rc3)).toEqual([[7, 8, 1]]);
    expect(batchBases(rc3.responses[0]!.partitions[0]!.records)).toEqual([7, 8]);
  });

  it('Alter/Describe/DeleteShareGroupOffsets move and forget the start offset of an empty group', async () => {
    const g = 'offsets-group';
    const topicId = topicIds.get('share-offsets')!;
    await produce('share-offsets', 2);
    expect(await heartbeat({ groupId: g, memberId: 'o1', memberEpoch: 0, subscribedTopicNames: ['share-offsets'] })).toMatchObject({ errorCode: 0 });
    const alter = (start: bigint) =>
      c.call(91, 0, (w) => encodeAlterShareGroupOffsetsRequest(w, { groupId: g, topics: [{ topicName: 'share-offsets', partitions: [{ partitionIndex: 0, startOffset: start }] }] }, 0)).then((r) => decodeAlterShareGroupOffsetsResponse(r, 0));
    expect((await alter(4n)).errorCode).toBe(ErrorCode.NON_EMPTY_GROUP);
    await heartbeat({ groupId: g, memberId: 'o1', memberEpoch: -1, subscribedTopicNames: null });
    expect((await alter(4n)).responses[0]!.partitions[0]!.errorCode).toBe(0);
    expect((await describeOffsets(g, 'share-offsets')).topics[0]!.partitions[0]).toMatchObject({ startOffset: 4n, lag: 2n });
    const f = await shareFetch({ groupId: g, memberId: 'o2', shareSessionEpoch: 0, topics: [{ topicId, partitions: [{ partitionIndex: 0 }] }] });
    expect(f.responses[0]!.partitions[0]!.acquiredRecords).toEqual([expect.objectContaining({ firstOffset: 4n, lastOffset: 5n })]);
    await shareAck({ groupId: g, memberId: 'o2', shareSessionEpoch: -1, topics: [] });
    const del = decodeDeleteShareGroupOffsetsResponse(await c.call(92, 0, (w) => encodeDeleteShareGroupOffsetsRequest(w, { groupId: g, topics: [{ topicName: 'share-offsets' }, { topicName: 'no-such-topic' }] }, 0)), 0);
    expect(del.responses.map((t) => t.errorCode)).toEqual([0, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION]);
    expect((await describeOffsets(g, 'share-offsets')).topics[0]!.partitions[0]).toMatchObject({ startOffset: -1n });
    const unknown = decodeDescribeShareGroupOffsetsResponse(await c.call(90, 1, (w) => encodeDescribeShareGroupOffsetsRequest(w, { groups: [{ groupId: 'never-seen', topics: null }] }, 1)), 1);
    expect(unknown.groups[0]!.errorCode).toBe(ErrorCode.GROUP_ID_NOT_FOUND);
  });

  it('keeps the start offset, acknowledgements and delivery counts across a node restart (__share_group_state)', async () => {
    const g = 'restart-group';
    const topicId = topicIds.get('share-restart')!;
    await groupConfig(g, { 'share.auto.offset.reset': 'earliest' });
    await produce('share-restart', 3);
    expect((await heartbeat({ groupId: g, memberId: 'r1', memberEpoch: 0, subscribedTopicNames: ['share-restart'] })).errorCode).toBe(0);
    const f = await shareFetch({ groupId: g, memberId: 'r1', shareSessionEpoch: 0, topics: [{ topicId, partitions: [{ partitionIndex: 0 }] }] });
    expect(f.responses[0]!.partitions[0]!.acquiredRecords).toEqual([expect.objectContaining({ firstOffset: 0n, lastOffset: 8n, deliveryCount: 1 })]);
    // Accept 0-2, reject 3, release 4-5; 6-8 stay acquired when the node stops.
    const ack = await shareAck({ groupId: g, memberId: 'r1', shareSessionEpoch: 1, topics: [{ topicId, partitions: [{ partitionIndex: 0, acknowledgementBatches: [{ firstOffset: 0n, lastOffset: 5n, acknowledgeTypes: [1, 1, 1, 3, 2, 2] }] }] }] });
    expect(ack.responses[0]!.partitions[0]!.errorCode).toBe(0);

    c.close();
    node = await node.restart();
    c = await WireClient.connect(node.port);

    // The group came back with the node (its member r1 until its session times out).
    expect((await describeOffsets(g, 'share-restart')).topics[0]!.partitions[0]).toMatchObject({ startOffset: 4n });
    expect((await heartbeat({ groupId: g, memberId: 'r2', memberEpoch: 0, subscribedTopicNames: ['share-restart'] })).errorCode).toBe(0);
    const again = await shareFetch({ groupId: g, memberId: 'r2', shareSessionEpoch: 0, topics: [{ topicId, partitions: [{ partitionIndex: 0 }] }] });
    // 4-8 come back as second deliveries (released, or acquired when the node stopped); 0-3 never again.
    expect(again.responses[0]!.partitions[0]!.acquiredRecords).toEqual([expect.objectContaining({ firstOffset: 4n, lastOffset: 8n, deliveryCount: 2 })]);
  });

  it('serves Initialize/Read/Write/DeleteShareGroupState with state and leader epoch fencing', async () => {
    const groupId = 'state-rpc-group';
    const topicId = topicIds.get('share-state-rpc')!;
    const init = async (stateEpoch: number, startOffset: bigint) =>
      decodeInitializeShareGroupStateResponse(await c.call(83, 0, (w) => encodeInitializeShareGroupStateRequest(w, { groupId, topics: [{ topicId, partitions: [{ partition: 3, stateEpoch, startOffset }] }] }, 0)), 0).results[0]!.partitions[0]!.errorCode;
    const read = async () =>
      decodeReadShareGroupStateResponse(await c.call(84, 0, (w) => encodeReadShareGroupStateRequest(w, { groupId, topics: [{ topicId, partitions: [{ partition: 3, leaderEpoch: 0 }] }] }, 0)), 0).results[0]!.partitions[0]!;
    const write = async (stateEpoch: number, leaderEpoch: number) =>
      decodeWriteShareGroupStateResponse(
        await c.call(85, 1, (w) =>
          encodeWriteShareGroupStateRequest(w, { groupId, topics: [{ topicId, partitions: [{ partition: 3, stateEpoch, leaderEpoch, startOffset: 12n, stateBatches: [{ firstOffset: 12n, lastOffset: 14n, deliveryState: 2, deliveryCount: 1 }, { firstOffset: 15n, lastOffset: 15n, deliveryState: 0, deliveryCount: 3 }] }] }] }, 1),
        ),
        1,
      ).results[0]!.partitions[0]!.errorCode;
    expect(await read()).toMatchObject({ errorCode: 0, stateEpoch: 0, startOffset: -1n, stateBatches: [] });
    expect(await init(1, 10n)).toBe(0);
    // The same epoch again changes nothing; an older one is fenced (Kafka's ShareCoordinatorShard).
    expect(await init(1, 10n)).toBe(0);
    expect(await init(0, 10n)).toBe(ErrorCode.FENCED_STATE_EPOCH);
    expect(await read()).toMatchObject({ stateEpoch: 1, startOffset: 10n, stateBatches: [] });
    expect(await write(1, 4)).toBe(0);
    expect(await write(0, 4)).toBe(ErrorCode.FENCED_STATE_EPOCH);
    expect(await write(1, 3)).toBe(ErrorCode.FENCED_LEADER_EPOCH);
    expect(await read()).toMatchObject({
      stateEpoch: 1,
      startOffset: 12n,
      stateBatches: [expect.objectContaining({ firstOffset: 12n, lastOffset: 14n, deliveryState: 2, deliveryCount: 1 }), expect.objectContaining({ firstOffset: 15n, lastOffset: 15n, deliveryState: 0, deliveryCount: 3 })],
    });
    const del = decodeDeleteShareGroupStateResponse(await c.call(86, 0, (w) => encodeDeleteShareGroupStateRequest(w, { groupId, topics: [{ topicId, partitions: [{ partition: 3 }] }] }, 0)), 0);
    expect(del.results[0]!.partitions[0]!.errorCode).toBe(0);
    expect(await read()).toMatchObject({ stateEpoch: 0, startOffset: -1n });
  });

  it('serves ReadShareGroupStateSummary v0-1: start offset, state and leader epochs, delivery-complete count; unknown group or partition', async () => {
    const topicId = topicIds.get('share-state-rpc')!;
    const summary = async (groupId: string, tid: string, partition: number, v = 1) =>
      decodeReadShareGroupStateSummaryResponse(await c.call(87, v, (w) => encodeReadShareGroupStateSummaryRequest(w, { groupId, topics: [{ topicId: tid, partitions: [{ partition, leaderEpoch: 0 }] }] }, v)), v).results[0]!.partitions[0]!;
    // A group the share coordinator holds nothing for: no state (start offset -1), no error.
    expect(await summary('summary-nobody', topicId, 1)).toEqual(expect.objectContaining({ partition: 1, errorCode: 0, stateEpoch: 0, leaderEpoch: -1, startOffset: -1n, deliveryCompleteCount: -1 }));
    // A partition or topic id the metadata does not hold.
    expect((await summary('summary-group', topicId, 9)).errorCode).toBe(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
    expect((await summary('summary-group', '11111111-2222-3333-4444-555555555555', 0)).errorCode).toBe(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
    const write = decodeWriteShareGroupStateResponse(
      await c.call(85, 1, (w) =>
        encodeWriteShareGroupStateRequest(
          w,
          {
            groupId: 'summary-group',
            topics: [{ topicId, partitions: [{ partition: 2, stateEpoch: 3, leaderEpoch: 5, startOffset: 20n, stateBatches: [{ firstOffset: 20n, lastOffset: 21n, deliveryState: 0, deliveryCount: 1 }, { firstOffset: 22n, lastOffset: 24n, deliveryState: 2, deliveryCount: 1 }, { firstOffset: 25n, lastOffset: 25n, deliveryState: 4, deliveryCount: 5 }] }] }],
          },
          1,
        ),
      ),
      1,
    );
    expect(write.results[0]!.partitions[0]!.errorCode).toBe(0);
    // Acknowledged 22-24 and archived 25: four records complete.
    expect(await summary('summary-group', topicId, 2)).toEqual(expect.objectContaining({ errorCode: 0, stateEpoch: 3, leaderEpoch: 5, startOffset: 20n, deliveryCompleteCount: 4 }));
    // v0 has no DeliveryCompleteCount.
    expect(await summary('summary-group', topicId, 2, 0)).toEqual(expect.objectContaining({ errorCode: 0, stateEpoch: 3, leaderEpoch: 5, startOffset: 20n }));
  });

  it('keeps share group membership and epochs across a node restart until the sessions time out (__consumer_offsets)', async () => {
    const g = 'members-group';
    const id = topicIds.get('share-hb')!;
    await groupConfig(g, { 'share.session.timeout.ms': '10000' });
    expect(await heartbeat({ groupId: g, memberId: 'p-1', memberEpoch: 0, subscribedTopicNames: ['share-hb'] })).toMatchObject({ errorCode: 0, memberEpoch: 1 });
    expect(await heartbeat({ groupId: g, memberId: 'p-2', memberEpoch: 0, subscribedTopicNames: ['share-hb'] })).toMatchObject({ errorCode: 0, memberEpoch: 2 });
    expect(await heartbeat({ groupId: g, memberId: 'p-1', memberEpoch: 1, subscribedTopicNames: null })).toMatchObject({ errorCode: 0, memberEpoch: 2, assignment: { topicPartitions: [{ topicId: id, partitions: [0] }] } });
    const describe = async () => decodeShareGroupDescribeResponse(await c.call(77, 1, (w) => encodeShareGroupDescribeRequest(w, { groupIds: [g], includeAuthorizedOperations: false }, 1)), 1).groups[0]!;
    const view = (d: Awaited<ReturnType<typeof describe>>) => ({
      errorCode: d.errorCode,
      groupEpoch: d.groupEpoch,
      assignmentEpoch: d.assignmentEpoch,
      members: d.members.map((m) => ({ memberId: m.memberId, memberEpoch: m.memberEpoch, subscribedTopicNames: m.subscribedTopicNames, assignment: m.assignment.topicPartitions.map((t) => [t.topicId, t.partitions]) })).sort((a, b) => (a.memberId < b.memberId ? -1 : 1)),
    });
    const before = view(await describe());
    expect(before).toEqual({
      errorCode: 0,
      groupEpoch: 2,
      assignmentEpoch: 2,
      members: [
        { memberId: 'p-1', memberEpoch: 2, subscribedTopicNames: ['share-hb'], assignment: [[id, [0]]] },
        { memberId: 'p-2', memberEpoch: 2, subscribedTopicNames: ['share-hb'], assignment: [[id, [1]]] },
      ],
    });

    c.close();
    node = await node.restart();
    c = await WireClient.connect(node.port);

    // The same group epoch, members and assignments; p-1's heartbeat with its old epoch is accepted.
    expect(view(await describe())).toEqual(before);
    expect(await heartbeat({ groupId: g, memberId: 'p-1', memberEpoch: 2, subscribedTopicNames: null })).toMatchObject({ errorCode: 0, memberEpoch: 2 });
    expect((await heartbeat({ groupId: g, memberId: 'p-1', memberEpoch: 1, subscribedTopicNames: null })).errorCode).toBe(ErrorCode.FENCED_MEMBER_EPOCH);
    // p-2 never comes back: its session times out and the group moves on without it.
    const after = await eventually('p-2 to time out', async () => {
      const d = view(await describe());
      await heartbeat({ groupId: g, memberId: 'p-1', memberEpoch: d.members.find((m) => m.memberId === 'p-1')!.memberEpoch, subscribedTopicNames: null });
      return d.members.length === 1 ? d : null;
    });
    expect(after).toMatchObject({ errorCode: 0, groupEpoch: 3, assignmentEpoch: 3, members: [{ memberId: 'p-1', assignment: [[id, [0, 1]]] }] });
  }, 60_000);

  it('FindCoordinator key type 2 names the share coordinator of group:topicId:partition (v6+), else INVALID_REQUEST', async () => {
    const topicId = topicIds.get('share-state-rpc')!;
    // Kafka prints topic ids in base64url: the same id, 22 characters.
    const kafkaId = Buffer.from(topicId.replace(/-/g, ''), 'hex').toString('base64url');
    const find = async (keys: string[], v = 6) => decodeFindCoordinatorResponse(await c.call(10, v, (w) => encodeFindCoordinatorRequest(w, { keyType: 2, coordinatorKeys: keys }, v)), v).coordinators;
    const answers = await find([`g1:${topicId}:0`, `g1:${kafkaId}:0`, 'g1', `g1:${topicId}:x`]);
    expect(answers.map((a) => [a.key, a.errorCode, a.nodeId === -1 ? -1 : a.port])).toEqual([
      [`g1:${topicId}:0`, 0, node.port],
      [`g1:${kafkaId}:0`, 0, node.port],
      ['g1', ErrorCode.INVALID_REQUEST, -1],
      [`g1:${topicId}:x`, ErrorCode.INVALID_REQUEST, -1],
    ]);
    expect((await find([`g1:${topicId}:0`], 5))[0]!.errorCode).toBe(ErrorCode.INVALID_REQUEST);
  });
});
