/**
 * KIP-1071 streams groups over raw sockets to a real node: what ApiVersions advertises, the
 * StreamsGroupHeartbeat request checks and error codes, the status codes for missing source
 * topics and internal topics (which the node then creates with the topology's configs), the
 * sticky task assignment with revocation before reassignment, standbys per
 * streams.num.standby.replicas, leave, StreamsGroupDescribe, ListGroups/DescribeGroups/
 * DeleteGroups for the streams type, OffsetCommit validated by member epoch, and the group
 * surviving a restart.
 */
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrorCode } from '../../src/protocol/generated/errors.js';
import { encodeApiVersionsRequest } from '../../src/protocol/generated/messages/api-versions-request.js';
import { decodeApiVersionsResponse } from '../../src/protocol/generated/messages/api-versions-response.js';
import { encodeCreateTopicsRequest } from '../../src/protocol/generated/messages/create-topics-request.js';
import { decodeCreateTopicsResponse } from '../../src/protocol/generated/messages/create-topics-response.js';
import { encodeDescribeConfigsRequest } from '../../src/protocol/generated/messages/describe-configs-request.js';
import { decodeDescribeConfigsResponse } from '../../src/protocol/generated/messages/describe-configs-response.js';
import { encodeMetadataRequest } from '../../src/protocol/generated/messages/metadata-request.js';
import { decodeMetadataResponse } from '../../src/protocol/generated/messages/metadata-response.js';
import { encodeStreamsGroupHeartbeatRequest, type StreamsGroupHeartbeatRequestInput } from '../../src/protocol/generated/messages/streams-group-heartbeat-request.js';
import { decodeStreamsGroupHeartbeatResponse } from '../../src/protocol/generated/messages/streams-group-heartbeat-response.js';
import { encodeStreamsGroupDescribeRequest } from '../../src/protocol/generated/messages/streams-group-describe-request.js';
import { decodeStreamsGroupDescribeResponse } from '../../src/protocol/generated/messages/streams-group-describe-response.js';
import { encodeListGroupsRequest } from '../../src/protocol/generated/messages/list-groups-request.js';
import { decodeListGroupsResponse } from '../../src/protocol/generated/messages/list-groups-response.js';
import { encodeDescribeGroupsRequest } from '../../src/protocol/generated/messages/describe-groups-request.js';
import { decodeDescribeGroupsResponse } from '../../src/protocol/generated/messages/describe-groups-response.js';
import { encodeDeleteGroupsRequest } from '../../src/protocol/generated/messages/delete-groups-request.js';
import { decodeDeleteGroupsResponse } from '../../src/protocol/generated/messages/delete-groups-response.js';
import { encodeOffsetCommitRequest } from '../../src/protocol/generated/messages/offset-commit-request.js';
import { decodeOffsetCommitResponse } from '../../src/protocol/generated/messages/offset-commit-response.js';
import { encodeConsumerGroupHeartbeatRequest } from '../../src/protocol/generated/messages/consumer-group-heartbeat-request.js';
import { decodeConsumerGroupHeartbeatResponse } from '../../src/protocol/generated/messages/consumer-group-heartbeat-response.js';
import { encodeJoinGroupRequest } from '../../src/protocol/generated/messages/join-group-request.js';
import { decodeJoinGroupResponse } from '../../src/protocol/generated/messages/join-group-response.js';
import { startNode, type RunningNode } from '../helpers/node.js';
import { waitFor } from '../helpers/wait.js';
import { WireClient } from './wire.js';

let node: RunningNode;
let c: WireClient;

async function createTopic(name: string, numPartitions: number): Promise<void> {
  const r = decodeCreateTopicsResponse(await c.call(19, 7, (w) => encodeCreateTopicsRequest(w, { topics: [{ name, numPartitions, replicationFactor: 1 }], timeoutMs: 5000 }, 7)), 7);
  expect(r.topics[0]!.errorCode).toBe(0);
}

async function partitions(topic: string): Promise<number | null> {
  const r = decodeMetadataResponse(await c.call(3, 12, (w) => encodeMetadataRequest(w, { topics: [{ topicId: '00000000-0000-0000-0000-000000000000', name: topic }], allowAutoTopicCreation: false }, 12)), 12);
  const t = r.topics[0]!;
  return t.errorCode === 0 ? t.partitions.length : null;
}

async function topicConfig(topic: string, name: string): Promise<string | null> {
  const r = decodeDescribeConfigsResponse(await c.call(32, 4, (w) => encodeDescribeConfigsRequest(w, { resources: [{ resourceType: 2, resourceName: topic, configurationKeys: [name] }] }, 4)), 4);
  return r.results[0]!.configs.find((x) => x.name === name)?.value ?? null;
}

const hb = async (req: StreamsGroupHeartbeatRequestInput, v = 1) => decodeStreamsGroupHeartbeatResponse(await c.call(88, v, (w) => encodeStreamsGroupHeartbeatRequest(w, { endpointInformationEpoch: 0, ...req }, v)), v);
const describeStreams = async (ids: string[]) => decodeStreamsGroupDescribeResponse(await c.call(89, 1, (w) => encodeStreamsGroupDescribeRequest(w, { groupIds: ids, includeAuthorizedOperations: false }, 1)), 1).groups;

/** A word-count shaped topology: source → repartition (subtopology 0), repartition → count store (1). */
function topology(source: string, app: string, epoch = 1): StreamsGroupHeartbeatRequestInput['topology'] {
  return {
    epoch,
    subtopologies: [
      { subtopologyId: '0', sourceTopics: [source], sourceTopicRegex: [], stateChangelogTopics: [], repartitionSinkTopics: [`${app}-rp`], repartitionSourceTopics: [], copartitionGroups: [] },
      {
        subtopologyId: '1',
        sourceTopics: [],
        sourceTopicRegex: [],
        stateChangelogTopics: [{ name: `${app}-store-changelog`, partitions: 0, replicationFactor: 0, topicConfigs: [{ key: 'cleanup.policy', value: 'compact' }] }],
        repartitionSinkTopics: [],
        repartitionSourceTopics: [{ name: `${app}-rp`, partitions: 0, replicationFactor: 0, topicConfigs: [{ key: 'cleanup.policy', value: 'delete' }, { key: 'retention.ms', value: '-1' }] }],
        copartitionGroups: [],
      },
    ],
  };
}

const join = (groupId: string, memberId: string, processId: string, topo: StreamsGroupHeartbeatRequestInput['topology']): StreamsGroupHeartbeatRequestInput => ({
  groupId,
  memberId,
  memberEpoch: 0,
  rebalanceTimeoutMs: 30000,
  topology: topo,
  processId,
  activeTasks: [],
  standbyTasks: [],
  warmupTasks: [],
  clientTags: [],
});

const tasks = (l: readonly { subtopologyId: string; partitions: readonly number[] }[] | null): string[] | null =>
  l === null ? null : l.flatMap((t) => t.partitions.map((p) => `${t.subtopologyId}_${p}`)).sort();

beforeAll(async () => {
  node = await startNode({ overrides: { 'num.partitions': 1, 'group.streams.heartbeat.interval.ms': 500, 'group.streams.min.heartbeat.interval.ms': 500 } });
  c = await WireClient.connect(node.port);
  await createTopic('words-in', 2);
}, 180_000);
afterAll(async () => {
  c?.close();
  await node?.destroy();
  if (node !== undefined) rmSync(node.dataDir, { recursive: true, force: true });
});

describe('streams group APIs', () => {
  it('advertises StreamsGroupHeartbeat/Describe v0-1 and finalizes streams.version 1', async () => {
    const res = decodeApiVersionsResponse(await c.call(18, 4, (w) => encodeApiVersionsRequest(w, { clientSoftwareName: 'wire-test', clientSoftwareVersion: '1.0' }, 4)), 4);
    const range = new Map(res.apiKeys.map((k) => [k.apiKey, `${k.minVersion}-${k.maxVersion}`]));
    expect([88, 89].map((k) => range.get(k))).toEqual(['0-1', '0-1']);
    expect(res.finalizedFeatures).toEqual(expect.arrayContaining([{ name: 'streams.version', minVersionLevel: 1, maxVersionLevel: 1 }]));
    expect(res.supportedFeatures).toEqual(expect.arrayContaining([{ name: 'streams.version', minVersion: 0, maxVersion: 1 }]));
  });

  it('refuses malformed heartbeats with INVALID_REQUEST, bad topologies with STREAMS_INVALID_TOPOLOGY, unknown groups and members', async () => {
    const g = 'sg-invalid';
    const ok = join(g, 'm1', 'p1', topology('words-in', 'inv'));
    expect(await hb({ ...ok, groupId: '' })).toMatchObject({ errorCode: ErrorCode.INVALID_REQUEST, errorMessage: "GroupId can't be empty." });
    expect(await hb({ ...ok, memberId: '' })).toMatchObject({ errorCode: ErrorCode.INVALID_REQUEST, errorMessage: "MemberId can't be empty." });
    expect(await hb({ ...ok, rebalanceTimeoutMs: -1 })).toMatchObject({ errorCode: ErrorCode.INVALID_REQUEST, errorMessage: 'RebalanceTimeoutMs must be provided in first request.' });
    expect(await hb({ ...ok, topology: null })).toMatchObject({ errorCode: ErrorCode.INVALID_REQUEST, errorMessage: 'Topology must be non-null when (re-)joining.' });
    expect(await hb({ ...ok, activeTasks: [{ subtopologyId: '0', partitions: [0] }] })).toMatchObject({ errorCode: ErrorCode.INVALID_REQUEST, errorMessage: 'ActiveTasks must be empty when (re-)joining.' });
    expect(await hb({ ...ok, processId: null })).toMatchObject({ errorCode: ErrorCode.INVALID_REQUEST });
    expect(await hb({ ...ok, memberEpoch: -3 })).toMatchObject({ errorCode: ErrorCode.INVALID_REQUEST });
    const dup = topology('words-in', 'inv')!;
    expect((await hb({ ...ok, topology: { epoch: 1, subtopologies: [dup.subtopologies![0]!, dup.subtopologies![0]!] } })).errorCode).toBe(ErrorCode.STREAMS_INVALID_TOPOLOGY);
    expect(await hb({ groupId: 'sg-none', memberId: 'm1', memberEpoch: 3 })).toMatchObject({ errorCode: ErrorCode.GROUP_ID_NOT_FOUND, memberEpoch: -1 });
    // A consumer group's id is not a streams group's, and the reverse.
    const cg = decodeConsumerGroupHeartbeatResponse(
      await c.call(68, 1, (w) => encodeConsumerGroupHeartbeatRequest(w, { groupId: 'sg-consumer', memberId: 'c1', memberEpoch: 0, rebalanceTimeoutMs: 30000, subscribedTopicNames: ['words-in'], topicPartitions: [] }, 1)),
      1,
    );
    expect(cg.errorCode).toBe(0);
    expect(await hb(join('sg-consumer', 'm1', 'p1', topology('words-in', 'x')))).toMatchObject({ errorCode: ErrorCode.GROUP_ID_NOT_FOUND, errorMessage: 'Group sg-consumer is not a streams group.' });
    const joined = await hb(ok);
    expect(joined).toMatchObject({ errorCode: 0, memberId: 'm1', memberEpoch: 1 });
    // The streams group's id is refused to the consumer protocol and to a classic join.
    const asConsumer = decodeConsumerGroupHeartbeatResponse(
      await c.call(68, 1, (w) => encodeConsumerGroupHeartbeatRequest(w, { groupId: g, memberId: 'c1', memberEpoch: 0, rebalanceTimeoutMs: 30000, subscribedTopicNames: ['words-in'], topicPartitions: [] }, 1)),
      1,
    );
    expect(asConsumer).toMatchObject({ errorCode: ErrorCode.GROUP_ID_NOT_FOUND, errorMessage: `Group ${g} is not a consumer group.` });
    const classicJoin = decodeJoinGroupResponse(
      await c.call(11, 9, (w) => encodeJoinGroupRequest(w, { groupId: g, sessionTimeoutMs: 10000, rebalanceTimeoutMs: 10000, memberId: '', groupInstanceId: null, protocolType: 'consumer', protocols: [{ name: 'range', metadata: Buffer.alloc(0) }], reason: null }, 9)),
      9,
    );
    expect(classicJoin.errorCode).toBe(ErrorCode.INCONSISTENT_GROUP_PROTOCOL);
    expect((await hb({ groupId: g, memberId: 'stranger', memberEpoch: 1 })).errorCode).toBe(ErrorCode.UNKNOWN_MEMBER_ID);
    expect((await hb({ groupId: g, memberId: 'm1', memberEpoch: 9 })).errorCode).toBe(ErrorCode.FENCED_MEMBER_EPOCH);
    // A newer topology while another member's is the group's: STREAMS_INVALID_TOPOLOGY_EPOCH.
    expect((await hb(join(g, 'm2', 'p2', topology('words-in', 'inv', 2)))).errorCode).toBe(ErrorCode.STREAMS_INVALID_TOPOLOGY_EPOCH);
    expect(await hb({ groupId: g, memberId: 'm1', memberEpoch: -1 })).toMatchObject({ errorCode: 0, memberEpoch: -1 });
    expect((await hb({ groupId: g, memberId: 'm1', memberEpoch: -1 })).errorCode).toBe(ErrorCode.UNKNOWN_MEMBER_ID);
  });

  it('answers MISSING_SOURCE_TOPICS, then creates the internal topics (MISSING_INTERNAL_TOPICS) with the topology configs, then assigns tasks', async () => {
    const g = 'sg-status';
    const first = await hb(join(g, 'm1', 'p1', topology('late-in', 'st')));
    expect(first).toMatchObject({ errorCode: 0, memberEpoch: 1, status: [{ statusCode: 1, statusDetail: 'Source topics late-in are missing.' }], activeTasks: [], standbyTasks: [], warmupTasks: [] });
    expect((await describeStreams([g]))[0]).toMatchObject({ groupState: 'NotReady' });
    await createTopic('late-in', 3);
    const second = await hb({ groupId: g, memberId: 'm1', memberEpoch: 1 });
    expect(second.status).toEqual([{ statusCode: 3, statusDetail: 'Internal topics are missing: [st-rp, st-store-changelog]' }]);
    await waitFor('st internal topics', async () => (await partitions('st-rp')) === 3 && (await partitions('st-store-changelog')) === 3, 10_000);
    expect(await topicConfig('st-store-changelog', 'cleanup.policy')).toBe('compact');
    expect(await topicConfig('st-rp', 'retention.ms')).toBe('-1');
    const ready = await hb({ groupId: g, memberId: 'm1', memberEpoch: second.memberEpoch });
    expect(ready.errorCode).toBe(0);
    expect(ready.status).toEqual([]);
    expect(tasks(ready.activeTasks)).toEqual(['0_0', '0_1', '0_2', '1_0', '1_1', '1_2']);
    expect((await describeStreams([g]))[0]).toMatchObject({ groupState: 'Stable', groupEpoch: ready.memberEpoch, assignmentEpoch: ready.memberEpoch });
    await hb({ groupId: g, memberId: 'm1', memberEpoch: -1 });
  });

  it('moves tasks to a new member only after the old owner revoked them; standbys go to another process', async () => {
    const g = 'sg-assign';
    const a = await hb(join(g, 'a', 'proc-a', topology('words-in', 'as')));
    // Internal topics: created by the node on the first heartbeats.
    await waitFor('as internal topics', async () => (await partitions('as-rp')) === 2 && (await partitions('as-store-changelog')) === 2, 10_000);
    let ra = await hb({ groupId: g, memberId: 'a', memberEpoch: a.memberEpoch });
    expect(tasks(ra.activeTasks)).toEqual(['0_0', '0_1', '1_0', '1_1']);
    const epochA = ra.memberEpoch;
    ra = await hb({ groupId: g, memberId: 'a', memberEpoch: epochA, activeTasks: ra.activeTasks, standbyTasks: [], warmupTasks: [] });
    expect(ra.activeTasks).toBeNull();

    // b joins: it gets nothing until a has given up its share.
    const b = await hb(join(g, 'b', 'proc-b', topology('words-in', 'as')));
    expect(b.errorCode).toBe(0);
    expect(tasks(b.activeTasks)).toEqual([]);
    const revoke = await hb({ groupId: g, memberId: 'a', memberEpoch: epochA, activeTasks: [{ subtopologyId: '0', partitions: [0, 1] }, { subtopologyId: '1', partitions: [0, 1] }], standbyTasks: [], warmupTasks: [] });
    // a keeps its epoch while it revokes half of its tasks.
    expect(revoke.memberEpoch).toBe(epochA);
    const kept = tasks(revoke.activeTasks)!;
    expect(kept).toHaveLength(2);
    expect((await describeStreams([g]))[0]!.groupState).toBe('Reconciling');
    const bWaiting = await hb({ groupId: g, memberId: 'b', memberEpoch: b.memberEpoch, activeTasks: [], standbyTasks: [], warmupTasks: [] });
    expect(tasks(bWaiting.activeTasks ?? [])).toEqual([]);
    // a confirms: it moves to the new epoch; b then receives the released tasks.
    const done = await hb({ groupId: g, memberId: 'a', memberEpoch: epochA, activeTasks: revoke.activeTasks, standbyTasks: [], warmupTasks: [] });
    expect(done.memberEpoch).toBe(b.memberEpoch);
    const bGets = await hb({ groupId: g, memberId: 'b', memberEpoch: b.memberEpoch, activeTasks: [], standbyTasks: [], warmupTasks: [] });
    const all = [...kept, ...tasks(bGets.activeTasks)!].sort();
    expect(all).toEqual(['0_0', '0_1', '1_0', '1_1']);
    expect((await describeStreams([g]))[0]).toMatchObject({ groupState: 'Stable' });

    // OffsetCommit is validated by member epoch.
    const commit = async (memberId: string, epoch: number) =>
      decodeOffsetCommitResponse(
        await c.call(8, 9, (w) =>
          encodeOffsetCommitRequest(w, { groupId: g, generationIdOrMemberEpoch: epoch, memberId, groupInstanceId: null, topics: [{ name: 'words-in', partitions: [{ partitionIndex: 0, committedOffset: 5n, committedLeaderEpoch: -1, committedMetadata: '' }] }] }, 9),
        ),
        9,
      ).topics[0]!.partitions[0]!.errorCode;
    expect(await commit('b', bGets.memberEpoch)).toBe(0);
    expect(await commit('b', bGets.memberEpoch + 5)).toBe(ErrorCode.STALE_MEMBER_EPOCH);
    expect(await commit('ghost', bGets.memberEpoch)).toBe(ErrorCode.UNKNOWN_MEMBER_ID);

    // ListGroups with the streams type, DescribeGroups (not a classic group), DeleteGroups refused while members remain.
    const listed = decodeListGroupsResponse(await c.call(16, 5, (w) => encodeListGroupsRequest(w, { statesFilter: [], typesFilter: ['streams'] }, 5)), 5).groups;
    expect(listed.find((x) => x.groupId === g)).toEqual({ groupId: g, protocolType: 'streams', groupState: 'Stable', groupType: 'streams' });
    const dg = decodeDescribeGroupsResponse(await c.call(15, 6, (w) => encodeDescribeGroupsRequest(w, { groups: [g], includeAuthorizedOperations: false }, 6)), 6).groups[0]!;
    expect(dg).toMatchObject({ errorCode: ErrorCode.GROUP_ID_NOT_FOUND, errorMessage: `Group ${g} is not a classic group.`, groupState: 'Dead' });
    const del = async () => decodeDeleteGroupsResponse(await c.call(42, 2, (w) => encodeDeleteGroupsRequest(w, { groupsNames: [g] }, 2)), 2).results[0]!.errorCode;
    expect(await del()).toBe(ErrorCode.NON_EMPTY_GROUP);

    // The group is on the log: a restart brings it back with its members and epochs.
    node = await node.restart();
    c.close();
    c = await WireClient.connect(node.port);
    const back = (await describeStreams([g]))[0]!;
    expect(back).toMatchObject({ errorCode: 0, groupState: 'Stable', groupEpoch: bGets.memberEpoch });
    expect(back.members.map((m) => [m.memberId, m.processId]).sort()).toEqual([['a', 'proc-a'], ['b', 'proc-b']]);
    expect(back.topology?.subtopologies?.map((s) => s.subtopologyId)).toEqual(['0', '1']);

    // Leaving: b's tasks go back to a; the empty group can then be deleted.
    expect((await hb({ groupId: g, memberId: 'b', memberEpoch: -1 })).errorCode).toBe(0);
    const aAll = await hb({ groupId: g, memberId: 'a', memberEpoch: done.memberEpoch, activeTasks: revoke.activeTasks, standbyTasks: [], warmupTasks: [] });
    expect(tasks(aAll.activeTasks)).toEqual(['0_0', '0_1', '1_0', '1_1']);
    expect((await hb({ groupId: g, memberId: 'a', memberEpoch: -1 })).errorCode).toBe(0);
    expect(await del()).toBe(0);
    expect((await describeStreams([g]))[0]).toMatchObject({ errorCode: ErrorCode.GROUP_ID_NOT_FOUND, errorMessage: `Group ${g} not found.` });
  }, 60_000);

  it('takes over the id of an empty classic group that only holds offsets, keeping them', async () => {
    const g = 'sg-offsets-first';
    const simple = decodeOffsetCommitResponse(
      await c.call(8, 9, (w) =>
        encodeOffsetCommitRequest(w, { groupId: g, generationIdOrMemberEpoch: -1, memberId: '', groupInstanceId: null, topics: [{ name: 'words-in', partitions: [{ partitionIndex: 1, committedOffset: 3n, committedLeaderEpoch: -1, committedMetadata: '' }] }] }, 9),
      ),
      9,
    );
    expect(simple.topics[0]!.partitions[0]!.errorCode).toBe(0);
    expect((await hb(join(g, 'm1', 'p1', topology('words-in', 'of')))).errorCode).toBe(0);
    const listed = decodeListGroupsResponse(await c.call(16, 5, (w) => encodeListGroupsRequest(w, { statesFilter: [], typesFilter: [] }, 5)), 5).groups.filter((x) => x.groupId === g);
    expect(listed.map((x) => x.groupType)).toEqual(['streams']);
    expect((await hb({ groupId: g, memberId: 'm1', memberEpoch: -1 })).errorCode).toBe(0);
  });

  it('tells members the partitions behind each user endpoint, and every member a requested application shutdown', async () => {
    const g = 'sg-endpoints';
    const topo = { epoch: 1, subtopologies: [{ subtopologyId: '0', sourceTopics: ['words-in'], sourceTopicRegex: [], stateChangelogTopics: [], repartitionSinkTopics: [], repartitionSourceTopics: [], copartitionGroups: [] }] };
    const e = await hb({ ...join(g, 'e1', 'pe', topo), userEndpoint: { host: 'app-1.local', port: 8080 } });
    expect(e.errorCode).toBe(0);
    expect(e.endpointInformationEpoch).toBeGreaterThan(0);
    expect(e.partitionsByUserEndpoint).toEqual([{ userEndpoint: { host: 'app-1.local', port: 8080 }, activePartitions: [{ topic: 'words-in', partitions: [0, 1] }], standbyPartitions: [] }]);
    // Up to date: not resent.
    const again = await hb({ groupId: g, memberId: 'e1', memberEpoch: e.memberEpoch, endpointInformationEpoch: e.endpointInformationEpoch });
    expect(again.partitionsByUserEndpoint).toBeNull();
    const f = await hb(join(g, 'f1', 'pf', topo));
    expect(f.status).toEqual([]);
    const asked = await hb({ groupId: g, memberId: 'e1', memberEpoch: e.memberEpoch, shutdownApplication: true });
    expect(asked.status?.map((x) => x.statusCode)).toEqual([4]);
    const told = await hb({ groupId: g, memberId: 'f1', memberEpoch: f.memberEpoch });
    expect(told.status?.map((x) => x.statusCode)).toEqual([4]);
    for (const m of ['e1', 'f1']) await hb({ groupId: g, memberId: m, memberEpoch: -1 });
  });

  it('assigns streams.num.standby.replicas standbys on other processes', async () => {
    const g = 'sg-standby';
    // IncrementalAlterConfigs on the GROUP resource sets the group's standby count.
    const { encodeIncrementalAlterConfigsRequest } = await import('../../src/protocol/generated/messages/incremental-alter-configs-request.js');
    const { decodeIncrementalAlterConfigsResponse } = await import('../../src/protocol/generated/messages/incremental-alter-configs-response.js');
    const alter = decodeIncrementalAlterConfigsResponse(
      await c.call(44, 1, (w) => encodeIncrementalAlterConfigsRequest(w, { resources: [{ resourceType: 32, resourceName: g, configs: [{ name: 'streams.num.standby.replicas', configOperation: 0, value: '1' }] }], validateOnly: false }, 1)),
      1,
    );
    expect(alter.responses[0]!.errorCode).toBe(0);
    const topo = topology('words-in', 'sb');
    const x = await hb(join(g, 'x', 'px', topo));
    const y = await hb(join(g, 'y', 'py', topo));
    await waitFor('sb internal topics', async () => (await partitions('sb-rp')) === 2 && (await partitions('sb-store-changelog')) === 2, 10_000);
    const rx = await hb({ groupId: g, memberId: 'x', memberEpoch: x.memberEpoch, activeTasks: [], standbyTasks: [], warmupTasks: [] });
    const ry = await hb({ groupId: g, memberId: 'y', memberEpoch: y.memberEpoch, activeTasks: [], standbyTasks: [], warmupTasks: [] });
    await hb({ groupId: g, memberId: 'x', memberEpoch: rx.memberEpoch, activeTasks: rx.activeTasks ?? [], standbyTasks: rx.standbyTasks ?? [], warmupTasks: [] });
    await hb({ groupId: g, memberId: 'y', memberEpoch: ry.memberEpoch, activeTasks: ry.activeTasks ?? [], standbyTasks: ry.standbyTasks ?? [], warmupTasks: [] });
    const d = (await describeStreams([g]))[0]!;
    expect(d.groupState).toBe('Stable');
    const byId = new Map(d.members.map((m) => [m.memberId, m.assignment]));
    const ax = tasks(byId.get('x')!.activeTasks)!;
    const ay = tasks(byId.get('y')!.activeTasks)!;
    expect([...ax, ...ay].sort()).toEqual(['0_0', '0_1', '1_0', '1_1']);
    // Each member stands by for exactly the tasks the other runs.
    expect(tasks(byId.get('x')!.standbyTasks)).toEqual(ay);
    expect(tasks(byId.get('y')!.standbyTasks)).toEqual(ax);
    for (const m of ['x', 'y']) await hb({ groupId: g, memberId: m, memberEpoch: -1 });
  });
});
