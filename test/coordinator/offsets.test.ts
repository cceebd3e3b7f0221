import { describe, expect, it } from 'vitest';
import { GroupCoordinator } from '../../src/coordinator/group-coordinator.js';
import { ErrorCode } from '../../src/protocol/generated/errors.js';
import type { CommitRequest } from '../../src/coordinator/group-shard.js';
import { readCoordinatorBatches } from '../../src/coordinator/coordinator-batch.js';
import { testHost } from './harness.js';
import { TempLogs } from './logs.js';
import { afterEach } from 'vitest';

const temps: TempLogs[] = [];
function logs(): TempLogs {
  const t = new TempLogs();
  temps.push(t);
  return t;
}
afterEach(async () => {
  for (const t of temps.splice(0)) await t.destroy();
});

const CFG = {
  'offsets.topic.num.partitions': '4',
  'group.initial.rebalance.delay.ms': '0',
  'offsets.retention.minutes': '60',
  'offsets.retention.check.interval.ms': '60000',
};

function commit(groupId: string, offsets: Record<string, number>, over: Partial<CommitRequest> = {}): CommitRequest {
  const topics = new Map<string, { partitionIndex: number; committedOffset: bigint; committedLeaderEpoch: number; committedMetadata: string | null }[]>();
  for (const [tp, offset] of Object.entries(offsets)) {
    const [topic, p] = tp.split(':') as [string, string];
    topics.set(topic, [...(topics.get(topic) ?? []), { partitionIndex: Number(p), committedOffset: BigInt(offset), committedLeaderEpoch: 3, committedMetadata: 'm' }]);
  }
  return { groupId, generationIdOrMemberEpoch: -1, memberId: '', groupInstanceId: null, topics: [...topics].map(([name, partitions]) => ({ name, partitions })), ...over };
}

async function snapshot(gc: GroupCoordinator, groups: string[]) {
  const out: Record<string, unknown> = {};
  for (const g of groups) out[g] = { offsets: await gc.fetchOffsets(g, null), describe: await gc.describeGroup(g) };
  out['list'] = await gc.listGroups();
  return out;
}

describe('offsets on the coordinator runtime', () => {
  it('commits and fetches offsets; unknown partitions read -1', async () => {
    const host = testHost(logs().openLog, CFG);
    const gc = await GroupCoordinator.start(host);
    const res = await gc.commitOffsets(commit('ga', { 't:0': 10, 't:1': 20, 'u:0': 5 }));
    expect(res.flatMap((t) => t.partitions.map((p) => p.errorCode))).toEqual([0, 0, 0]);
    const f = await gc.fetchOffsets('ga', [{ name: 't', partitionIndexes: [0, 1, 2] }]);
    expect(f.topics[0]!.partitions.map((p) => [Number(p.committedOffset), p.committedLeaderEpoch, p.metadata])).toEqual([
      [10, 3, 'm'],
      [20, 3, 'm'],
      [-1, -1, ''],
    ]);
    expect((await gc.fetchOffsets('nobody', null)).topics).toEqual([]);
    const big = await gc.commitOffsets({ ...commit('ga', { 't:0': 11 }), topics: [{ name: 't', partitions: [{ partitionIndex: 0, committedOffset: 11n, committedLeaderEpoch: -1, committedMetadata: 'x'.repeat(5000) }] }] });
    expect(big[0]!.partitions[0]!.errorCode).toBe(ErrorCode.OFFSET_METADATA_TOO_LARGE);
    expect((await gc.listGroups()).map((g) => [g.groupId, g.groupState])).toEqual([['ga', 'Empty']]);
    await gc.close();
  });

  it('a failed append leaves state untouched and answers with a coordinator error', async () => {
    const t = logs();
    const host = testHost(t.openLog, CFG);
    const gc = await GroupCoordinator.start(host);
    await gc.commitOffsets(commit('gb', { 't:0': 1 }));
    const before = await snapshot(gc, ['gb']);
    t.fs.failNextWrite(); // the log answers KAFKA_STORAGE_ERROR and undoes the write
    const failed = await gc.commitOffsets(commit('gb', { 't:0': 99, 't:1': 7 }));
    expect(failed[0]!.partitions.map((p) => p.errorCode)).toEqual([ErrorCode.NOT_COORDINATOR, ErrorCode.NOT_COORDINATOR]);
    expect(await snapshot(gc, ['gb'])).toEqual(before);
    t.fs.failNextWrite();
    expect((await gc.deleteGroups(['gb']))[0]!.errorCode).toBe(ErrorCode.NOT_COORDINATOR);
    expect(await snapshot(gc, ['gb'])).toEqual(before);
    // The next write goes through and is applied.
    await gc.commitOffsets(commit('gb', { 't:0': 100 }));
    expect((await gc.fetchOffsets('gb', null)).topics[0]!.partitions[0]!.committedOffset).toBe(100n);
    await gc.close();
  });

  it('replaying the log after a restart rebuilds the same groups and offsets', async () => {
    const t = logs();
    const open = t.openLog;
    const host1 = testHost(open, CFG);
    const gc1 = await GroupCoordinator.start(host1);
    // A classic group with one stable member and committed offsets.
    const j1 = await gc1.join({ groupId: 'gc', sessionTimeoutMs: 10000, rebalanceTimeoutMs: 10000, memberId: '', groupInstanceId: null, protocolType: 'consumer', protocols: [{ name: 'range', metadata: Buffer.from('s') }], clientId: 'c', clientHost: 'h', requireKnownMemberId: false });
    await gc1.sync({ groupId: 'gc', generationId: j1.generationId, memberId: j1.memberId, groupInstanceId: null, protocolType: null, protocolName: null, assignments: [{ memberId: j1.memberId, assignment: Buffer.from('asg') }] });
    await gc1.commitOffsets(commit('gc', { 't:0': 42 }, { generationIdOrMemberEpoch: j1.generationId, memberId: j1.memberId }));
    expect((await gc1.commitOffsets(commit('gc', { 't:0': 1 })))[0]!.partitions[0]!.errorCode).toBe(ErrorCode.UNKNOWN_MEMBER_ID);
    await gc1.commitOffsets(commit('gd', { 'x:3': 7 }));
    await gc1.commitOffsets(commit('ge', { 'x:0': 1 }));
    await gc1.deleteGroups(['ge']);
    await gc1.deleteOffsets('gd', [{ name: 'x', partitions: [9] }]);
    const live = await snapshot(gc1, ['gc', 'gd', 'ge']);
    await gc1.close();
    await t.closeAll();

    const host2 = testHost(open, CFG, { __consumer_offsets: 4 });
    const gc2 = await GroupCoordinator.start(host2);
    expect(await snapshot(gc2, ['gc', 'gd', 'ge'])).toEqual(live);
    expect((live['gc'] as { describe: { groupState: string } }).describe.groupState).toBe('Stable');
    await gc2.close();
  });

  it('concurrent commits, transactional offsets and a marker on one shard share appends and replay to the same state', async () => {
    const t = logs();
    const gc1 = await GroupCoordinator.start(testHost(t.openLog, CFG));
    const shard = gc1.partitionFor('g0');
    const groups: string[] = [];
    for (let i = 0; groups.length < 4; i++) if (gc1.partitionFor(`g${i}`) === shard) groups.push(`g${i}`);
    await gc1.commitOffsets(commit(groups[0]!, { 't:0': 0 }));
    const writes: Promise<unknown>[] = [];
    for (let i = 1; i <= 12; i++) writes.push(gc1.commitOffsets(commit(groups[i % 4]!, { [`t:${i % 3}`]: i })));
    writes.push(gc1.txnCommitOffsets({ ...commit(groups[1]!, { 'u:0': 77 }), producerId: 500, producerEpoch: 0 }));
    writes.push(gc1.completeTransaction(shard, 500, 0, true));
    for (let i = 13; i <= 16; i++) writes.push(gc1.commitOffsets(commit(groups[i % 4]!, { [`t:${i % 3}`]: i })));
    const results = await Promise.all(writes);
    expect(results[13]).toBe(ErrorCode.NONE);
    for (const r of results.filter((_, i) => i !== 13) as { partitions: { errorCode: number }[] }[][]) expect(r.flatMap((x) => x.partitions.map((p) => p.errorCode))).toEqual([ErrorCode.NONE]);
    const g1 = await gc1.fetchOffsets(groups[1]!, null);
    // g1 committed t:1=1, t:2=5, t:0=9, t:1=13 and, in the committed transaction, u:0=77.
    expect(g1.topics.map((x) => [x.name, x.partitions.map((p) => [p.partitionIndex, Number(p.committedOffset)])])).toEqual([
      ['t', [[0, 9], [1, 13], [2, 5]]],
      ['u', [[0, 77]]],
    ]);
    // The first write goes out alone; the 17 queued behind it share one append: plain records,
    // the transactional batch, the marker, plain records again.
    const log = await t.raw('__consumer_offsets', shard);
    const read = await log.readToBuffer({ fetchOffset: 0, maxOffset: log.logEndOffset, maxBytes: 1 << 20, minOneMessage: true });
    const batches = [...readCoordinatorBatches(read.records)].map((b) => (b.isControl ? 'marker' : b.isTransactional ? 'txn' : b.records.length));
    expect(batches).toEqual([1, 1, 11, 'txn', 'marker', 4]);
    const live = await snapshot(gc1, groups);
    await gc1.close();
    await t.closeAll();
    const gc2 = await GroupCoordinator.start(testHost(t.openLog, CFG, { __consumer_offsets: 4 }));
    expect(await snapshot(gc2, groups)).toEqual(live);
    await gc2.close();
  });

  it('expires offsets of empty groups after offsets.retention.minutes and then the group', async () => {
    const host = testHost(logs().openLog, CFG);
    const gc = await GroupCoordinator.start(host);
    await gc.commitOffsets(commit('old', { 't:0': 1 }));
    await host.manual.advance(30 * 60000);
    await gc.commitOffsets(commit('new', { 't:0': 2 }));
    await host.manual.advance(31 * 60000); // the periodic check runs every minute
    await gc.runtime.idle();
    expect((await gc.fetchOffsets('old', null)).topics).toEqual([]);
    expect((await gc.fetchOffsets('new', null)).topics[0]!.partitions[0]!.committedOffset).toBe(2n);
    expect((await gc.listGroups()).map((g) => g.groupId)).toEqual(['new']);
    await host.manual.advance(30 * 60000);
    await gc.runtime.idle();
    expect((await gc.fetchOffsets('new', null)).topics).toEqual([]);
    await gc.close();
  });

  it('a group with members keeps offsets of subscribed topics and expires the others', async () => {
    const host = testHost(logs().openLog, CFG);
    const gc = await GroupCoordinator.start(host);
    // A consumer-protocol subscription to topic "t" (ConsumerProtocolSubscription v0).
    const sub = Buffer.from([0, 0, 0, 0, 0, 1, 0, 1, 0x74, 0xff, 0xff, 0xff, 0xff]);
    const j = await gc.join({ groupId: 'live', sessionTimeoutMs: 1_800_000, rebalanceTimeoutMs: 10000, memberId: '', groupInstanceId: null, protocolType: 'consumer', protocols: [{ name: 'range', metadata: sub }], clientId: 'c', clientHost: 'h', requireKnownMemberId: false });
    await gc.sync({ groupId: 'live', generationId: j.generationId, memberId: j.memberId, groupInstanceId: null, protocolType: null, protocolName: null, assignments: [] });
    const c = await gc.commitOffsets(commit('live', { 't:0': 5, 'old:0': 6 }, { generationIdOrMemberEpoch: j.generationId, memberId: j.memberId }));
    expect(c.flatMap((t) => t.partitions.map((p) => p.errorCode))).toEqual([0, 0]);
    for (let i = 0; i < 61; i++) {
      await host.manual.advance(60000);
      await gc.heartbeat({ groupId: 'live', generationId: j.generationId, memberId: j.memberId, groupInstanceId: null });
    }
    await gc.runtime.idle();
    const f = await gc.fetchOffsets('live', null);
    expect(f.topics.map((t) => t.name)).toEqual(['t']);
    await gc.close();
  });

  it('deletes the offsets of a deleted topic', async () => {
    const host = testHost(logs().openLog, CFG, {}, { keep: 1, gone: 2 });
    const gc = await GroupCoordinator.start(host);
    await gc.commitOffsets(commit('gx', { 'keep:0': 1, 'gone:0': 2, 'gone:1': 3 }));
    await gc.commitOffsets(commit('gy', { 'gone:1': 4 }));
    host.deleteTopic('gone');
    await gc.runtime.idle();
    expect((await gc.fetchOffsets('gx', null)).topics.map((t) => t.name)).toEqual(['keep']);
    expect((await gc.fetchOffsets('gy', null)).topics).toEqual([]);
    await gc.close();
  });
});
