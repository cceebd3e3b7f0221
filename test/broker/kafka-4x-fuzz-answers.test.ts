/**
 * Answers the interop differential fuzzer found Fjord giving differently from Apache Kafka 4.1.2,
 * over raw frames to a real node: CreateTopics with a passed deadline or a partition sum past
 * 2^31 - 1, ListOffsets and ElectLeaders with a topic named in two entries, DescribeTopicPartitions
 * with a cursor outside the request, the broker's DescribeConfigs (broker.id, the keys read only at
 * start), OffsetCommit with a negative generation, a follower fetch from a broker that is not a
 * replica, a Metadata request naming a topic with neither name nor id, min.insync.replicas
 * changes Kafka refuses while eligible leader replicas are on, a committed offset of Long.MAX_VALUE,
 * DescribeConfigs' documentation and its answer to a resource type Kafka does not know, OffsetCommit
 * with a topic named twice, and CreatePartitions past the metadata record bound, the synonyms of a topic key at its default, and a
 * transactional batch with no producer id.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ErrorCode } from '../../src/protocol/generated/errors.js';
import { encodeCreateTopicsRequest } from '../../src/protocol/generated/messages/create-topics-request.js';
import { decodeCreateTopicsResponse, type CreateTopicsResponse } from '../../src/protocol/generated/messages/create-topics-response.js';
import { encodeDescribeConfigsRequest } from '../../src/protocol/generated/messages/describe-configs-request.js';
import { decodeDescribeConfigsResponse } from '../../src/protocol/generated/messages/describe-configs-response.js';
import { encodeDescribeTopicPartitionsRequest } from '../../src/protocol/generated/messages/describe-topic-partitions-request.js';
import { decodeDescribeTopicPartitionsResponse } from '../../src/protocol/generated/messages/describe-topic-partitions-response.js';
import { encodeElectLeadersRequest } from '../../src/protocol/generated/messages/elect-leaders-request.js';
import { decodeElectLeadersResponse } from '../../src/protocol/generated/messages/elect-leaders-response.js';
import { encodeAlterConfigsRequest } from '../../src/protocol/generated/messages/alter-configs-request.js';
import { decodeAlterConfigsResponse } from '../../src/protocol/generated/messages/alter-configs-response.js';
import { encodeIncrementalAlterConfigsRequest } from '../../src/protocol/generated/messages/incremental-alter-configs-request.js';
import { decodeIncrementalAlterConfigsResponse } from '../../src/protocol/generated/messages/incremental-alter-configs-response.js';
import { encodeListOffsetsRequest } from '../../src/protocol/generated/messages/list-offsets-request.js';
import { decodeListOffsetsResponse } from '../../src/protocol/generated/messages/list-offsets-response.js';
import { encodeOffsetForLeaderEpochRequest } from '../../src/protocol/generated/messages/offset-for-leader-epoch-request.js';
import { decodeOffsetForLeaderEpochResponse } from '../../src/protocol/generated/messages/offset-for-leader-epoch-response.js';
import { encodeMetadataRequest } from '../../src/protocol/generated/messages/metadata-request.js';
import { decodeMetadataResponse } from '../../src/protocol/generated/messages/metadata-response.js';
import { encodeOffsetCommitRequest } from '../../src/protocol/generated/messages/offset-commit-request.js';
import { decodeOffsetCommitResponse } from '../../src/protocol/generated/messages/offset-commit-response.js';
import { encodeDescribeGroupsRequest } from '../../src/protocol/generated/messages/describe-groups-request.js';
import { decodeDescribeGroupsResponse } from '../../src/protocol/generated/messages/describe-groups-response.js';
import { encodeOffsetFetchRequest } from '../../src/protocol/generated/messages/offset-fetch-request.js';
import { decodeOffsetFetchResponse } from '../../src/protocol/generated/messages/offset-fetch-response.js';
import { encodeDeleteGroupsRequest } from '../../src/protocol/generated/messages/delete-groups-request.js';
import { decodeDeleteGroupsResponse } from '../../src/protocol/generated/messages/delete-groups-response.js';
import { encodeCreatePartitionsRequest } from '../../src/protocol/generated/messages/create-partitions-request.js';
import { decodeCreatePartitionsResponse } from '../../src/protocol/generated/messages/create-partitions-response.js';
import { encodeFetchRequest } from '../../src/protocol/generated/messages/fetch-request.js';
import { decodeFetchResponse } from '../../src/protocol/generated/messages/fetch-response.js';
import { encodeProduceRequest } from '../../src/protocol/generated/messages/produce-request.js';
import { decodeProduceResponse } from '../../src/protocol/generated/messages/produce-response.js';
import { buildRecordBatch } from '../../src/protocol/records.js';
import { startNode, type RunningNode } from '../helpers/node.js';
import { WireClient } from './wire.js';

const ZERO = '00000000-0000-0000-0000-000000000000';
let node: RunningNode;
let c: WireClient;

beforeAll(async () => {
  node = await startNode({ overrides: { 'node.id': 1 } });
  c = await WireClient.connect(node.port);
}, 180_000);
afterAll(async () => {
  c?.close();
  await node?.destroy();
});

async function createTopics(names: string[], timeoutMs: number, validateOnly = false): Promise<CreateTopicsResponse> {
  const topics = names.map((name) => ({ name, numPartitions: 1, replicationFactor: 1, configs: [] }));
  return decodeCreateTopicsResponse(await c.call(19, 7, (w) => encodeCreateTopicsRequest(w, { topics, timeoutMs, validateOnly }, 7)), 7);
}

async function topicExists(name: string): Promise<boolean> {
  const r = decodeMetadataResponse(await c.call(3, 12, (w) => encodeMetadataRequest(w, { topics: [{ name }], allowAutoTopicCreation: false }, 12)), 12);
  return r.topics[0]!.errorCode === ErrorCode.NONE;
}

it('CreateTopics with a timeout of 0 or less answers REQUEST_TIMED_OUT for every topic and creates nothing', async () => {
  for (const [timeoutMs, validateOnly] of [[0, false], [-1, false], [0, true]] as const) {
    const names = [`timed-out-${timeoutMs}-${validateOnly}`, 'bad name!'];
    const r = await createTopics(names, timeoutMs, validateOnly);
    expect(r.topics.map((t) => [t.name, t.errorCode, t.topicId, t.numPartitions, t.replicationFactor, t.configs])).toEqual(
      names.map((n) => [n, ErrorCode.REQUEST_TIMED_OUT, ZERO, -1, -1, []]),
    );
    expect(await topicExists(names[0]!)).toBe(false);
  }
  // An empty request has nothing to time out.
  expect((await createTopics([], 0)).topics).toEqual([]);
  // With time to run, the same topic is created.
  expect((await createTopics(['timed-out-0-false'], 10_000)).topics[0]!.errorCode).toBe(ErrorCode.NONE);
});

it('ListOffsets answers a topic named in two entries once, with its partitions, and leaves out an entry with none', async () => {
  expect((await createTopics(['lo-twice'], 10_000)).topics[0]!.errorCode).toBe(ErrorCode.NONE);
  for (const v of [1, 6, 10]) {
    const req = { replicaId: -1, isolationLevel: 0, timeoutMs: 0, topics: [{ name: 'lo-twice', partitions: [] }, { name: 'lo-twice', partitions: [{ partitionIndex: 0, currentLeaderEpoch: -1, timestamp: -1n }] }, { name: 'lo-empty', partitions: [] }] };
    const r = decodeListOffsetsResponse(await c.call(2, v, (w) => encodeListOffsetsRequest(w, req, v)), v);
    expect(r.topics.map((t) => [t.name, t.partitions.map((p) => [p.partitionIndex, p.errorCode])])).toEqual([['lo-twice', [[0, ErrorCode.NONE]]]]);
  }
});

it('ElectLeaders answers every topic entry of the request, one with no partitions with an empty result', async () => {
  expect((await createTopics(['elect-twice'], 10_000)).topics[0]!.errorCode).toBe(ErrorCode.NONE);
  const r = decodeElectLeadersResponse(
    await c.call(43, 0, (w) => encodeElectLeadersRequest(w, { topicPartitions: [{ topic: 'elect-twice', partitions: [] }, { topic: 'elect-twice', partitions: [0] }], timeoutMs: 5000 }, 0)),
    0,
  );
  expect(r.replicaElectionResults.map((t) => [t.topic, t.partitionResult.map((p) => [p.partitionId, p.errorCode])])).toEqual([
    ['elect-twice', []],
    ['elect-twice', [[0, ErrorCode.ELECTION_NOT_NEEDED]]],
  ]);
});

it('DescribeTopicPartitions refuses a cursor outside the request or with a negative partition: INVALID_REQUEST on every topic entry', async () => {
  expect((await createTopics(['dtp-cursor'], 10_000)).topics[0]!.errorCode).toBe(ErrorCode.NONE);
  const describe = async (topics: string[], cursor: { topicName: string; partitionIndex: number } | null) =>
    decodeDescribeTopicPartitionsResponse(await c.call(75, 0, (w) => encodeDescribeTopicPartitionsRequest(w, { topics: topics.map((name) => ({ name })), responsePartitionLimit: 100, cursor }, 0)), 0);
  const outside = await describe(['dtp-cursor'], { topicName: 'dtp-cursor-missing', partitionIndex: 0 });
  expect(outside.topics.map((t) => [t.name, t.errorCode, t.partitions])).toEqual([['dtp-cursor', ErrorCode.INVALID_REQUEST, []]]);
  expect(outside.nextCursor).toBeNull();
  const negative = await describe(['dtp-cursor', 'dtp-cursor'], { topicName: 'dtp-cursor', partitionIndex: -1 });
  expect(negative.topics.map((t) => [t.name, t.errorCode])).toEqual([
    ['dtp-cursor', ErrorCode.INVALID_REQUEST],
    ['dtp-cursor', ErrorCode.INVALID_REQUEST],
  ]);
  // A cursor inside the request still pages from where it points.
  const inside = await describe(['dtp-cursor'], { topicName: 'dtp-cursor', partitionIndex: 0 });
  expect(inside.topics.map((t) => [t.name, t.errorCode, t.partitions.length])).toEqual([['dtp-cursor', ErrorCode.NONE, 1]]);
});

it("the broker's DescribeConfigs reports broker.id as the node id, and keys the node reads only at start as read-only (a dynamic change is refused)", async () => {
  const r = decodeDescribeConfigsResponse(
    await c.call(32, 4, (w) => encodeDescribeConfigsRequest(w, { resources: [{ resourceType: 4, resourceName: '1', configurationKeys: null }], includeSynonyms: false, includeDocumentation: false }, 4)),
    4,
  );
  const configs = new Map(r.results[0]!.configs.map((e) => [e.name, e]));
  expect(configs.get('broker.id')).toMatchObject({ value: '1', configSource: 4, readOnly: true });
  // The internal topics' replication factors are Java shorts in Kafka (config type SHORT, 4).
  for (const key of ['offsets.topic.replication.factor', 'transaction.state.log.replication.factor', 'share.coordinator.state.topic.replication.factor']) {
    expect([key, configs.get(key)?.configType]).toEqual([key, 4]);
  }
  expect(configs.get('default.replication.factor')?.configType).toBe(3);
  expect(configs.get('group.share.assignors')?.value).toBe('simple');
  for (const key of ['delete.topic.enable', 'group.initial.rebalance.delay.ms', 'offsets.retention.minutes', 'transaction.max.timeout.ms', 'replica.lag.time.max.ms', 'log.retention.hours', 'socket.send.buffer.bytes']) {
    expect([key, configs.get(key)?.readOnly]).toEqual([key, true]);
  }
  for (const key of ['num.partitions', 'auto.create.topics.enable', 'group.consumer.session.timeout.ms', 'log.retention.ms']) {
    expect([key, configs.get(key)?.readOnly]).toEqual([key, false]);
  }
  // With synonyms, broker.id's levels are the node id (static) over the -1 default.
  const withSynonyms = decodeDescribeConfigsResponse(
    await c.call(32, 4, (w) => encodeDescribeConfigsRequest(w, { resources: [{ resourceType: 4, resourceName: '1', configurationKeys: ['broker.id'] }], includeSynonyms: true, includeDocumentation: false }, 4)),
    4,
  );
  expect(withSynonyms.results[0]!.configs[0]!.synonyms.map((l) => [l.value, l.source])).toEqual([
    ['1', 4],
    ['-1', 5],
  ]);
  // The cluster-wide defaults are typed as their keys are (min.insync.replicas is written there at bootstrap).
  const defaults = decodeDescribeConfigsResponse(
    await c.call(32, 4, (w) => encodeDescribeConfigsRequest(w, { resources: [{ resourceType: 4, resourceName: '', configurationKeys: null }], includeSynonyms: false, includeDocumentation: false }, 4)),
    4,
  );
  expect(defaults.results[0]!.configs.find((e) => e.name === 'min.insync.replicas')).toMatchObject({ value: '1', configSource: 3, configType: 3 });
  const alter = decodeIncrementalAlterConfigsResponse(
    await c.call(44, 1, (w) => encodeIncrementalAlterConfigsRequest(w, { resources: [{ resourceType: 4, resourceName: '', configs: [{ name: 'group.initial.rebalance.delay.ms', configOperation: 0, value: '10' }] }], validateOnly: false }, 1)),
    1,
  );
  expect(alter.responses[0]!.errorCode).toBe(ErrorCode.INVALID_CONFIG);
});

it("CreateTopics checks a topic's configs first, then the replication factor, then the partition count, as Kafka's controller does", async () => {
  const create = async (numPartitions: number, replicationFactor: number, configs: { name: string; value: string | null }[]): Promise<number> =>
    decodeCreateTopicsResponse(
      await c.call(19, 7, (w) => encodeCreateTopicsRequest(w, { topics: [{ name: 'check-order', numPartitions, replicationFactor, configs }], timeoutMs: 10_000, validateOnly: true }, 7)),
      7,
    ).topics[0]!.errorCode;
  const badConfig = [{ name: 'segment.bytes', value: '200' }];
  expect(await create(0, 1, badConfig)).toBe(ErrorCode.INVALID_CONFIG);
  expect(await create(1, 2, badConfig)).toBe(ErrorCode.INVALID_CONFIG);
  expect(await create(0, 0, [])).toBe(ErrorCode.INVALID_REPLICATION_FACTOR);
  expect(await create(0, 1, [])).toBe(ErrorCode.INVALID_PARTITIONS);
  // An assignment beside a partition count is refused only once the configs pass.
  const withAssignment = decodeCreateTopicsResponse(
    await c.call(19, 7, (w) =>
      encodeCreateTopicsRequest(w, { topics: [{ name: 'check-order', numPartitions: 0, replicationFactor: 0, assignments: [{ partitionIndex: 0, brokerIds: [] }], configs: [{ name: 'no.such.key', value: null }] }], timeoutMs: 10_000, validateOnly: true }, 7),
    ),
    7,
  ).topics[0]!.errorCode;
  expect(withAssignment).toBe(ErrorCode.INVALID_CONFIG);
});

it('CreateTopics asking for more than 10,000 partitions in all fails every topic with POLICY_VIOLATION, an existing one included', async () => {
  expect((await createTopics(['batch-existing'], 10_000)).topics[0]!.errorCode).toBe(ErrorCode.NONE);
  const topics = [
    { name: 'batch-existing', numPartitions: 6000, replicationFactor: 1, configs: [] },
    { name: 'batch-new', numPartitions: 5000, replicationFactor: 0, configs: [] },
  ];
  const r = decodeCreateTopicsResponse(await c.call(19, 7, (w) => encodeCreateTopicsRequest(w, { topics, timeoutMs: 10_000, validateOnly: false }, 7)), 7);
  expect(r.topics.map((t) => [t.name, t.errorCode])).toEqual([
    ['batch-existing', ErrorCode.POLICY_VIOLATION],
    ['batch-new', ErrorCode.POLICY_VIOLATION],
  ]);
  // At 10,000 in all, each topic is checked on its own.
  const fits = decodeCreateTopicsResponse(await c.call(19, 7, (w) => encodeCreateTopicsRequest(w, { topics: [topics[0]!, { ...topics[1]!, numPartitions: 4000 }], timeoutMs: 10_000, validateOnly: true }, 7)), 7);
  expect(fits.topics.map((t) => [t.name, t.errorCode])).toEqual([
    ['batch-existing', ErrorCode.TOPIC_ALREADY_EXISTS],
    ['batch-new', ErrorCode.INVALID_REPLICATION_FACTOR],
  ]);
});

it('a negative current leader epoch other than -1 is fenced (ListOffsets, OffsetForLeaderEpoch); an empty DescribeConfigs key list asks for every key; repeated names do not count toward the partition bound', async () => {
  expect((await createTopics(['epoch-minus-two'], 10_000)).topics[0]!.errorCode).toBe(ErrorCode.NONE);
  const lo = decodeListOffsetsResponse(
    await c.call(2, 8, (w) => encodeListOffsetsRequest(w, { replicaId: -1, isolationLevel: 0, topics: [{ name: 'epoch-minus-two', partitions: [{ partitionIndex: 0, currentLeaderEpoch: -2, timestamp: -1n }] }] }, 8)),
    8,
  );
  expect(lo.topics[0]!.partitions[0]!.errorCode).toBe(ErrorCode.FENCED_LEADER_EPOCH);
  const ofle = decodeOffsetForLeaderEpochResponse(
    await c.call(23, 4, (w) => encodeOffsetForLeaderEpochRequest(w, { replicaId: -1, topics: [{ topic: 'epoch-minus-two', partitions: [{ partition: 0, currentLeaderEpoch: -2, leaderEpoch: 0 }] }] }, 4)),
    4,
  );
  expect(ofle.topics[0]!.partitions[0]).toMatchObject({ errorCode: ErrorCode.FENCED_LEADER_EPOCH, leaderEpoch: -1, endOffset: -1n });
  const all = decodeDescribeConfigsResponse(
    await c.call(32, 2, (w) => encodeDescribeConfigsRequest(w, { resources: [{ resourceType: 4, resourceName: '', configurationKeys: [] }], includeSynonyms: false }, 2)),
    2,
  );
  expect(all.results[0]!.configs.map((e) => e.name)).toContain('min.insync.replicas');
  const twice = decodeCreateTopicsResponse(
    await c.call(19, 7, (w) =>
      encodeCreateTopicsRequest(w, { topics: [{ name: 'twice', numPartitions: 2_147_483_647, replicationFactor: 1, configs: [] }, { name: 'twice', numPartitions: 1, replicationFactor: 1, configs: [] }], timeoutMs: 10_000, validateOnly: true }, 7),
    ),
    7,
  );
  expect(twice.topics.map((t) => t.errorCode)).toEqual([ErrorCode.INVALID_REQUEST, ErrorCode.INVALID_REQUEST]);
});

it('CreateTopics adds the partitions asked as a Java int: a sum past 2^31 - 1 wraps and each topic is checked on its own; only topics that pass count toward the record bound', async () => {
  expect((await createTopics(['wrap-existing'], 10_000)).topics[0]!.errorCode).toBe(ErrorCode.NONE);
  const call = async (topics: { name: string; numPartitions: number; replicationFactor: number; assignments?: { partitionIndex: number; brokerIds: number[] }[]; configs?: { name: string; value: string | null }[] }[], validateOnly: boolean) =>
    decodeCreateTopicsResponse(
      await c.call(19, 7, (w) => encodeCreateTopicsRequest(w, { topics: topics.map((t) => ({ configs: [], ...t })), timeoutMs: 10_000, validateOnly }, 7)),
      7,
    ).topics.map((t) => [t.name, t.errorCode]);
  const MAX_INT = 2_147_483_647;
  expect(
    await call(
      [
        { name: 'wrap-new', numPartitions: MAX_INT, replicationFactor: 0 },
        { name: 'wrap-existing', numPartitions: 1, replicationFactor: 0 },
        { name: 'bad name!', numPartitions: -1, replicationFactor: -1, assignments: [{ partitionIndex: 0, brokerIds: [] }] },
      ],
      false,
    ),
  ).toEqual([
    ['wrap-new', ErrorCode.INVALID_REPLICATION_FACTOR],
    ['wrap-existing', ErrorCode.TOPIC_ALREADY_EXISTS],
    ['bad name!', ErrorCode.INVALID_TOPIC_EXCEPTION],
  ]);
  // -1 counts as num.partitions: 2^31 - 1 beside it wraps as well.
  expect(
    await call(
      [
        { name: 'wrap-new', numPartitions: MAX_INT, replicationFactor: 0 },
        { name: 'wrap-config', numPartitions: -1, replicationFactor: 0, configs: [{ name: 'wrap-new', value: null }] },
      ],
      false,
    ),
  ).toEqual([
    ['wrap-new', ErrorCode.INVALID_REPLICATION_FACTOR],
    ['wrap-config', ErrorCode.INVALID_CONFIG],
  ]);
  // The topic that fails its own check writes no records, so the one beside it is created.
  expect(
    await call(
      [
        { name: 'wrap-refused', numPartitions: MAX_INT, replicationFactor: 0 },
        { name: 'wrap-created', numPartitions: 1, replicationFactor: 1 },
      ],
      false,
    ),
  ).toEqual([
    ['wrap-refused', ErrorCode.INVALID_REPLICATION_FACTOR],
    ['wrap-created', ErrorCode.NONE],
  ]);
  expect(await topicExists('wrap-created')).toBe(true);
  // A topic that passes its checks with 2^31 - 1 partitions is past the record bound: the whole
  // request is refused (at once: the partitions are never laid out).
  expect(
    await call(
      [
        { name: 'wrap-huge', numPartitions: MAX_INT, replicationFactor: 1 },
        { name: 'wrap-small', numPartitions: 1, replicationFactor: 1 },
      ],
      true,
    ),
  ).toEqual([
    ['wrap-huge', ErrorCode.POLICY_VIOLATION],
    ['wrap-small', ErrorCode.POLICY_VIOLATION],
  ]);
});

it('OffsetCommit with a negative generation is accepted for an absent or empty group whatever member id it names, and the group it creates is Empty until deleted, the empty group id included', async () => {
  expect((await createTopics(['oc-negative'], 10_000)).topics[0]!.errorCode).toBe(ErrorCode.NONE);
  const commit = async (groupId: string, generationIdOrMemberEpoch: number, memberId: string, groupInstanceId: string | null): Promise<number> =>
    decodeOffsetCommitResponse(
      await c.call(8, 8, (w) =>
        encodeOffsetCommitRequest(w, { groupId, generationIdOrMemberEpoch, memberId, groupInstanceId, topics: [{ name: 'oc-negative', partitions: [{ partitionIndex: 0, committedOffset: 1n, committedLeaderEpoch: -1, committedMetadata: null }] }] }, 8),
      ),
      8,
    ).topics[0]!.partitions[0]!.errorCode;
  const state = async (groupId: string, v: number): Promise<[number, string]> => {
    const g = decodeDescribeGroupsResponse(await c.call(15, v, (w) => encodeDescribeGroupsRequest(w, { groups: [groupId], includeAuthorizedOperations: false }, v)), v).groups[0]!;
    return [g.errorCode, g.groupState];
  };
  expect(await commit('', -1, 'unknown-member', null)).toBe(ErrorCode.NONE);
  for (const v of [0, 1, 2, 3, 4, 5]) expect(await state('', v)).toEqual([ErrorCode.NONE, 'Empty']);
  // The group is empty: another negative generation with any member or instance id commits too.
  expect(await commit('', -2_147_483_648, 'someone', 'instance-1')).toBe(ErrorCode.NONE);
  expect(await commit('oc-negative-group', -1, 'unknown-member', 'instance-2')).toBe(ErrorCode.NONE);
  expect(await state('oc-negative-group', 5)).toEqual([ErrorCode.NONE, 'Empty']);
  // A generation of 0 or more still needs the group's member.
  expect(await commit('oc-negative-absent', 3, '', null)).toBe(ErrorCode.ILLEGAL_GENERATION);
  expect(await commit('oc-negative-group', 3, '', null)).toBe(ErrorCode.UNKNOWN_MEMBER_ID);
  const deleted = decodeDeleteGroupsResponse(await c.call(42, 1, (w) => encodeDeleteGroupsRequest(w, { groupsNames: ['oc-negative-absent', ''] }, 1)), 1);
  expect(new Map(deleted.results.map((r) => [r.groupId, r.errorCode]))).toEqual(
    new Map([
      ['oc-negative-absent', ErrorCode.GROUP_ID_NOT_FOUND],
      ['', ErrorCode.NONE],
    ]),
  );
  expect(await state('', 5)).toEqual([ErrorCode.NONE, 'Dead']);
});

it('a follower fetch from a broker that is not a replica of the partition (or from the leader itself) is UNKNOWN_LEADER_EPOCH with a current leader epoch, NOT_LEADER_OR_FOLLOWER without, and carries no offsets', async () => {
  expect((await createTopics(['follower-stranger'], 10_000)).topics[0]!.errorCode).toBe(ErrorCode.NONE);
  const fetch = async (replicaId: number, currentLeaderEpoch: number) => {
    const r = decodeFetchResponse(
      await c.call(1, 11, (w) =>
        encodeFetchRequest(
          w,
          { replicaId, maxWaitMs: 0, minBytes: 0, maxBytes: 1024, isolationLevel: 0, sessionId: 0, sessionEpoch: -1, topics: [{ topic: 'follower-stranger', partitions: [{ partition: 0, currentLeaderEpoch, fetchOffset: 0n, logStartOffset: -1n, partitionMaxBytes: 1024 }] }], forgottenTopicsData: [], rackId: '' },
          11,
        ),
      ),
      11,
    );
    const p = r.responses[0]!.partitions[0]!;
    return [p.errorCode, p.highWatermark, p.lastStableOffset, p.logStartOffset];
  };
  expect(await fetch(1000, 0)).toEqual([ErrorCode.UNKNOWN_LEADER_EPOCH, -1n, -1n, -1n]);
  expect(await fetch(1000, -1)).toEqual([ErrorCode.NOT_LEADER_OR_FOLLOWER, -1n, -1n, -1n]);
  expect(await fetch(1, 0)).toEqual([ErrorCode.UNKNOWN_LEADER_EPOCH, -1n, -1n, -1n]);
  // A negative epoch is no epoch in a fetch.
  expect(await fetch(1000, -2)).toEqual([ErrorCode.NOT_LEADER_OR_FOLLOWER, -1n, -1n, -1n]);
});

it('a Metadata request naming a topic with neither name nor id fails as a whole, as Kafka answers it: UNKNOWN_SERVER_ERROR (v12+) or INVALID_REQUEST (a null name before v12), every entry echoed with no partitions, no brokers, and nothing auto-created', async () => {
  expect((await createTopics(['md-null-known'], 10_000)).topics[0]!.errorCode).toBe(ErrorCode.NONE);
  // The same with an authorizer, whose Metadata guard must not add operations to such an answer.
  const secured = await startNode({ overrides: { 'node.id': 1, 'authorizer.class.name': 'org.apache.kafka.metadata.authorizer.StandardAuthorizer', 'super.users': 'User:ANONYMOUS' } });
  const sc = await WireClient.connect(secured.port);
  try {
    for (const v of [10, 11, 12, 13]) {
      const r = decodeMetadataResponse(
        await sc.call(3, v, (w) => encodeMetadataRequest(w, { topics: [{ topicId: ZERO, name: null }], allowAutoTopicCreation: false, ...(v <= 10 ? { includeClusterAuthorizedOperations: true } : {}), includeTopicAuthorizedOperations: true }, v)),
        v,
      );
      expect([v, r.topics.map((t) => [t.errorCode, t.topicAuthorizedOperations]), r.clusterAuthorizedOperations]).toEqual([v, [[v >= 12 ? ErrorCode.UNKNOWN_SERVER_ERROR : ErrorCode.INVALID_REQUEST, -2147483648]], -2147483648]);
    }
  } finally {
    sc.close();
    await secured.destroy();
  }
  for (const v of [10, 11, 12, 13]) {
    const name = `md-null-beside-${v}`;
    const r = decodeMetadataResponse(
      await c.call(3, v, (w) => encodeMetadataRequest(w, { topics: [{ topicId: ZERO, name: 'md-null-known' }, { topicId: ZERO, name: null }, { topicId: ZERO, name }], allowAutoTopicCreation: true, ...(v <= 10 ? { includeClusterAuthorizedOperations: true } : {}), includeTopicAuthorizedOperations: true }, v)),
      v,
    );
    const code = v >= 12 ? ErrorCode.UNKNOWN_SERVER_ERROR : ErrorCode.INVALID_REQUEST;
    expect(r.topics.map((t) => [t.errorCode, t.name, t.topicId, t.isInternal, t.partitions, t.topicAuthorizedOperations])).toEqual(
      ['md-null-known', '', name].map((n) => [code, n, ZERO, false, [], -2147483648]),
    );
    expect([r.brokers, r.controllerId, r.clusterId, r.errorCode, r.clusterAuthorizedOperations]).toEqual([[], -1, null, v >= 13 ? code : 0, -2147483648]);
  }
  // Auto-creation does not hold the answer back: give it time to have happened.
  await new Promise((r) => setTimeout(r, 1500));
  for (const v of [10, 11, 12, 13]) expect(await topicExists(`md-null-beside-${v}`)).toBe(false);
  // A null name beside a non-zero id is a lookup by id: the null entry is ignored, as in Kafka.
  const known = decodeMetadataResponse(await c.call(3, 12, (w) => encodeMetadataRequest(w, { topics: [{ name: 'md-null-known' }], allowAutoTopicCreation: false }, 12)), 12).topics[0]!;
  const byId = decodeMetadataResponse(await c.call(3, 12, (w) => encodeMetadataRequest(w, { topics: [{ topicId: known.topicId, name: null }, { topicId: ZERO, name: null }], allowAutoTopicCreation: false }, 12)), 12);
  expect(byId.topics.map((t) => [t.errorCode, t.name])).toEqual([[ErrorCode.NONE, 'md-null-known']]);
});

it('DescribeTopicPartitions pages as Kafka: an unknown topic past the limit becomes the cursor, a cursor near 2^31 - 1 wraps the cursor it answers, and the limit is at most max.request.partition.size.limit', async () => {
  for (const name of ['dtp-page-a', 'dtp-page-c']) expect((await createTopics([name], 10_000)).topics[0]!.errorCode).toBe(ErrorCode.NONE);
  const describe = async (topics: string[], responsePartitionLimit: number, cursor: { topicName: string; partitionIndex: number } | null) => {
    const r = decodeDescribeTopicPartitionsResponse(await c.call(75, 0, (w) => encodeDescribeTopicPartitionsRequest(w, { topics: topics.map((name) => ({ name })), responsePartitionLimit, cursor }, 0)), 0);
    return { topics: r.topics.map((t) => [t.name, t.errorCode, t.partitions.map((p) => p.partitionIndex)]), next: r.nextCursor === null ? null : [r.nextCursor.topicName, r.nextCursor.partitionIndex] };
  };
  expect(await describe(['dtp-page-a', 'dtp-page-b', 'dtp-page-c'], 1, null)).toEqual({ topics: [['dtp-page-a', ErrorCode.NONE, [0]]], next: ['dtp-page-b', 0] });
  expect(await describe(['dtp-page-a', 'dtp-page-b', 'dtp-page-c'], 2, null)).toEqual({
    topics: [
      ['dtp-page-a', ErrorCode.NONE, [0]],
      ['dtp-page-b', ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, []],
      ['dtp-page-c', ErrorCode.NONE, [0]],
    ],
    next: null,
  });
  expect(await describe(['dtp-page-a', 'dtp-page-c'], 2, { topicName: 'dtp-page-a', partitionIndex: 2_147_483_647 })).toEqual({ topics: [['dtp-page-a', ErrorCode.NONE, []]], next: ['dtp-page-a', -2_147_483_647] });
  // A limit above max.request.partition.size.limit (2,000) counts as 2,000.
  expect(await describe([], 60_000, { topicName: 'dtp-page-a', partitionIndex: 2_147_483_647 })).toEqual({ topics: [['dtp-page-a', ErrorCode.NONE, []]], next: ['dtp-page-a', -2_147_481_649] });
  // Past the partition count without wrapping, the next topic follows.
  expect(await describe(['dtp-page-a', 'dtp-page-c'], 2, { topicName: 'dtp-page-a', partitionIndex: 5 })).toEqual({
    topics: [
      ['dtp-page-a', ErrorCode.NONE, []],
      ['dtp-page-c', ErrorCode.NONE, [0]],
    ],
    next: null,
  });
});

it("min.insync.replicas stays as Kafka keeps it while eligible leader replicas are on: a node's own value cannot be set or removed, the cluster-wide one cannot be removed", async () => {
  const incremental = async (resourceName: string, configOperation: number, value: string | null, validateOnly: boolean): Promise<number> =>
    decodeIncrementalAlterConfigsResponse(
      await c.call(44, 1, (w) => encodeIncrementalAlterConfigsRequest(w, { resources: [{ resourceType: 4, resourceName, configs: [{ name: 'min.insync.replicas', configOperation, value }] }], validateOnly }, 1)),
      1,
    ).responses[0]!.errorCode;
  const legacy = async (resourceName: string, configs: { name: string; value: string }[], validateOnly: boolean): Promise<number> =>
    decodeAlterConfigsResponse(await c.call(33, 1, (w) => encodeAlterConfigsRequest(w, { resources: [{ resourceType: 4, resourceName, configs }], validateOnly }, 1)), 1).responses[0]!.errorCode;
  const clusterValue = async () => {
    const r = decodeDescribeConfigsResponse(
      await c.call(32, 4, (w) => encodeDescribeConfigsRequest(w, { resources: [{ resourceType: 4, resourceName: '', configurationKeys: ['min.insync.replicas'] }], includeSynonyms: false, includeDocumentation: false }, 4)),
      4,
    );
    return r.results[0]!.configs.map((e) => [e.value, e.configSource]);
  };
  for (const validateOnly of [true, false]) {
    expect(await incremental('1', 0, '1', validateOnly)).toBe(ErrorCode.INVALID_CONFIG);
    expect(await incremental('1', 1, null, validateOnly)).toBe(ErrorCode.INVALID_CONFIG);
    expect(await legacy('1', [{ name: 'min.insync.replicas', value: '1' }], validateOnly)).toBe(ErrorCode.INVALID_CONFIG);
    expect(await incremental('', 1, null, validateOnly)).toBe(ErrorCode.INVALID_CONFIG);
    // AlterConfigs replaces the whole set: leaving the key out removes it.
    expect(await legacy('', [{ name: 'log.retention.ms', value: '604800000' }], validateOnly)).toBe(ErrorCode.INVALID_CONFIG);
  }
  expect(await clusterValue()).toEqual([['1', 3]]);
  // Setting the cluster-wide value, or restating it, is allowed; so is a node set without it.
  expect(await incremental('', 0, '1', false)).toBe(ErrorCode.NONE);
  expect(await legacy('', [{ name: 'min.insync.replicas', value: '1' }], false)).toBe(ErrorCode.NONE);
  expect(await legacy('1', [], true)).toBe(ErrorCode.NONE);
  expect(await clusterValue()).toEqual([['1', 3]]);
});

it('a committed offset may be any int64: Long.MAX_VALUE is stored and fetched back exactly, and its commit creates the group', async () => {
  expect((await createTopics(['oc-long-max'], 10_000)).topics[0]!.errorCode).toBe(ErrorCode.NONE);
  const MAX = 9_223_372_036_854_775_807n;
  for (const [groupId, committedOffset] of [['oc-long-max-group', MAX], ['oc-long-max-group', MAX - 1n], ['oc-long-min-group', -9_223_372_036_854_775_808n]] as const) {
    const r = decodeOffsetCommitResponse(
      await c.call(8, 8, (w) =>
        encodeOffsetCommitRequest(w, { groupId, generationIdOrMemberEpoch: -1, memberId: '', groupInstanceId: null, topics: [{ name: 'oc-long-max', partitions: [{ partitionIndex: 0, committedOffset, committedLeaderEpoch: -1, committedMetadata: null }] }] }, 8),
      ),
      8,
    );
    expect(r.topics[0]!.partitions[0]!.errorCode).toBe(ErrorCode.NONE);
    const f = decodeOffsetFetchResponse(await c.call(9, 8, (w) => encodeOffsetFetchRequest(w, { groups: [{ groupId, topics: [{ name: 'oc-long-max', partitionIndexes: [0] }] }], requireStable: false }, 8)), 8);
    expect(f.groups[0]!.topics[0]!.partitions[0]!.committedOffset).toBe(committedOffset);
  }
  const d = decodeDescribeGroupsResponse(await c.call(15, 5, (w) => encodeDescribeGroupsRequest(w, { groups: ['oc-long-max-group'], includeAuthorizedOperations: false }, 5)), 5);
  expect(d.groups[0]!.groupState).toBe('Empty');
});

it('DescribeConfigs with IncludeDocumentation gives each key a sentence of documentation, and null without it', async () => {
  expect((await createTopics(['dc-docs'], 10_000)).topics[0]!.errorCode).toBe(ErrorCode.NONE);
  const resources = [
    { resourceType: 2, resourceName: 'dc-docs', configurationKeys: null },
    { resourceType: 4, resourceName: '1', configurationKeys: null },
    { resourceType: 4, resourceName: '', configurationKeys: null },
    { resourceType: 32, resourceName: 'dc-docs-group', configurationKeys: null },
  ];
  for (const v of [3, 4]) {
    for (const includeDocumentation of [true, false]) {
      const r = decodeDescribeConfigsResponse(await c.call(32, v, (w) => encodeDescribeConfigsRequest(w, { resources, includeSynonyms: false, includeDocumentation }, v)), v);
      for (const res of r.results) {
        expect(res.errorCode).toBe(ErrorCode.NONE);
        expect(res.configs.length).toBeGreaterThan(0);
        const undocumented = res.configs.filter((e) => (includeDocumentation ? !(typeof e.documentation === 'string' && /^[A-Z].*\.$/.test(e.documentation)) : e.documentation !== null)).map((e) => e.name);
        expect([v, res.resourceType, res.resourceName, undocumented]).toEqual([v, res.resourceType, res.resourceName, []]);
      }
    }
  }
});

it('DescribeConfigs with a resource type Kafka does not know fails every resource of the request with INVALID_REQUEST and no configs', async () => {
  expect((await createTopics(['dc-bad-type'], 10_000)).topics[0]!.errorCode).toBe(ErrorCode.NONE);
  const resources = [
    { resourceType: 4, resourceName: '', configurationKeys: null },
    { resourceType: 2, resourceName: 'dc-bad-type', configurationKeys: null },
    { resourceType: 0, resourceName: 'dc-bad-type', configurationKeys: null },
  ];
  for (const v of [1, 4]) {
    const r = decodeDescribeConfigsResponse(await c.call(32, v, (w) => encodeDescribeConfigsRequest(w, { resources, includeSynonyms: false, includeDocumentation: false }, v)), v);
    expect(r.results.map((x) => [x.resourceType, x.resourceName, x.errorCode, x.configs])).toEqual(resources.map((x) => [x.resourceType, x.resourceName, ErrorCode.INVALID_REQUEST, []]));
  }
  // Without it, each resource is answered on its own.
  const ok = decodeDescribeConfigsResponse(await c.call(32, 4, (w) => encodeDescribeConfigsRequest(w, { resources: resources.slice(0, 2), includeSynonyms: false, includeDocumentation: false }, 4)), 4);
  expect(ok.results.map((x) => x.errorCode)).toEqual([ErrorCode.NONE, ErrorCode.NONE]);
});

it('DescribeConfigs checks a topic name before looking the topic up: an invalid name is INVALID_TOPIC_EXCEPTION, a valid unknown one UNKNOWN_TOPIC_OR_PARTITION', async () => {
  const names = ['', '..', 'bad name!', 'x'.repeat(250), 'dc-valid-unknown'];
  const r = decodeDescribeConfigsResponse(
    await c.call(32, 4, (w) => encodeDescribeConfigsRequest(w, { resources: names.map((resourceName) => ({ resourceType: 2, resourceName, configurationKeys: null })), includeSynonyms: false, includeDocumentation: false }, 4)),
    4,
  );
  expect(r.results.map((x) => [x.resourceName, x.errorCode, x.configs])).toEqual([
    ...names.slice(0, 4).map((n) => [n, ErrorCode.INVALID_TOPIC_EXCEPTION, []]),
    ['dc-valid-unknown', ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, []],
  ]);
});

it("OffsetCommit answers as Kafka's response builder: the partitions refused before the coordinator are merged by topic name, the coordinator's answer joins them by name, and is kept as it is when nothing was refused", async () => {
  expect((await createTopics(['oc-merge'], 10_000)).topics[0]!.errorCode).toBe(ErrorCode.NONE);
  const commit = async (v: number, topics: [string, number[]][]) =>
    decodeOffsetCommitResponse(
      await c.call(8, v, (w) =>
        encodeOffsetCommitRequest(
          w,
          { groupId: `oc-merge-g${v}`, generationIdOrMemberEpoch: -1, memberId: '', groupInstanceId: null, topics: topics.map(([name, ps]) => ({ name, partitions: ps.map((partitionIndex) => ({ partitionIndex, committedOffset: 1n, committedLeaderEpoch: -1, committedMetadata: null })) })) },
          v,
        ),
      ),
      v,
    ).topics.map((t) => [t.name, t.partitions.map((p) => [p.partitionIndex, p.errorCode])]);
  const U = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION;
  for (const v of [2, 7, 8, 9]) {
    // Only refused partitions: one topic.
    expect(await commit(v, [['oc-merge', [5]], ['oc-merge', [6]]])).toEqual([['oc-merge', [[5, U], [6, U]]]]);
    // A topic that does not exist is answered even with no partitions; one that exists is not.
    expect(await commit(v, [['', []], ['oc-merge', []], ['oc-merge-missing', []]])).toEqual([['', []], ['oc-merge-missing', []]]);
    // Nothing refused: the coordinator's answer, one entry per request entry.
    expect(await commit(v, [['oc-merge', [0]], ['oc-merge', [0]]])).toEqual([['oc-merge', [[0, 0]]], ['oc-merge', [[0, 0]]]]);
    // Both: the refused ones in the order they were met, the committed ones joined to them by name.
    expect(await commit(v, [['oc-merge', [0]], ['oc-merge-missing', [0]], ['oc-merge', [7, 0]]])).toEqual([
      ['oc-merge-missing', [[0, U]]],
      ['oc-merge', [[7, U], [0, 0], [0, 0]]],
    ]);
    expect(await commit(v, [['oc-merge-missing', [1]], ['oc-merge', [0]], ['oc-merge', [0]]])).toEqual([
      ['oc-merge-missing', [[1, U]]],
      ['oc-merge', [[0, 0], [0, 0]]],
    ]);
  }
});

it('CreatePartitions checks every topic on its own and counts toward the 10,000-record bound only the topics that pass; the topic that would cross it fails with UNKNOWN_SERVER_ERROR, the others are answered as usual', async () => {
  for (const name of ['cp-bound-a', 'cp-bound-b']) expect((await createTopics([name], 10_000)).topics[0]!.errorCode).toBe(ErrorCode.NONE);
  const grow = async (topics: [string, number][]) =>
    decodeCreatePartitionsResponse(await c.call(37, 3, (w) => encodeCreatePartitionsRequest(w, { topics: topics.map(([name, count]) => ({ name, count, assignments: null })), timeoutMs: 30_000, validateOnly: true }, 3)), 3).results.map((r) => [
      r.name,
      r.errorCode,
    ]);
  // Exactly 10,000 new partitions fit; one more does not.
  expect(await grow([['cp-bound-a', 10_001]])).toEqual([['cp-bound-a', ErrorCode.NONE]]);
  expect(await grow([['cp-bound-a', 10_002]])).toEqual([['cp-bound-a', ErrorCode.UNKNOWN_SERVER_ERROR]]);
  expect(await grow([['cp-bound-a', 2_147_483_647]])).toEqual([['cp-bound-a', ErrorCode.UNKNOWN_SERVER_ERROR]]);
  // A topic that fails its own checks adds nothing.
  expect(await grow([['cp-bound-missing', 20_000], ['cp-bound-a', 6_001]])).toEqual([['cp-bound-missing', ErrorCode.UNKNOWN_TOPIC_OR_PARTITION], ['cp-bound-a', ErrorCode.NONE]]);
  expect(await grow([['cp-bound-a', 0], ['cp-bound-b', 10_001]])).toEqual([['cp-bound-a', ErrorCode.INVALID_PARTITIONS], ['cp-bound-b', ErrorCode.NONE]]);
  // Two topics that pass alone but not together: the one checked second crosses the bound.
  expect(await grow([['cp-bound-a', 6_001], ['cp-bound-b', 6_001], ['cp-bound-missing', 2]])).toEqual([
    ['cp-bound-a', ErrorCode.NONE],
    ['cp-bound-b', ErrorCode.UNKNOWN_SERVER_ERROR],
    ['cp-bound-missing', ErrorCode.UNKNOWN_TOPIC_OR_PARTITION],
  ]);
  // Nothing was written by the validate-only requests.
  const md = decodeMetadataResponse(await c.call(3, 12, (w) => encodeMetadataRequest(w, { topics: [{ name: 'cp-bound-a' }], allowAutoTopicCreation: false }, 12)), 12);
  expect(md.topics[0]!.partitions.length).toBe(1);
});

it('OffsetCommit with a generation of 0 or more to a group that does not exist is GROUP_ID_NOT_FOUND from v9, ILLEGAL_GENERATION before', async () => {
  expect((await createTopics(['oc-no-group'], 10_000)).topics[0]!.errorCode).toBe(ErrorCode.NONE);
  for (const v of [2, 7, 8, 9]) {
    const r = decodeOffsetCommitResponse(
      await c.call(8, v, (w) =>
        encodeOffsetCommitRequest(
          w,
          { groupId: `oc-no-group-${v}`, generationIdOrMemberEpoch: 2_147_483_647, memberId: '', groupInstanceId: null, topics: [{ name: 'oc-no-group', partitions: [{ partitionIndex: 0, committedOffset: 2n, committedLeaderEpoch: -1, committedMetadata: null }] }] },
          v,
        ),
      ),
      v,
    );
    expect([v, r.topics[0]!.partitions[0]!.errorCode]).toEqual([v, v >= 9 ? ErrorCode.GROUP_ID_NOT_FOUND : ErrorCode.ILLEGAL_GENERATION]);
  }
});

it('Metadata with IncludeTopicAuthorizedOperations gives the operations of every named topic in the answer, an invalid or unknown one too, with or without an authorizer', async () => {
  const secured = await startNode({ overrides: { 'node.id': 1, 'authorizer.class.name': 'org.apache.kafka.metadata.authorizer.StandardAuthorizer', 'super.users': 'User:ANONYMOUS' } });
  const sc = await WireClient.connect(secured.port);
  try {
    for (const client of [c, sc]) {
      for (const v of [8, 9, 12]) {
        const r = decodeMetadataResponse(await client.call(3, v, (w) => encodeMetadataRequest(w, { topics: [{ name: '' }, { name: 'md-ops-unknown' }], allowAutoTopicCreation: false, includeTopicAuthorizedOperations: true }, v)), v);
        expect([v, r.topics.map((t) => [t.name, t.errorCode, t.topicAuthorizedOperations])]).toEqual([
          v,
          [
            ['', ErrorCode.INVALID_TOPIC_EXCEPTION, 3576],
            ['md-ops-unknown', ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, 3576],
          ],
        ]);
      }
    }
  } finally {
    sc.close();
    await secured.destroy();
  }
});

it("a topic key at its default lists its broker key's levels from the key itself on: none where only a fallback (log.roll.hours) or nothing is set", async () => {
  await createTopics(['syn-defaults'], 30_000);
  const r = decodeDescribeConfigsResponse(
    await c.call(32, 4, (w) =>
      encodeDescribeConfigsRequest(
        w,
        { resources: [{ resourceType: 2, resourceName: 'syn-defaults', configurationKeys: ['segment.ms', 'retention.ms', 'flush.ms', 'max.compaction.lag.ms', 'segment.jitter.ms', 'leader.replication.throttled.replicas', 'cleanup.policy'] }], includeSynonyms: true, includeDocumentation: false },
        4,
      ),
    ),
    4,
  );
  const got = Object.fromEntries(r.results[0]!.configs.map((e) => [e.name, [e.value, e.configSource, e.synonyms.map((l) => `${l.name}=${l.value}@${l.source}`)]]));
  expect(got).toEqual({
    'segment.ms': ['604800000', 5, []],
    'retention.ms': ['604800000', 5, []],
    'flush.ms': ['9223372036854775807', 5, []],
    'max.compaction.lag.ms': ['9223372036854775807', 5, ['log.cleaner.max.compaction.lag.ms=9223372036854775807@5']],
    'segment.jitter.ms': ['0', 5, []],
    'leader.replication.throttled.replicas': ['', 5, []],
    'cleanup.policy': ['delete', 5, ['log.cleanup.policy=delete@5']],
  });
});

it('a transactional batch with no producer id is appended as Kafka appends it: it belongs to no producer, so no transaction check applies and the last stable offset is not held', async () => {
  expect((await createTopics(['txn-no-pid'], 10_000)).topics[0]!.errorCode).toBe(ErrorCode.NONE);
  const batch = buildRecordBatch({ records: [{ value: Buffer.from('t'), timestamp: Date.now() }], producerId: -1, producerEpoch: -1, baseSequence: 0, isTransactional: true });
  const produced = decodeProduceResponse(
    await c.call(0, 11, (w) => encodeProduceRequest(w, { transactionalId: 'txn-no-pid', acks: -1, timeoutMs: 10_000, topicData: [{ name: 'txn-no-pid', partitionData: [{ index: 0, records: batch }] }] }, 11)),
    11,
  );
  expect(produced.responses[0]!.partitionResponses.map((p) => [p.errorCode, p.baseOffset])).toEqual([[ErrorCode.NONE, 0n]]);
  for (const isolationLevel of [0, 1]) {
    const r = decodeListOffsetsResponse(
      await c.call(2, 8, (w) => encodeListOffsetsRequest(w, { replicaId: -1, isolationLevel, topics: [{ name: 'txn-no-pid', partitions: [{ partitionIndex: 0, currentLeaderEpoch: -1, timestamp: -1n }] }] }, 8)),
      8,
    );
    expect([isolationLevel, r.topics[0]!.partitions[0]!.offset]).toEqual([isolationLevel, 1n]);
  }
});
