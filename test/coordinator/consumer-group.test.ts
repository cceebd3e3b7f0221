import { afterEach, describe, expect, it } from 'vitest';
import { GroupCoordinator } from '../../src/coordinator/group-coordinator.js';
import { ErrorCode } from '../../src/protocol/generated/errors.js';
import { rangeAssignor, uniformAssignor } from '../../src/coordinator/assignors.js';
import type { ConsumerHeartbeatRequest, ConsumerHeartbeatResult } from '../../src/coordinator/consumer-ops.js';
import { consumerHeartbeat, testHost } from './harness.js';
import { TempLogs } from './logs.js';

const temps: TempLogs[] = [];
afterEach(async () => {
  for (const t of temps.splice(0)) await t.destroy();
});

const CFG = { 'offsets.topic.num.partitions': '2', 'group.consumer.session.timeout.ms': '45000', 'group.consumer.heartbeat.interval.ms': '5000' };
const T1 = '00000000-0000-0000-0000-000000000001';
const T2 = '00000000-0000-0000-0000-000000000002';

async function setup(open?: TempLogs) {
  const t = open ?? new TempLogs();
  if (!open) temps.push(t);
  const host = testHost(t.openLog, CFG, {}, { orders: 6, audit: 2 });
  const gc = await GroupCoordinator.start(host);
  return { t, host, gc };
}

const hb = (memberId: string, memberEpoch: number, over: Partial<ConsumerHeartbeatRequest> = {}): ConsumerHeartbeatRequest => consumerHeartbeat('cg', memberId, memberEpoch, over);

const parts = (r: ConsumerHeartbeatResult, topic = T1): number[] => r.assignment?.get(topic) ?? [];
const owned = (r: ConsumerHeartbeatResult) => [...(r.assignment ?? new Map())].map(([topicId, partitions]) => ({ topicId, partitions }));

describe('server-side assignors', () => {
  const members = (ids: string[], topics: string[]) => ids.map((memberId) => ({ memberId, topics: new Set(topics), previous: new Map() }));
  it('uniform spreads partitions evenly and keeps previous owners', () => {
    const a = uniformAssignor(members(['a', 'b', 'c'], [T1, T2]), new Map([[T1, 6], [T2, 2]]));
    const sizes = [...a.values()].map((x) => [...x.values()].reduce((n, p) => n + p.length, 0));
    expect(sizes.sort()).toEqual([2, 3, 3]);
    const prev = a.get('a')!;
    const again = uniformAssignor([{ memberId: 'a', topics: new Set([T1, T2]), previous: prev }, ...members(['b', 'c', 'd'], [T1, T2])], new Map([[T1, 6], [T2, 2]]));
    expect([...again.get('a')!.values()].flat().length).toBe(2);
    for (const [t, ps] of again.get('a')!) for (const p of ps) expect(prev.get(t)).toContain(p);
  });
  it('range gives contiguous ranges per topic', () => {
    const a = rangeAssignor(members(['b', 'a'], [T1]), new Map([[T1, 5]]));
    expect(a.get('a')!.get(T1)).toEqual([0, 1, 2]);
    expect(a.get('b')!.get(T1)).toEqual([3, 4]);
  });
});

describe('KIP-848 consumer group', () => {
  it('assigns on join, revokes before moving partitions, and bumps epochs', async () => {
    const { gc } = await setup();
    const a1 = await gc.consumerHeartbeat(hb('A', 0));
    expect(a1.errorCode).toBe(0);
    expect(a1.memberEpoch).toBe(1);
    expect(parts(a1)).toEqual([0, 1, 2, 3, 4, 5]);
    expect(a1.heartbeatIntervalMs).toBe(5000);

    const b1 = await gc.consumerHeartbeat(hb('B', 0));
    expect(b1.memberEpoch).toBe(2);
    expect(parts(b1)).toEqual([]); // A still owns everything
    const a2 = await gc.consumerHeartbeat(hb('A', 1));
    expect(a2.memberEpoch).toBe(1); // must revoke first, epoch unchanged
    expect(parts(a2).length).toBe(3);
    const a3 = await gc.consumerHeartbeat(hb('A', 1, { topicPartitions: owned(a2) }));
    expect(a3.memberEpoch).toBe(2);
    expect(a3.assignment).toBeNull(); // unchanged: not resent (a client would reconcile it again)
    const b2 = await gc.consumerHeartbeat(hb('B', 2));
    expect(parts(b2).length).toBe(3);
    expect([...parts(a2), ...parts(b2)].sort()).toEqual([0, 1, 2, 3, 4, 5]);
    // A full request (all fields, e.g. after an error) gets the assignment again.
    const full = await gc.consumerHeartbeat(hb('A', 2, { rebalanceTimeoutMs: 30000, subscribedTopicNames: ['orders'], topicPartitions: owned(a2) }));
    expect(parts(full)).toEqual(parts(a2));
    const d = await gc.describeConsumerGroup('cg');
    expect(d.description!.groupState).toBe('Stable');
    expect(d.description!.groupEpoch).toBe(2);
    // A stale epoch is fenced; a leave releases the partitions.
    expect((await gc.consumerHeartbeat(hb('B', 1))).errorCode).toBe(ErrorCode.FENCED_MEMBER_EPOCH);
    const left = await gc.consumerHeartbeat(hb('A', -1));
    expect(left.memberEpoch).toBe(-1);
    const b3 = await gc.consumerHeartbeat(hb('B', 2));
    expect(b3.memberEpoch).toBe(3);
    expect(parts(b3)).toEqual([0, 1, 2, 3, 4, 5]);
    await gc.close();
  });

  it('expires a member after the session timeout and validates offset commits by member epoch', async () => {
    const { host, gc } = await setup();
    await gc.consumerHeartbeat(hb('A', 0));
    const b = await gc.consumerHeartbeat(hb('B', 0));
    const commit = (memberId: string, epoch: number) =>
      gc.commitOffsets({ groupId: 'cg', generationIdOrMemberEpoch: epoch, memberId, groupInstanceId: null, topics: [{ name: 'orders', partitions: [{ partitionIndex: 0, committedOffset: 5n, committedLeaderEpoch: -1, committedMetadata: null }] }] });
    expect((await commit('B', b.memberEpoch))[0]!.partitions[0]!.errorCode).toBe(0);
    expect((await commit('B', 99))[0]!.partitions[0]!.errorCode).toBe(ErrorCode.STALE_MEMBER_EPOCH);
    expect((await commit('Z', 1))[0]!.partitions[0]!.errorCode).toBe(ErrorCode.UNKNOWN_MEMBER_ID);
    for (let i = 0; i < 10; i++) {
      await host.manual.advance(5000);
      await gc.consumerHeartbeat(hb('B', (await gc.describeConsumerGroup('cg')).description!.members.find((m) => m.memberId === 'B')!.memberEpoch));
    }
    await gc.runtime.idle();
    const d = (await gc.describeConsumerGroup('cg')).description!;
    expect(d.members.map((m) => m.memberId)).toEqual(['B']);
    expect(d.members[0]!.assignment[0]!.partitions).toEqual([0, 1, 2, 3, 4, 5]);
    expect(d.members[0]!.assignment[0]!.topicName).toBe('orders');
    await gc.close();
  });

  it('rejects unknown assignors and unknown members; restores the group by replay', async () => {
    const { t, gc } = await setup();
    expect((await gc.consumerHeartbeat(hb('A', 0, { serverAssignor: 'sticky' }))).errorCode).toBe(ErrorCode.UNSUPPORTED_ASSIGNOR);
    expect((await gc.consumerHeartbeat(hb('A', 3))).errorCode).toBe(ErrorCode.UNKNOWN_MEMBER_ID);
    await gc.consumerHeartbeat(hb('A', 0, { serverAssignor: 'range', subscribedTopicNames: ['orders', 'audit'] }));
    await gc.consumerHeartbeat(hb('B', 0, { serverAssignor: 'range', subscribedTopicNames: ['orders', 'audit'] }));
    const live = (await gc.describeConsumerGroup('cg')).description;
    expect(live!.assignorName).toBe('range');
    await gc.close();
    await t.closeAll();
    const again = await setup(t);
    temps.push(t);
    const host2 = again.gc;
    await host2.runtime.loadAll();
    expect((await host2.describeConsumerGroup('cg')).description).toEqual(live);
    expect((await host2.listGroups()).map((g) => [g.groupId, g.groupType])).toEqual([['cg', 'consumer']]);
    await host2.close();
  });

  it('a static member leaving with -2 keeps its partitions until it returns or its session ends', async () => {
    const { host, gc } = await setup();
    const a = await gc.consumerHeartbeat(hb('A', 0, { instanceId: 'i1' }));
    const b = await gc.consumerHeartbeat(hb('B', 0));
    const a2 = await gc.consumerHeartbeat(hb('A', a.memberEpoch, { instanceId: 'i1' }));
    const a3 = await gc.consumerHeartbeat(hb('A', a2.memberEpoch, { instanceId: 'i1', topicPartitions: owned(a2) }));
    let bb = await gc.consumerHeartbeat(hb('B', b.memberEpoch));
    const aParts = parts(a2);
    expect(aParts.length).toBe(3);
    const epochBefore = (await gc.describeConsumerGroup('cg')).description!.groupEpoch;

    expect((await gc.consumerHeartbeat(hb('A', a3.memberEpoch, { instanceId: 'i1' }))).errorCode).toBe(0);
    const left = await gc.consumerHeartbeat(hb('A', -2, { instanceId: 'i1' }));
    expect(left.memberEpoch).toBe(-2);
    bb = await gc.consumerHeartbeat(hb('B', bb.memberEpoch));
    expect(parts(bb).length === 0 || parts(bb).every((p) => !aParts.includes(p))).toBe(true);
    // The instance comes back under a new member id: same partitions, no new group epoch.
    const back = await gc.consumerHeartbeat(hb('A2', 0, { instanceId: 'i1' }));
    expect(back.errorCode).toBe(0);
    expect(parts(back)).toEqual(aParts);
    const d = (await gc.describeConsumerGroup('cg')).description!;
    expect(d.groupEpoch).toBe(epochBefore);
    expect(d.members.map((m) => m.memberId).sort()).toEqual(['A2', 'B']);
    // A live instance cannot be taken over.
    expect((await gc.consumerHeartbeat(hb('A3', 0, { instanceId: 'i1' }))).errorCode).toBe(ErrorCode.UNRELEASED_INSTANCE_ID);

    // Gone for good: after the session timeout its partitions go to B.
    await gc.consumerHeartbeat(hb('A2', back.memberEpoch, { instanceId: 'i1' }));
    await gc.consumerHeartbeat(hb('A2', -2, { instanceId: 'i1' }));
    for (let i = 0; i < 10; i++) {
      await host.manual.advance(5000);
      await gc.consumerHeartbeat(hb('B', (await gc.describeConsumerGroup('cg')).description!.members.find((m) => m.memberId === 'B')!.memberEpoch));
    }
    await gc.runtime.idle();
    const after = (await gc.describeConsumerGroup('cg')).description!;
    expect(after.members.map((m) => m.memberId)).toEqual(['B']);
    expect(after.members[0]!.assignment[0]!.partitions).toEqual([0, 1, 2, 3, 4, 5]);
    await gc.close();
  });

  it('a heartbeat whose records fail to append changes nothing', async () => {
    const { t, gc } = await setup();
    await gc.consumerHeartbeat(hb('A', 0));
    const before = await gc.describeConsumerGroup('cg');
    t.fs.failNextWrite();
    const r = await gc.consumerHeartbeat(hb('B', 0));
    expect(r.errorCode).toBe(ErrorCode.NOT_COORDINATOR);
    expect(await gc.describeConsumerGroup('cg')).toEqual(before);
    const again = await gc.consumerHeartbeat(hb('B', 0));
    expect([again.errorCode, again.memberEpoch]).toEqual([0, 2]);
    await gc.close();
  });
});
