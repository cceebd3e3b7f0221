/**
 * OffsetCommit v10 and OffsetFetch v10 (topics by id) over one raw connection: a commit by id is
 * read back by name (v9) and a commit by name by id, an unknown id answers UNKNOWN_TOPIC_ID, a
 * partition past the topic's count UNKNOWN_TOPIC_OR_PARTITION, and a fetch of every topic names
 * them by id. Used against a Fjord node (test/broker/offsets-v10.test.ts) and against Apache
 * Kafka 4.4 by the differential runner (test/interop/kafka-44-protocol.test.ts).
 */
import { expect } from 'vitest';
import { ErrorCode } from '../../src/protocol/generated/errors.js';
import { encodeCreateTopicsRequest } from '../../src/protocol/generated/messages/create-topics-request.js';
import { decodeCreateTopicsResponse } from '../../src/protocol/generated/messages/create-topics-response.js';
import { encodeFindCoordinatorRequest } from '../../src/protocol/generated/messages/find-coordinator-request.js';
import { encodeMetadataRequest } from '../../src/protocol/generated/messages/metadata-request.js';
import { decodeMetadataResponse } from '../../src/protocol/generated/messages/metadata-response.js';
import { encodeOffsetCommitRequest, type OffsetCommitRequestInput } from '../../src/protocol/generated/messages/offset-commit-request.js';
import { decodeOffsetCommitResponse } from '../../src/protocol/generated/messages/offset-commit-response.js';
import { encodeOffsetFetchRequest, type OffsetFetchRequestInput } from '../../src/protocol/generated/messages/offset-fetch-request.js';
import { decodeOffsetFetchResponse } from '../../src/protocol/generated/messages/offset-fetch-response.js';
import type { WireClient } from './wire.js';
import { lastAnswer } from '../helpers/wait.js';

export type OffsetsV10Observation = Record<string, unknown>;

const UNKNOWN_ID = '5f3c1b2a-9d4e-4c6b-8a7f-0e1d2c3b4a59';
const COORDINATOR_NOT_READY: readonly number[] = [ErrorCode.COORDINATOR_LOAD_IN_PROGRESS, ErrorCode.COORDINATOR_NOT_AVAILABLE, ErrorCode.NOT_COORDINATOR];

export async function runOffsetsV10(c: WireClient, topic: string): Promise<OffsetsV10Observation> {
  const ct = decodeCreateTopicsResponse(await c.call(19, 7, (w) => encodeCreateTopicsRequest(w, { topics: [{ name: topic, numPartitions: 2, replicationFactor: 1 }], timeoutMs: 10_000 }, 7)), 7);
  expect(ct.topics[0]!.errorCode).toBe(0);
  const md = await lastAnswer(
    async () => decodeMetadataResponse(await c.call(3, 12, (w) => encodeMetadataRequest(w, { topics: [{ topicId: '00000000-0000-0000-0000-000000000000', name: topic }], allowAutoTopicCreation: false }, 12)), 12),
    (r) => r.topics[0]?.errorCode === 0 && r.topics[0].partitions.length === 2,
  );
  const topicId = md.topics[0]!.topicId;
  const group = `${topic}-group`;
  const commit = async (v: number, topics: OffsetCommitRequestInput['topics']) => {
    const res = decodeOffsetCommitResponse(await c.call(8, v, (w) => encodeOffsetCommitRequest(w, { groupId: group, generationIdOrMemberEpoch: -1, memberId: '', topics }, v)), v);
    return res.topics.map((t) => ({ id: t.topicId === topicId ? 'topic' : t.topicId, name: t.name === topic ? 'topic' : t.name, partitions: t.partitions.map((p) => [p.partitionIndex, p.errorCode]) }));
  };
  const fetch = async (v: number, topics: NonNullable<OffsetFetchRequestInput['groups']>[number]['topics']) => {
    const res = decodeOffsetFetchResponse(await c.call(9, v, (w) => encodeOffsetFetchRequest(w, { groups: [{ groupId: group, topics }], requireStable: false }, v)), v);
    const g = res.groups[0]!;
    return {
      errorCode: g.errorCode,
      topics: g.topics.map((t) => ({
        id: t.topicId === topicId ? 'topic' : t.topicId,
        name: t.name === topic ? 'topic' : t.name,
        partitions: t.partitions.map((p) => [p.partitionIndex, Number(p.committedOffset), p.committedLeaderEpoch, p.metadata, p.errorCode]),
      })),
    };
  };
  // FindCoordinator first: Kafka creates __consumer_offsets on the first lookup.
  const first = await lastAnswer(
    async () => {
      await c.call(10, 4, (w) => encodeFindCoordinatorRequest(w, { keyType: 0, coordinatorKeys: [group] }, 4));
      return commit(10, [{ topicId, partitions: [{ partitionIndex: 0, committedOffset: 5n, committedLeaderEpoch: 0, committedMetadata: 'by-id' }] }]);
    },
    (r) => !COORDINATOR_NOT_READY.includes(r[0]!.partitions[0]![1]!),
  );
  return {
    commitById: first,
    commitByName: await commit(9, [{ name: topic, partitions: [{ partitionIndex: 1, committedOffset: 7n, committedMetadata: null }] }]),
    commitUnknownId: await commit(10, [
      { topicId: UNKNOWN_ID, partitions: [{ partitionIndex: 0, committedOffset: 1n, committedMetadata: null }] },
      { topicId, partitions: [{ partitionIndex: 9, committedOffset: 1n, committedMetadata: null }] },
    ]),
    fetchByName: await fetch(9, [{ name: topic, partitionIndexes: [0, 1] }]),
    fetchById: await fetch(10, [{ topicId, partitionIndexes: [0, 1] }]),
    fetchUnknownId: await fetch(10, [{ topicId: UNKNOWN_ID, partitionIndexes: [0] }]),
    fetchAllById: await fetch(10, null),
    fetchAllByName: await fetch(9, null),
  };
}

export function checkOffsetsV10(o: OffsetsV10Observation): void {
    const NO_ID = '00000000-0000-0000-0000-000000000000';
    expect(o.commitById).toEqual([{ id: 'topic', name: '', partitions: [[0, 0]] }]);
    expect(o.commitByName).toEqual([{ id: NO_ID, name: 'topic', partitions: [[1, 0]] }]);
    expect(o.commitUnknownId).toEqual([
      { id: UNKNOWN_ID, name: '', partitions: [[0, ErrorCode.UNKNOWN_TOPIC_ID]] },
      { id: 'topic', name: '', partitions: [[9, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION]] },
    ]);
    expect(o.fetchByName).toEqual({ errorCode: 0, topics: [{ id: NO_ID, name: 'topic', partitions: [[0, 5, 0, 'by-id', 0], [1, 7, -1, '', 0]] }] });
    expect(o.fetchById).toEqual({ errorCode: 0, topics: [{ id: 'topic', name: '', partitions: [[0, 5, 0, 'by-id', 0], [1, 7, -1, '', 0]] }] });
    expect(o.fetchUnknownId).toEqual({ errorCode: 0, topics: [{ id: UNKNOWN_ID, name: '', partitions: [[0, -1, -1, '', ErrorCode.UNKNOWN_TOPIC_ID]] }] });
    expect(o.fetchAllById).toEqual(o.fetchById);
    expect(o.fetchAllByName).toEqual(o.fetchByName);
  }
