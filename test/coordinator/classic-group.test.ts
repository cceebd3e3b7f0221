import { describe, expect, it } from 'vitest';
import { GroupCoordinator } from '../../src/coordinator/group-coordinator.js';
import { ErrorCode } from '../../src/protocol/generated/errors.js';
import type { JoinRequest } from '../../src/coordinator/classic-ops.js';
import type { JoinResult } from '../../src/coordinator/classic-group.js';
import { settle, testHost } from './harness.js';
import { TempLogs } from './logs.js';
import { afterEach } from 'vitest';

const temps: TempLogs[] = [];
afterEach(async () => {
  for (const t of temps.splice(0)) await t.destroy();
});

const CFG = {
  'offsets.topic.num.partitions': '3',
  'group.initial.rebalance.delay.ms': '100',
  'group.min.session.timeout.ms': '1000',
};

function joinReq(groupId: string, over: Partial<JoinRequest> = {}): JoinRequest {
  return {
    groupId,
    sessionTimeoutMs: 10_000,
    rebalanceTimeoutMs: 20_000,
    memberId: '',
    groupInstanceId: null,
    protocolType: 'consumer',
    protocols: [{ name: 'range', metadata: Buffer.from('sub') }],
    clientId: 'client',
    clientHost: '/127.0.0.1',
    requireKnownMemberId: true,
    ...over,
  };
}

async function setup(config: Record<string, string> = {}) {
  const t = new TempLogs();
  temps.push(t);
  const host = testHost(t.openLog, { ...CFG, ...config });
  const gc = await GroupCoordinator.start(host);
  return { host, gc };
}

/** JoinGroup v4+ flow: MEMBER_ID_REQUIRED, then the real join (which waits for the rebalance). */
async function startJoin(gc: GroupCoordinator, groupId: string, over: Partial<JoinRequest> = {}): Promise<{ memberId: string; join: Promise<JoinResult> }> {
  const first = await gc.join(joinReq(groupId, over));
  expect(first.errorCode).toBe(ErrorCode.MEMBER_ID_REQUIRED);
  expect(first.memberId).toMatch(/^client-/);
  const join = gc.join(joinReq(groupId, { ...over, memberId: first.memberId }));
  return { memberId: first.memberId, join };
}

describe('classic group state machine', () => {
  it('rebalances two members after the initial delay: generation, leader, protocol, sync', async () => {
    const { host, gc } = await setup();
    const a = await startJoin(gc, 'g1');
    const b = await startJoin(gc, 'g1');
    await settle();
    let done = false;
    void Promise.all([a.join, b.join]).then(() => (done = true));
    await host.manual.advance(50);
    expect(done).toBe(false); // the initial rebalance delay holds the join
    await host.manual.advance(200);
    const [ja, jb] = await Promise.all([a.join, b.join]);
    expect(ja.errorCode).toBe(0);
    expect(ja.generationId).toBe(1);
    expect(jb.generationId).toBe(1);
    expect(ja.protocolName).toBe('range');
    expect(ja.leader).toBe(a.memberId);
    expect(ja.members.map((m) => m.memberId).sort()).toEqual([a.memberId, b.memberId].sort());
    expect(jb.members).toEqual([]);

    const followerSync = gc.sync({ groupId: 'g1', generationId: 1, memberId: b.memberId, groupInstanceId: null, protocolType: null, protocolName: null, assignments: [] });
    const leaderSync = gc.sync({
      groupId: 'g1',
      generationId: 1,
      memberId: a.memberId,
      groupInstanceId: null,
      protocolType: 'consumer',
      protocolName: 'range',
      assignments: [
        { memberId: a.memberId, assignment: Buffer.from('A') },
        { memberId: b.memberId, assignment: Buffer.from('B') },
      ],
    });
    expect((await leaderSync).assignment.toString()).toBe('A');
    expect((await followerSync).assignment.toString()).toBe('B');
    expect((await gc.describeGroup('g1')).groupState).toBe('Stable');
    expect(await gc.heartbeat({ groupId: 'g1', generationId: 1, memberId: b.memberId, groupInstanceId: null })).toBe(0);
    expect(await gc.heartbeat({ groupId: 'g1', generationId: 0, memberId: b.memberId, groupInstanceId: null })).toBe(ErrorCode.ILLEGAL_GENERATION);
    expect(await gc.heartbeat({ groupId: 'g1', generationId: 1, memberId: 'nobody', groupInstanceId: null })).toBe(ErrorCode.UNKNOWN_MEMBER_ID);
    await gc.close();
  });

  it('expires a silent member after its session timeout and rebalances the rest', async () => {
    const { host, gc } = await setup();
    const a = await startJoin(gc, 'g2');
    const b = await startJoin(gc, 'g2');
    await host.manual.advance(200);
    await Promise.all([a.join, b.join]);
    const leader = (await a.join).leader;
    const other = leader === a.memberId ? b.memberId : a.memberId;
    await Promise.all([
      gc.sync({ groupId: 'g2', generationId: 1, memberId: leader, groupInstanceId: null, protocolType: null, protocolName: null, assignments: [] }),
      gc.sync({ groupId: 'g2', generationId: 1, memberId: other, groupInstanceId: null, protocolType: null, protocolName: null, assignments: [] }),
    ]);
    // Only the leader heartbeats; the other member goes silent.
    for (let t = 0; t < 4; t++) {
      await host.manual.advance(3000);
      const code = await gc.heartbeat({ groupId: 'g2', generationId: 1, memberId: leader, groupInstanceId: null });
      if (code !== 0) {
        expect(code).toBe(ErrorCode.REBALANCE_IN_PROGRESS);
        break;
      }
    }
    const d = await gc.describeGroup('g2');
    expect(d.members.map((m) => m.memberId)).toEqual([leader]);
    expect(d.groupState).toBe('PreparingRebalance');
    const rejoin = await gc.join(joinReq('g2', { memberId: leader }));
    expect(rejoin.generationId).toBe(2);
    expect(rejoin.members.map((m) => m.memberId)).toEqual([leader]);
    await gc.close();
  });

  it('a leaving member triggers a rebalance; the last one leaving empties the group', async () => {
    const { host, gc } = await setup({ 'group.initial.rebalance.delay.ms': '0' });
    const a = await startJoin(gc, 'g3');
    await host.manual.advance(1);
    expect((await a.join).generationId).toBe(1);
    const b = await startJoin(gc, 'g3');
    await settle();
    // The join of b waits until a rejoins.
    expect(await gc.heartbeat({ groupId: 'g3', generationId: 1, memberId: a.memberId, groupInstanceId: null })).toBe(ErrorCode.REBALANCE_IN_PROGRESS);
    const a2 = await gc.join(joinReq('g3', { memberId: a.memberId }));
    expect(a2.generationId).toBe(2);
    expect((await b.join).generationId).toBe(2);
    const left = await gc.leave('g3', [{ memberId: b.memberId, groupInstanceId: null }, { memberId: 'ghost', groupInstanceId: null }]);
    expect(left.members.map((m) => m.errorCode)).toEqual([0, ErrorCode.UNKNOWN_MEMBER_ID]);
    const a3 = gc.join(joinReq('g3', { memberId: a.memberId }));
    expect((await a3).generationId).toBe(3);
    await gc.leave('g3', [{ memberId: a.memberId, groupInstanceId: null }]);
    const d = await gc.describeGroup('g3');
    expect(d.groupState).toBe('Empty');
    expect(d.members).toEqual([]);
    await gc.close();
  });

  it('rejects bad session timeouts, unknown members and mismatched protocols', async () => {
    const { gc } = await setup();
    expect((await gc.join(joinReq('g4', { sessionTimeoutMs: 10 }))).errorCode).toBe(ErrorCode.INVALID_SESSION_TIMEOUT);
    expect((await gc.join(joinReq('', {}))).errorCode).toBe(ErrorCode.INVALID_GROUP_ID);
    expect((await gc.join(joinReq('g4', { memberId: 'made-up' }))).errorCode).toBe(ErrorCode.UNKNOWN_MEMBER_ID);
    // v0-3 clients join directly, without MEMBER_ID_REQUIRED.
    const direct = gc.join(joinReq('g4', { requireKnownMemberId: false }));
    await settle();
    const other = await gc.join(joinReq('g4', { requireKnownMemberId: false, protocols: [{ name: 'roundrobin', metadata: Buffer.alloc(0) }] }));
    expect(other.errorCode).toBe(ErrorCode.INCONSISTENT_GROUP_PROTOCOL);
    await gc.close();
    expect((await direct).errorCode).toBe(ErrorCode.NOT_COORDINATOR);
  });

  it('static membership: a restarted instance takes over its member and fences the old id', async () => {
    const { host, gc } = await setup({ 'group.initial.rebalance.delay.ms': '0' });
    const first = gc.join(joinReq('g5', { groupInstanceId: 'i-1' }));
    await host.manual.advance(1);
    const j = await first;
    expect(j.errorCode).toBe(0);
    expect(j.memberId).toMatch(/^i-1-/);
    await gc.sync({ groupId: 'g5', generationId: 1, memberId: j.memberId, groupInstanceId: 'i-1', protocolType: null, protocolName: null, assignments: [{ memberId: j.memberId, assignment: Buffer.from('x') }] });
    const again = await gc.join(joinReq('g5', { groupInstanceId: 'i-1' }));
    expect(again.errorCode).toBe(0);
    expect(again.memberId).not.toBe(j.memberId);
    expect(again.generationId).toBe(1); // no rebalance for a returning static member
    expect(await gc.heartbeat({ groupId: 'g5', generationId: 1, memberId: j.memberId, groupInstanceId: 'i-1' })).toBe(ErrorCode.FENCED_INSTANCE_ID);
    const s = await gc.sync({ groupId: 'g5', generationId: 1, memberId: again.memberId, groupInstanceId: 'i-1', protocolType: null, protocolName: null, assignments: [] });
    expect(s.assignment.toString()).toBe('x');
    await gc.close();
  });

  it('picks the protocol most members prefer among those all support', async () => {
    const { host, gc } = await setup({ 'group.initial.rebalance.delay.ms': '0' });
    const p = (names: string[]) => names.map((name) => ({ name, metadata: Buffer.from(name) }));
    const a = gc.join(joinReq('g6', { requireKnownMemberId: false, protocols: p(['roundrobin', 'range']) }));
    await settle();
    await host.manual.advance(1);
    const ja = await a;
    const b = gc.join(joinReq('g6', { requireKnownMemberId: false, protocols: p(['range', 'sticky']) }));
    const c = gc.join(joinReq('g6', { requireKnownMemberId: false, protocols: p(['range', 'roundrobin']) }));
    await settle();
    const a2 = gc.join(joinReq('g6', { memberId: ja.memberId, requireKnownMemberId: false, protocols: p(['roundrobin', 'range']) }));
    const [rb, rc, ra] = await Promise.all([b, c, a2]);
    expect(ra.protocolName).toBe('range');
    expect(rb.protocolName).toBe('range');
    expect(rc.generationId).toBe(2);
    await gc.close();
  });
});
