import { afterEach, describe, expect, it } from 'vitest';
import { GroupCoordinator } from '../../src/coordinator/group-coordinator.js';
import type { CommitRequest, GroupShard } from '../../src/coordinator/group-shard.js';
import type { StreamsHeartbeatRequest, StreamsHeartbeatResult } from '../../src/coordinator/streams-group-ops.js';
import type { StreamsTasks } from '../../src/coordinator/streams-group.js';
import { ErrorCode } from '../../src/protocol/generated/errors.js';
import { consumerHeartbeat, testHost } from './harness.js';
import { TempLogs } from './logs.js';

/**
 * The persisted part of a group shard is the replay of the records its writes emitted: after a
 * run of real operations the live shard and a fresh one that replays the same __consumer_offsets
 * partitions from the start dump to the same canonical state, and an operation that emits no
 * record leaves that state unchanged. Only what the records carry is compared: a classic
 * group's rebalance phase, waiters and timers are in memory only, as in Kafka's ClassicGroup.
 */

const temps: TempLogs[] = [];
afterEach(async () => {
  for (const t of temps.splice(0)) await t.destroy();
});

const CFG = { 'offsets.topic.num.partitions': '3', 'group.initial.rebalance.delay.ms': '0', 'group.consumer.session.timeout.ms': '45000' };
const DATA = { orders: 6, audit: 2 };

const sortedEntries = <K, V, R>(m: ReadonlyMap<K, V>, f: (v: V) => R): [string, R][] =>
  [...m].map(([k, v]): [string, R] => [String(k), f(v)]).sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
const assignment = (a: ReadonlyMap<string, readonly number[]>) => sortedEntries(a, (p) => [...p].sort((x, y) => x - y));

/** What the records of a shard carry, in a canonical order. */
function persisted(s: GroupShard) {
  return {
    offsets: sortedEntries(s.offsets, (byTopic) => sortedEntries(byTopic, (parts) => sortedEntries(parts, (v) => ({ ...v })))),
    pendingTxnOffsets: sortedEntries(s.pendingTxnOffsets, (byGroup) => sortedEntries(byGroup, (parts) => sortedEntries(parts, (v) => ({ ...v })))),
    classic: sortedEntries(s.classic, (g) => ({
      generationId: g.generationId,
      protocolType: g.protocolType,
      protocolName: g.members.size > 0 ? g.protocolName : null,
      leaderId: g.members.size > 0 ? g.leaderId : null,
      members: sortedEntries(g.members, (m) => ({
        groupInstanceId: m.groupInstanceId,
        clientId: m.clientId,
        clientHost: m.clientHost,
        rebalanceTimeoutMs: m.rebalanceTimeoutMs,
        sessionTimeoutMs: m.sessionTimeoutMs,
        subscription: g.metadataFor(m, g.protocolName).toString('hex'),
        assignment: m.assignment.toString('hex'),
      })),
    })),
    consumer: sortedEntries(s.consumer, (g) => ({
      groupEpoch: g.groupEpoch,
      assignmentEpoch: g.assignmentEpoch,
      metadataHash: g.metadataHash.toString(),
      target: sortedEntries(g.target, assignment),
      staticMembers: sortedEntries(g.staticMembers, (id) => id),
      members: sortedEntries(g.members, (m) => ({ ...m, assigned: assignment(m.assigned), revoking: assignment(m.revoking) })),
    })),
    streams: sortedEntries(s.streams, (g) => ({
      groupEpoch: g.groupEpoch,
      assignmentEpoch: g.assignmentEpoch,
      metadataHash: g.metadataHash.toString(),
      validatedTopologyEpoch: g.validatedTopologyEpoch,
      topology: JSON.stringify(g.topology),
      lastAssignmentConfigs: g.lastAssignmentConfigs,
      target: sortedEntries(g.target, tasksDump),
      members: sortedEntries(g.members, (m) => ({ ...m, assigned: tasksDump(m.assigned), revoking: tasksDump(m.revoking) })),
    })),
  };
}

const tasksDump = (t: StreamsTasks) => ({ active: assignment(t.active), standby: assignment(t.standby), warmup: assignment(t.warmup) });

function dumpAll(gc: GroupCoordinator) {
  return sortedEntries(gc.runtime.loadedShards(), persisted).filter(([, d]) => d.offsets.length + d.pendingTxnOffsets.length + d.classic.length + d.consumer.length + d.streams.length > 0);
}

function commit(groupId: string, topic: string, partition: number, offset: number, over: Partial<CommitRequest> = {}): CommitRequest {
  return { groupId, generationIdOrMemberEpoch: -1, memberId: '', groupInstanceId: null, topics: [{ name: topic, partitions: [{ partitionIndex: partition, committedOffset: BigInt(offset), committedLeaderEpoch: 2, committedMetadata: 'm' }] }], ...over };
}

const hb = consumerHeartbeat;

const join = (groupId: string, memberId: string, protocols: string[]) => ({
  groupId,
  sessionTimeoutMs: 10000,
  rebalanceTimeoutMs: 10000,
  memberId,
  groupInstanceId: null,
  protocolType: 'consumer',
  protocols: protocols.map((name) => ({ name, metadata: Buffer.from(`sub-${name}`) })),
  clientId: 'c',
  clientHost: '/127.0.0.1',
  requireKnownMemberId: false,
});

async function start(t: TempLogs, existing: Record<string, number> = {}) {
  return GroupCoordinator.start(testHost(t.openLog, CFG, existing, DATA));
}

describe('group shard state is the replay of its records', () => {
  it('a live shard after classic, KIP-848, offset and transactional writes equals a fresh replay of its log', async () => {
    const t = new TempLogs();
    temps.push(t);
    const gc = await start(t);
    // A classic group: one member joins and syncs, commits, a second member joins and both sync.
    const j1 = await gc.join(join('classic', '', ['range', 'roundrobin']));
    await gc.sync({ groupId: 'classic', generationId: j1.generationId, memberId: j1.memberId, groupInstanceId: null, protocolType: null, protocolName: null, assignments: [{ memberId: j1.memberId, assignment: Buffer.from('a1') }] });
    expect((await gc.commitOffsets(commit('classic', 'orders', 0, 5, { generationIdOrMemberEpoch: j1.generationId, memberId: j1.memberId })))[0]!.partitions[0]!.errorCode).toBe(ErrorCode.NONE);
    // A second member joins: both rejoin, the leader's assignment is synced for both.
    const joining = gc.join(join('classic', '', ['roundrobin']));
    const [j2, j1b] = await Promise.all([joining, gc.join(join('classic', j1.memberId, ['range', 'roundrobin']))]);
    expect([j2.errorCode, j1b.errorCode, j1b.generationId]).toEqual([ErrorCode.NONE, ErrorCode.NONE, j1.generationId + 1]);
    const leader = j1b.leader === j1.memberId ? j1b : j2;
    const syncs = [j1b, j2].map((j) =>
      gc.sync({ groupId: 'classic', generationId: j.generationId, memberId: j.memberId, groupInstanceId: null, protocolType: null, protocolName: null, assignments: j === leader ? [{ memberId: j1.memberId, assignment: Buffer.from('a1') }, { memberId: j2.memberId, assignment: Buffer.from('a2') }] : [] }),
    );
    expect((await Promise.all(syncs)).map((r) => [r.errorCode, r.protocolName, r.assignment.toString()])).toEqual([[0, 'roundrobin', 'a1'], [0, 'roundrobin', 'a2']]);
    // A KIP-848 group: two members join, reconcile, one leaves.
    const a0 = await gc.consumerHeartbeat(hb('kip848', 'member-a', 0));
    const b0 = await gc.consumerHeartbeat(hb('kip848', 'member-b', 0, { subscribedTopicNames: ['orders', 'audit'] }));
    expect([a0.errorCode, b0.errorCode]).toEqual([ErrorCode.NONE, ErrorCode.NONE]);
    const a1 = await gc.consumerHeartbeat(hb('kip848', 'member-a', a0.memberEpoch, { topicPartitions: [...(a0.assignment ?? new Map())].map(([topicId, partitions]) => ({ topicId, partitions })) }));
    expect(a1.errorCode).toBe(ErrorCode.NONE);
    expect((await gc.commitOffsets(commit('kip848', 'orders', 1, 9, { generationIdOrMemberEpoch: a1.memberEpoch, memberId: 'member-a' })))[0]!.partitions[0]!.errorCode).toBe(ErrorCode.NONE);
    expect((await gc.consumerHeartbeat(hb('kip848', 'member-b', -1))).errorCode).toBe(ErrorCode.NONE);
    // Static KIP-848 members: one owns everything, a second joins (the first must revoke, and is
    // left mid-revocation), the first leaves with -2 and its instance returns as a new member.
    const owned = (r: { assignment: ReadonlyMap<string, number[]> | null }) => [...(r.assignment ?? new Map<string, number[]>())].map(([topicId, partitions]) => ({ topicId, partitions }));
    const s1 = await gc.consumerHeartbeat(hb('static848', 's1', 0, { instanceId: 'i1' }));
    const s1b = await gc.consumerHeartbeat(hb('static848', 's1', s1.memberEpoch, { topicPartitions: owned(s1) }));
    const s2 = await gc.consumerHeartbeat(hb('static848', 's2', 0, { instanceId: 'i2', serverAssignor: 'range' }));
    const s1c = await gc.consumerHeartbeat(hb('static848', 's1', s1b.memberEpoch, { topicPartitions: owned(s1b) }));
    expect([s1.errorCode, s1b.errorCode, s2.errorCode, s1c.errorCode]).toEqual([0, 0, 0, 0]);
    const revokingLive = dumpAll(gc);
    expect((await gc.consumerHeartbeat(hb('static848', 's1', -2, { instanceId: 'i1' }))).errorCode).toBe(ErrorCode.NONE);
    const back = await gc.consumerHeartbeat(hb('static848', 's1-again', 0, { instanceId: 'i1' }));
    expect(back.errorCode).toBe(ErrorCode.NONE);
    expect(revokingLive).not.toEqual(dumpAll(gc));
    // Simple-consumer offsets, a deletion, an offset delete and a committed and an aborted transaction.
    await gc.commitOffsets(commit('simple', 'audit', 0, 3));
    await gc.commitOffsets(commit('simple', 'audit', 1, 4));
    await gc.deleteOffsets('simple', [{ name: 'audit', partitions: [1] }]);
    await gc.commitOffsets(commit('gone', 'orders', 2, 1));
    expect((await gc.deleteGroups(['gone']))[0]!.errorCode).toBe(ErrorCode.NONE);
    await gc.txnCommitOffsets({ ...commit('txn', 'orders', 3, 30), producerId: 900, producerEpoch: 0 });
    expect(await gc.completeTransaction(gc.partitionFor('txn'), 900, 0, true)).toBe(ErrorCode.NONE);
    await gc.txnCommitOffsets({ ...commit('txn', 'orders', 4, 40), producerId: 901, producerEpoch: 0 });
    expect(await gc.completeTransaction(gc.partitionFor('txn'), 901, 0, false)).toBe(ErrorCode.NONE);
    await gc.txnCommitOffsets({ ...commit('open-txn', 'orders', 5, 50), producerId: 902, producerEpoch: 0 });

    const live = dumpAll(gc);
    await gc.close();
    await t.closeAll();
    const fresh = await start(t, { __consumer_offsets: 3 });
    expect(dumpAll(fresh)).toEqual(live);
    // The groups are there with what the operations wrote.
    expect(live.length).toBeGreaterThan(0);
    expect((await fresh.fetchOffsets('txn', null)).topics).toEqual([{ name: 'orders', partitions: [{ partitionIndex: 3, committedOffset: 30n, committedLeaderEpoch: 2, metadata: 'm', errorCode: ErrorCode.NONE }] }]);
    expect((await fresh.listGroups()).map((g) => g.groupId).sort()).toEqual(['classic', 'kip848', 'open-txn', 'simple', 'static848', 'txn']);
    // The classic group comes back with both members of its last snapshot, not its first.
    const classic = await fresh.describeGroup('classic');
    expect([classic.groupState, classic.protocolData, classic.members.map((m) => m.memberAssignment.toString()).sort()]).toEqual(['Stable', 'roundrobin', ['a1', 'a2']]);
    const described = await fresh.describeConsumerGroup('static848');
    expect(described.description?.members.map((m) => [m.memberId, m.instanceId]).sort()).toEqual([['s1-again', 'i1'], ['s2', 'i2']]);
    await fresh.close();
  });

  it('a live shard after streams group joins, revocations, commits and leaves equals a fresh replay of its log', async () => {
    const t = new TempLogs();
    temps.push(t);
    const gc = await start(t);
    const topology = {
      epoch: 1,
      subtopologies: ['orders', 'audit'].map((topic, i) => ({ subtopologyId: String(i), sourceTopics: [topic], sourceTopicRegex: [], stateChangelogTopics: [], repartitionSinkTopics: [], repartitionSourceTopics: [], copartitionGroups: [] })),
    };
    const wire = (r: StreamsHeartbeatResult, k: keyof StreamsTasks) => [...(r.tasks?.[k] ?? new Map<string, number[]>())].map(([subtopologyId, partitions]) => ({ subtopologyId, partitions }));
    const shb = (memberId: string, memberEpoch: number, over: Partial<StreamsHeartbeatRequest> = {}): StreamsHeartbeatRequest => ({
      groupId: 'app',
      memberId,
      memberEpoch,
      endpointInformationEpoch: 0,
      instanceId: null,
      rackId: null,
      rebalanceTimeoutMs: memberEpoch === 0 ? 30000 : -1,
      topology: memberEpoch === 0 ? topology : null,
      activeTasks: memberEpoch === 0 ? [] : null,
      standbyTasks: memberEpoch === 0 ? [] : null,
      warmupTasks: memberEpoch === 0 ? [] : null,
      processId: `process-${memberId}`,
      userEndpoint: memberId === 'a' ? { host: 'a.local', port: 7070 } : null,
      clientTags: [{ key: 'zone', value: memberId }],
      taskOffsets: null,
      taskEndOffsets: null,
      shutdownApplication: false,
      clientId: `client-${memberId}`,
      clientHost: '/127.0.0.1',
      version: 1,
      ...over,
    });
    const a0 = await gc.streamsHeartbeat(shb('a', 0));
    expect([a0.errorCode, wire(a0, 'active').flatMap((x) => x.partitions).length]).toEqual([ErrorCode.NONE, 8]);
    const a1 = await gc.streamsHeartbeat(shb('a', a0.memberEpoch, { activeTasks: wire(a0, 'active'), standbyTasks: [], warmupTasks: [] }));
    const b0 = await gc.streamsHeartbeat(shb('b', 0));
    expect(b0.errorCode).toBe(ErrorCode.NONE);
    // a is asked to revoke half of its tasks and is left mid-revocation.
    const a2 = await gc.streamsHeartbeat(shb('a', a1.memberEpoch, { activeTasks: wire(a0, 'active'), standbyTasks: [], warmupTasks: [] }));
    expect(a2.memberEpoch).toBe(a1.memberEpoch);
    const revokingLive = dumpAll(gc);
    const a3 = await gc.streamsHeartbeat(shb('a', a2.memberEpoch, { activeTasks: wire(a2, 'active'), standbyTasks: [], warmupTasks: [] }));
    expect(a3.memberEpoch).toBe(b0.memberEpoch);
    const b1 = await gc.streamsHeartbeat(shb('b', b0.memberEpoch, { activeTasks: [], standbyTasks: [], warmupTasks: [] }));
    expect(wire(b1, 'active').flatMap((x) => x.partitions)).toHaveLength(4);
    expect((await gc.commitOffsets(commit('app', 'orders', 1, 7, { generationIdOrMemberEpoch: b1.memberEpoch, memberId: 'b' })))[0]!.partitions[0]!.errorCode).toBe(ErrorCode.NONE);
    expect(revokingLive).not.toEqual(dumpAll(gc));
    // A third member joins and leaves; an emptied second group is deleted.
    expect((await gc.streamsHeartbeat(shb('c', 0))).errorCode).toBe(ErrorCode.NONE);
    expect((await gc.streamsHeartbeat(shb('c', -1))).errorCode).toBe(ErrorCode.NONE);
    expect((await gc.streamsHeartbeat(shb('d', 0, { groupId: 'gone' }))).errorCode).toBe(ErrorCode.NONE);
    expect((await gc.streamsHeartbeat(shb('d', -1, { groupId: 'gone' }))).errorCode).toBe(ErrorCode.NONE);
    expect((await gc.deleteGroups(['gone']))[0]!.errorCode).toBe(ErrorCode.NONE);

    const live = dumpAll(gc);
    await gc.close();
    await t.closeAll();
    const fresh = await start(t, { __consumer_offsets: 3 });
    expect(dumpAll(fresh)).toEqual(live);
    // c's leave bumped the group epoch; the target follows on the next member's heartbeat.
    expect((await fresh.listGroups([], ['streams'])).map((g) => [g.groupId, g.groupState])).toEqual([['app', 'Assigning']]);
    const d = await fresh.describeStreamsGroup('app');
    expect(d?.members.map((m) => [m.memberId, m.processId, m.userEndpoint?.port ?? null]).sort()).toEqual([['a', 'process-a', 7070], ['b', 'process-b', null]]);
    await fresh.close();
  });

  it('an operation that emits no record changes no persisted state', async () => {
    const t = new TempLogs();
    temps.push(t);
    const gc = await start(t);
    await gc.commitOffsets(commit('g', 'orders', 0, 1));
    const before = dumpAll(gc);
    const shard = await t.raw('__consumer_offsets', gc.partitionFor('nobody'));
    const leo = shard.logEndOffset;
    // Refused commits (to a group that does not exist and to one that does), an unknown member's
    // heartbeat, deleting an unknown group and offsets nobody committed.
    const big = commit('nobody', 'orders', 0, 1, {});
    const tooLarge = { ...big, topics: [{ name: 'orders', partitions: [{ partitionIndex: 0, committedOffset: 1n, committedLeaderEpoch: -1, committedMetadata: 'x'.repeat(5000) }] }] };
    expect((await gc.commitOffsets(tooLarge))[0]!.partitions[0]!.errorCode).toBe(ErrorCode.OFFSET_METADATA_TOO_LARGE);
    expect((await gc.txnCommitOffsets({ ...tooLarge, producerId: 5, producerEpoch: 0 }))[0]!.partitions[0]!.errorCode).toBe(ErrorCode.OFFSET_METADATA_TOO_LARGE);
    expect((await gc.commitOffsets(commit('g', 'orders', 0, 2, { generationIdOrMemberEpoch: 4, memberId: 'm' })))[0]!.partitions[0]!.errorCode).toBe(ErrorCode.UNKNOWN_MEMBER_ID);
    expect((await gc.consumerHeartbeat(hb('nobody', 'ghost', 3))).errorCode).toBe(ErrorCode.UNKNOWN_MEMBER_ID);
    expect((await gc.deleteGroups(['never']))[0]!.errorCode).toBe(ErrorCode.GROUP_ID_NOT_FOUND);
    expect((await gc.deleteOffsets('g', [{ name: 'audit', partitions: [0] }])).errorCode).toBe(ErrorCode.NONE);
    expect(dumpAll(gc)).toEqual(before);
    expect((await gc.listGroups()).map((g) => g.groupId)).toEqual(['g']);
    expect((await t.raw('__consumer_offsets', gc.partitionFor('nobody'))).logEndOffset).toBe(leo);
    await gc.close();
  });
});
