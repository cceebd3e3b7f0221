/**
 * The group coordinator initializes share-partition state before it assigns partitions (KIP-932,
 * Kafka's GroupMetadataManager.maybeCreateInitializeShareGroupStateRequest and
 * GroupCoordinatorService.persisterInitialize), over raw sockets to a real node: a join leaves the
 * share coordinator holding each subscribed partition at the group epoch with start offset -1,
 * DescribeShareGroupOffsets of every partition lists them at once, the first fetch resolves
 * share.auto.offset.reset, new partitions of the topic are initialized on the next heartbeat,
 * state kept from before is not reset, and DeleteShareGroupOffsets tells initialized topics from
 * topics the group has no state for.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrorCode } from '../../src/protocol/generated/errors.js';
import { encodeAlterShareGroupOffsetsRequest } from '../../src/protocol/generated/messages/alter-share-group-offsets-request.js';
import { decodeAlterShareGroupOffsetsResponse } from '../../src/protocol/generated/messages/alter-share-group-offsets-response.js';
import { encodeCreatePartitionsRequest } from '../../src/protocol/generated/messages/create-partitions-request.js';
import { decodeCreatePartitionsResponse } from '../../src/protocol/generated/messages/create-partitions-response.js';
import { encodeDeleteShareGroupOffsetsRequest } from '../../src/protocol/generated/messages/delete-share-group-offsets-request.js';
import { decodeDeleteShareGroupOffsetsResponse } from '../../src/protocol/generated/messages/delete-share-group-offsets-response.js';
import { encodeDescribeShareGroupOffsetsRequest } from '../../src/protocol/generated/messages/describe-share-group-offsets-request.js';
import { decodeDescribeShareGroupOffsetsResponse } from '../../src/protocol/generated/messages/describe-share-group-offsets-response.js';
import { encodeProduceRequest } from '../../src/protocol/generated/messages/produce-request.js';
import { decodeProduceResponse } from '../../src/protocol/generated/messages/produce-response.js';
import { encodeReadShareGroupStateRequest } from '../../src/protocol/generated/messages/read-share-group-state-request.js';
import { decodeReadShareGroupStateResponse } from '../../src/protocol/generated/messages/read-share-group-state-response.js';
import { encodeShareFetchRequest } from '../../src/protocol/generated/messages/share-fetch-request.js';
import { decodeShareFetchResponse } from '../../src/protocol/generated/messages/share-fetch-response.js';
import { type ShareGroupHeartbeatRequestInput } from '../../src/protocol/generated/messages/share-group-heartbeat-request.js';
import { encodeWriteShareGroupStateRequest } from '../../src/protocol/generated/messages/write-share-group-state-request.js';
import { decodeWriteShareGroupStateResponse } from '../../src/protocol/generated/messages/write-share-group-state-response.js';
import { buildRecordBatch } from '../../src/protocol/records.js';
import { eventually } from '../helpers/cluster.js';
import { type RunningNode } from '../helpers/node.js';
import { createTopicWithId, nodeWithClient, removeNode, setGroupConfigs, shareHeartbeat } from '../helpers/share-wire.js';
import { WireClient } from '../broker/wire.js';

let node: RunningNode;
let c: WireClient;
const topicIds = new Map<string, string>();

async function createTopic(name: string, numPartitions: number): Promise<void> {
  topicIds.set(name, await createTopicWithId(c, name, numPartitions));
}

async function produce(topic: string, partition: number, count: number): Promise<void> {
  const records = buildRecordBatch({ records: Array.from({ length: count }, (_, i) => ({ value: Buffer.from(`v${i}`) })) });
  const r = decodeProduceResponse(await c.call(0, 11, (w) => encodeProduceRequest(w, { transactionalId: null, acks: -1, timeoutMs: 5000, topicData: [{ name: topic, partitionData: [{ index: partition, records }] }] }, 11)), 11);
  expect(r.responses[0]!.partitionResponses[0]!.errorCode).toBe(0);
}

const heartbeat = async (req: ShareGroupHeartbeatRequestInput) => shareHeartbeat(c, req);
/** ReadShareGroupState (84) at the share coordinator: what the group coordinator initialized. */
const state = async (groupId: string, topic: string, partition: number) => {
  const p = decodeReadShareGroupStateResponse(await c.call(84, 0, (w) => encodeReadShareGroupStateRequest(w, { groupId, topics: [{ topicId: topicIds.get(topic)!, partitions: [{ partition, leaderEpoch: 0 }] }] }, 0)), 0).results[0]!.partitions[0]!;
  return { errorCode: p.errorCode, stateEpoch: p.stateEpoch, startOffset: Number(p.startOffset) };
};
/** DescribeShareGroupOffsets of every partition (null Topics): [topic, partition, start offset]. */
const allOffsets = async (groupId: string) => {
  const g = decodeDescribeShareGroupOffsetsResponse(await c.call(90, 1, (w) => encodeDescribeShareGroupOffsetsRequest(w, { groups: [{ groupId, topics: null }] }, 1)), 1).groups[0]!;
  expect(g.errorCode).toBe(0);
  return g.topics.flatMap((t) => t.partitions.map((p) => [t.topicName, p.partitionIndex, Number(p.startOffset)])).sort((a, b) => String(a).localeCompare(String(b)));
};
const deleteOffsets = async (groupId: string, topics: string[]) =>
  decodeDeleteShareGroupOffsetsResponse(await c.call(92, 0, (w) => encodeDeleteShareGroupOffsetsRequest(w, { groupId, topics: topics.map((topicName) => ({ topicName })) }, 0)), 0);

beforeAll(async () => {
  ({ node, c } = await nodeWithClient({ 'num.partitions': 1 }));
  await createTopic('init-topic', 3);
  await createTopic('init-other', 1);
  await createTopic('init-kept', 2);
  await setGroupConfigs(c, 'init-group', { 'share.auto.offset.reset': 'earliest' });
  await produce('init-topic', 0, 4);
}, 180_000);
afterAll(() => removeNode(node, c));

describe('share-partition state initialized by the group coordinator', () => {
  it('initializes the subscribed partitions at the group epoch before assigning them; the first fetch resolves share.auto.offset.reset', async () => {
    const id = topicIds.get('init-topic')!;
    expect(await state('init-group', 'init-topic', 0)).toEqual({ errorCode: 0, stateEpoch: 0, startOffset: -1 });
    const join = await heartbeat({ groupId: 'init-group', memberId: 'i1', memberEpoch: 0, subscribedTopicNames: ['init-topic'] });
    expect(join).toMatchObject({ errorCode: 0, memberEpoch: 1, assignment: { topicPartitions: [{ topicId: id, partitions: [0, 1, 2] }] } });
    // Already at the share coordinator when the join is answered: state epoch 1 (the group epoch), no start offset yet.
    for (const p of [0, 1, 2]) expect(await state('init-group', 'init-topic', p)).toEqual({ errorCode: 0, stateEpoch: 1, startOffset: -1 });
    expect(await allOffsets('init-group')).toEqual([
      ['init-topic', 0, -1],
      ['init-topic', 1, -1],
      ['init-topic', 2, -1],
    ]);

    // The first fetch loads the share-partition: share.auto.offset.reset=earliest puts it at 0.
    const f = decodeShareFetchResponse(
      await c.call(78, 1, (w) => encodeShareFetchRequest(w, { groupId: 'init-group', memberId: 'i1', shareSessionEpoch: 0, maxWaitMs: 0, minBytes: 1, maxBytes: 1 << 20, maxRecords: 500, batchSize: 500, topics: [{ topicId: id, partitions: [{ partitionIndex: 0 }] }] }, 1)),
      1,
    );
    expect(f.responses[0]!.partitions[0]!.acquiredRecords).toEqual([expect.objectContaining({ firstOffset: 0n, lastOffset: 3n })]);
    expect(await state('init-group', 'init-topic', 0)).toEqual({ errorCode: 0, stateEpoch: 1, startOffset: 0 });
    expect((await allOffsets('init-group'))[0]).toEqual(['init-topic', 0, 0]);
  });

  it('initializes partitions added to a subscribed topic on the next heartbeat, at the new group epoch', async () => {
    const id = topicIds.get('init-topic')!;
    const r = decodeCreatePartitionsResponse(await c.call(37, 3, (w) => encodeCreatePartitionsRequest(w, { topics: [{ name: 'init-topic', count: 4, assignments: null }], timeoutMs: 5000, validateOnly: false }, 3)), 3);
    expect(r.results[0]!.errorCode).toBe(0);
    const hb = await eventually('the new partition to be assigned', async () => {
      const res = await heartbeat({ groupId: 'init-group', memberId: 'i1', memberEpoch: 1, subscribedTopicNames: null });
      return res.errorCode === 0 && res.memberEpoch === 2 ? res : null;
    });
    expect(hb.assignment).toEqual({ topicPartitions: [{ topicId: id, partitions: [0, 1, 2, 3] }] });
    expect(await state('init-group', 'init-topic', 3)).toEqual({ errorCode: 0, stateEpoch: 2, startOffset: -1 });
    // The partitions initialized before keep their state.
    expect(await state('init-group', 'init-topic', 0)).toEqual({ errorCode: 0, stateEpoch: 1, startOffset: 0 });
  });

  it('DeleteShareGroupOffsets: a topic the group has no state for is UNKNOWN_TOPIC_OR_PARTITION; an initialized one loses its state', async () => {
    expect((await heartbeat({ groupId: 'init-group', memberId: 'i1', memberEpoch: -1, subscribedTopicNames: null })).errorCode).toBe(0);
    const del = await deleteOffsets('init-group', ['init-other', 'init-topic']);
    expect(del.errorCode).toBe(0);
    expect(del.responses.map((t) => [t.topicName, t.errorCode, t.errorMessage])).toEqual([
      ['init-other', ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, 'There is no offset information to delete.'],
      ['init-topic', 0, null],
    ]);
    // Never fetched (held nowhere) and deleted at the share coordinator all the same.
    expect(await state('init-group', 'init-topic', 2)).toEqual({ errorCode: 0, stateEpoch: 0, startOffset: -1 });
    expect(await allOffsets('init-group')).toEqual([]);
    // A second delete finds nothing left.
    expect((await deleteOffsets('init-group', ['init-topic'])).responses[0]!.errorCode).toBe(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
    // AlterShareGroupOffsets gives a partition state again; it is listed at once.
    const alter = decodeAlterShareGroupOffsetsResponse(
      await c.call(91, 0, (w) => encodeAlterShareGroupOffsetsRequest(w, { groupId: 'init-group', topics: [{ topicName: 'init-topic', partitions: [{ partitionIndex: 1, startOffset: 0n }] }] }, 0)),
      0,
    );
    expect(alter.responses[0]!.partitions[0]!.errorCode).toBe(0);
    expect(await allOffsets('init-group')).toEqual([['init-topic', 1, 0]]);
  });

  it('keeps a start offset the share coordinator already holds (set before the group coordinator initialized the partition)', async () => {
    const topicId = topicIds.get('init-kept')!;
    const w = decodeWriteShareGroupStateResponse(
      await c.call(85, 1, (wr) => encodeWriteShareGroupStateRequest(wr, { groupId: 'kept-group', topics: [{ topicId, partitions: [{ partition: 0, stateEpoch: 0, leaderEpoch: 0, startOffset: 7n, stateBatches: [] }] }] }, 1)),
      1,
    );
    expect(w.results[0]!.partitions[0]!.errorCode).toBe(0);
    expect(await heartbeat({ groupId: 'kept-group', memberId: 'k1', memberEpoch: 0, subscribedTopicNames: ['init-kept'] })).toMatchObject({ errorCode: 0, memberEpoch: 1, assignment: { topicPartitions: [{ topicId, partitions: [0, 1] }] } });
    expect(await state('kept-group', 'init-kept', 0)).toEqual({ errorCode: 0, stateEpoch: 0, startOffset: 7 });
    expect(await state('kept-group', 'init-kept', 1)).toEqual({ errorCode: 0, stateEpoch: 1, startOffset: -1 });
  });
});
