import { afterEach, describe, expect, it } from 'vitest';
import type { ApiHandler, RequestContext } from '../../src/server/api-handler.js';
import { Reader } from '../../src/protocol/reader.js';
import { Writer } from '../../src/protocol/writer.js';
import { createGroupApiHandlers } from '../../src/coordinator/group-api-handlers.js';
import { createTxnApiHandlers } from '../../src/coordinator/txn-api-handlers.js';
import { encodeFindCoordinatorRequest } from '../../src/protocol/generated/messages/find-coordinator-request.js';
import { decodeFindCoordinatorResponse } from '../../src/protocol/generated/messages/find-coordinator-response.js';
import { encodeJoinGroupRequest } from '../../src/protocol/generated/messages/join-group-request.js';
import { decodeJoinGroupResponse } from '../../src/protocol/generated/messages/join-group-response.js';
import { encodeSyncGroupRequest } from '../../src/protocol/generated/messages/sync-group-request.js';
import { decodeSyncGroupResponse } from '../../src/protocol/generated/messages/sync-group-response.js';
import { encodeHeartbeatRequest } from '../../src/protocol/generated/messages/heartbeat-request.js';
import { decodeHeartbeatResponse } from '../../src/protocol/generated/messages/heartbeat-response.js';
import { encodeLeaveGroupRequest } from '../../src/protocol/generated/messages/leave-group-request.js';
import { decodeLeaveGroupResponse } from '../../src/protocol/generated/messages/leave-group-response.js';
import { encodeOffsetCommitRequest } from '../../src/protocol/generated/messages/offset-commit-request.js';
import { decodeOffsetCommitResponse } from '../../src/protocol/generated/messages/offset-commit-response.js';
import { encodeOffsetFetchRequest } from '../../src/protocol/generated/messages/offset-fetch-request.js';
import { decodeOffsetFetchResponse } from '../../src/protocol/generated/messages/offset-fetch-response.js';
import { encodeListGroupsRequest } from '../../src/protocol/generated/messages/list-groups-request.js';
import { decodeListGroupsResponse } from '../../src/protocol/generated/messages/list-groups-response.js';
import { encodeDescribeGroupsRequest } from '../../src/protocol/generated/messages/describe-groups-request.js';
import { decodeDescribeGroupsResponse } from '../../src/protocol/generated/messages/describe-groups-response.js';
import { encodeDeleteGroupsRequest } from '../../src/protocol/generated/messages/delete-groups-request.js';
import { decodeDeleteGroupsResponse } from '../../src/protocol/generated/messages/delete-groups-response.js';
import { encodeConsumerGroupHeartbeatRequest } from '../../src/protocol/generated/messages/consumer-group-heartbeat-request.js';
import { decodeConsumerGroupHeartbeatResponse } from '../../src/protocol/generated/messages/consumer-group-heartbeat-response.js';
import { encodeConsumerGroupDescribeRequest } from '../../src/protocol/generated/messages/consumer-group-describe-request.js';
import { decodeConsumerGroupDescribeResponse } from '../../src/protocol/generated/messages/consumer-group-describe-response.js';
import { encodeInitProducerIdRequest } from '../../src/protocol/generated/messages/init-producer-id-request.js';
import { decodeInitProducerIdResponse } from '../../src/protocol/generated/messages/init-producer-id-response.js';
import { encodeDescribeTransactionsRequest } from '../../src/protocol/generated/messages/describe-transactions-request.js';
import { decodeDescribeTransactionsResponse } from '../../src/protocol/generated/messages/describe-transactions-response.js';
import { encodeListTransactionsRequest } from '../../src/protocol/generated/messages/list-transactions-request.js';
import { decodeListTransactionsResponse } from '../../src/protocol/generated/messages/list-transactions-response.js';
import { testHost } from './harness.js';
import { TempLogs } from './logs.js';

/**
 * Every version of every group API through the handlers' own decode/encode: a request encoded
 * by the generated codec, handled, and the response decoded again, so no version's encoder
 * refuses what a handler answers (a thrown encode closes a client's connection).
 */

const temps: TempLogs[] = [];
afterEach(async () => {
  for (const t of temps.splice(0)) await t.destroy();
});

type Enc<T> = (w: Writer, m: T, v: number) => void;
type Dec<T> = (r: Reader, v: number) => T;

async function setup() {
  const t = new TempLogs();
  temps.push(t);
  const host = { ...testHost(t.openLog, { 'offsets.topic.num.partitions': '3', 'group.initial.rebalance.delay.ms': '0' }, {}, { orders: 3 }), allocateProducerId: async () => 77 };
  const groups = await createGroupApiHandlers(host);
  const txn = await createTxnApiHandlers(host, groups.coordinator);
  const byKey = new Map<number, ApiHandler>([...groups.handlers, ...txn.handlers].map((h) => [h.apiKey, h]));
  async function call<Req, Res>(apiKey: number, version: number, enc: Enc<Req>, req: Req, dec: Dec<Res>): Promise<Res> {
    const h = byKey.get(apiKey)!;
    expect(version).toBeGreaterThanOrEqual(h.minVersion);
    expect(version).toBeLessThanOrEqual(h.maxVersion);
    const w = new Writer();
    enc(w, req, version);
    const decoded = h.decode(new Reader(w.toBuffer()), version);
    const ctx: RequestContext = { apiKey, apiVersion: version, correlationId: 1, clientId: 'cli', connectionId: 'c1', principal: 'User:ANONYMOUS', clientAddress: '/127.0.0.1', signal: new AbortController().signal };
    const res = await h.handle(ctx, decoded);
    const out = new Writer();
    h.encode(out, res, version);
    return dec(new Reader(out.toBuffer()), version);
  }
  return { call, close: async () => { await txn.close(); await groups.close(); } };
}

const range = (a: number, b: number): number[] => Array.from({ length: b - a + 1 }, (_, i) => a + i);

describe('group API handlers at every version', () => {
  it('FindCoordinator v0-6, classic group flow v0-9, offsets v2-9 / v1-9, list/describe/delete', async () => {
    const { call, close } = await setup();
    for (const v of range(0, 6)) {
      const r = await call(10, v, encodeFindCoordinatorRequest, v >= 4 ? { keyType: 0, coordinatorKeys: ['a', 'b'] } : { key: 'a' }, decodeFindCoordinatorResponse);
      if (v >= 4) expect(r.coordinators.map((c) => [c.key, c.nodeId, c.port])).toEqual([['a', 1, 9092], ['b', 1, 9092]]);
      else expect([r.errorCode, r.nodeId, r.host, r.port]).toEqual([0, 1, '127.0.0.1', 9092]);
    }
    for (const v of range(0, 9)) {
      const group = `g${v}`;
      const protocols = [{ name: 'range', metadata: Buffer.from([0, 1, 0, 0, 0, 1, 0, 6, 111, 114, 100, 101, 114, 115, 0, 0, 0, 0]) }];
      const base = { groupId: group, sessionTimeoutMs: 10000, rebalanceTimeoutMs: 10000, protocolType: 'consumer', protocols, groupInstanceId: null };
      let j = await call(11, v, encodeJoinGroupRequest, { ...base, memberId: '' }, decodeJoinGroupResponse);
      if (v >= 4) {
        expect(j.errorCode).toBe(79);
        j = await call(11, v, encodeJoinGroupRequest, { ...base, memberId: j.memberId }, decodeJoinGroupResponse);
      }
      expect(j.errorCode).toBe(0);
      expect(j.generationId).toBe(1);
      expect(j.protocolName).toBe('range');
      expect(j.leader).toBe(j.memberId);
      expect(j.members.length).toBe(1);
      const sv = Math.min(v, 5);
      const s = await call(14, sv, encodeSyncGroupRequest, { groupId: group, generationId: 1, memberId: j.memberId, groupInstanceId: null, ...(sv >= 5 ? { protocolType: 'consumer', protocolName: 'range' } : {}), assignments: [{ memberId: j.memberId, assignment: Buffer.from('A') }] }, decodeSyncGroupResponse);
      expect([s.errorCode, s.assignment.toString()]).toEqual([0, 'A']);
      const hv = Math.min(v, 4);
      expect((await call(12, hv, encodeHeartbeatRequest, { groupId: group, generationId: 1, memberId: j.memberId, groupInstanceId: null }, decodeHeartbeatResponse)).errorCode).toBe(0);
      const cv = Math.max(2, v);
      const c = await call(8, cv, encodeOffsetCommitRequest, { groupId: group, generationIdOrMemberEpoch: 1, memberId: j.memberId, topics: [{ name: 'orders', partitions: [{ partitionIndex: 0, committedOffset: BigInt(10 + v), committedMetadata: 'm' }] }] }, decodeOffsetCommitResponse);
      expect(c.topics[0]!.partitions[0]!.errorCode).toBe(0);
      const fv = Math.max(1, v);
      const f = await call(9, fv, encodeOffsetFetchRequest, fv >= 8 ? { groups: [{ groupId: group, topics: [{ name: 'orders', partitionIndexes: [0, 1] }] }] } : { groupId: group, topics: [{ name: 'orders', partitionIndexes: [0, 1] }] }, decodeOffsetFetchResponse);
      const parts = fv >= 8 ? f.groups[0]!.topics[0]!.partitions : f.topics[0]!.partitions;
      expect(parts.map((p) => Number(p.committedOffset))).toEqual([10 + v, -1]);
      const lv = Math.min(v, 5);
      const l = await call(13, lv, encodeLeaveGroupRequest, lv >= 3 ? { groupId: group, members: [{ memberId: j.memberId, groupInstanceId: null }] } : { groupId: group, memberId: j.memberId }, decodeLeaveGroupResponse);
      expect(l.errorCode).toBe(0);
    }
    for (const v of range(0, 5)) {
      const l = await call(16, v, encodeListGroupsRequest, v >= 4 ? { statesFilter: ['Empty'], ...(v >= 5 ? { typesFilter: ['classic'] } : {}) } : {}, decodeListGroupsResponse);
      expect(l.groups.map((g) => g.groupId).sort()).toEqual(range(0, 9).map((i) => `g${i}`).sort());
    }
    for (const v of range(0, 6)) {
      const d = await call(15, v, encodeDescribeGroupsRequest, { groups: ['g0', 'missing'] }, decodeDescribeGroupsResponse);
      expect(d.groups.map((g) => [g.groupId, g.groupState])).toEqual([['g0', 'Empty'], ['missing', 'Dead']]);
      expect(d.groups[1]!.errorCode).toBe(v >= 6 ? 69 : 0);
    }
    for (const v of range(0, 2)) {
      const d = await call(42, v, encodeDeleteGroupsRequest, { groupsNames: [`g${v}`, 'missing'] }, decodeDeleteGroupsResponse);
      expect(d.results.map((r) => r.errorCode)).toEqual([0, 69]);
    }
    await close();
  });

  it('ConsumerGroupHeartbeat / Describe v0-1 and the transaction listing APIs', async () => {
    const { call, close } = await setup();
    for (const v of range(0, 1)) {
      const r = await call(68, v, encodeConsumerGroupHeartbeatRequest, { groupId: `cg${v}`, memberId: v >= 1 ? 'client-made-id' : '', memberEpoch: 0, rebalanceTimeoutMs: 30000, subscribedTopicNames: ['orders'], topicPartitions: [] }, decodeConsumerGroupHeartbeatResponse);
      expect(r.errorCode).toBe(0);
      expect(r.memberEpoch).toBe(1);
      expect(r.assignment!.topicPartitions[0]!.partitions).toEqual([0, 1, 2]);
      const d = await call(69, v, encodeConsumerGroupDescribeRequest, { groupIds: [`cg${v}`, 'nope'] }, decodeConsumerGroupDescribeResponse);
      expect(d.groups.map((g) => [g.groupState, g.errorCode])).toEqual([['Stable', 0], ['Dead', 69]]);
      expect(d.groups[0]!.members[0]!.assignment.topicPartitions[0]!.topicName).toBe('orders');
    }
    for (const v of range(0, 5)) {
      const r = await call(22, v, encodeInitProducerIdRequest, { transactionalId: v % 2 === 0 ? null : `t${v}`, transactionTimeoutMs: 60000, ...(v >= 3 ? { producerId: -1n, producerEpoch: -1 } : {}) }, decodeInitProducerIdResponse);
      expect(r.errorCode).toBe(0);
      expect(r.producerId).toBe(77n);
    }
    for (const v of range(0, 2)) {
      const l = await call(66, v, encodeListTransactionsRequest, { stateFilters: ['Empty', 'Bogus'] }, decodeListTransactionsResponse);
      expect(l.transactionStates.map((t) => t.transactionalId)).toEqual(['t1', 't3', 't5']);
      expect(l.unknownStateFilters).toEqual(['Bogus']);
    }
    const d = await call(65, 0, encodeDescribeTransactionsRequest, { transactionalIds: ['t1', 'nope'] }, decodeDescribeTransactionsResponse);
    expect(d.transactionStates.map((t) => [t.transactionalId, t.errorCode, t.transactionState])).toEqual([['t1', 0, 'Empty'], ['nope', 105, '']]);
    await close();
  });

  it('offers the KIP-848 APIs only when group.coordinator.rebalance.protocols has "consumer"', async () => {
    const t = new TempLogs();
    temps.push(t);
    const keys = async (protocols: string) => {
      const g = await createGroupApiHandlers(testHost(t.openLog, { 'group.coordinator.rebalance.protocols': protocols }));
      await g.close();
      return g.handlers.map((h) => h.apiKey).sort((a, b) => a - b);
    };
    expect(await keys('classic')).toEqual([8, 9, 10, 11, 12, 13, 14, 15, 16, 42, 47]);
    expect(await keys('classic,consumer')).toEqual([8, 9, 10, 11, 12, 13, 14, 15, 16, 42, 47, 68, 69]);
  });
  it("OffsetCommit answers UNKNOWN_TOPIC_OR_PARTITION for missing topics and partitions and stores only the rest; as Kafka's response builder, a topic's refused partitions come before its committed ones", async () => {
    const { call, close } = await setup();
    const part = (partitionIndex: number, committedOffset: bigint) => ({ partitionIndex, committedOffset, committedLeaderEpoch: -1, committedMetadata: '' });
    for (const v of range(2, 9)) {
      const group = `solo${v}`;
      const c = await call(8, v, encodeOffsetCommitRequest, {
        groupId: group,
        generationIdOrMemberEpoch: -1,
        memberId: '',
        groupInstanceId: null,
        topics: [
          { name: 'missing', partitions: [part(0, 5n)] },
          { name: 'orders', partitions: [part(1, 11n), part(3, 12n), part(0, 10n)] },
        ],
      }, decodeOffsetCommitResponse);
      expect(c.topics.map((t) => [t.name, t.partitions.map((p) => [p.partitionIndex, p.errorCode])])).toEqual([
        ['missing', [[0, 3]]],
        ['orders', [[3, 3], [1, 0], [0, 0]]],
      ]);
      const f = await call(9, 7, encodeOffsetFetchRequest, { groupId: group, topics: null, requireStable: false }, decodeOffsetFetchResponse);
      expect(f.topics.map((t) => [t.name, t.partitions.map((p) => [p.partitionIndex, Number(p.committedOffset)]).sort()])).toEqual([['orders', [[0, 10], [1, 11]]]]);
      const none = await call(8, v, encodeOffsetCommitRequest, { groupId: group, generationIdOrMemberEpoch: -1, memberId: '', groupInstanceId: null, topics: [{ name: 'missing', partitions: [part(0, 1n)] }] }, decodeOffsetCommitResponse);
      expect(none.topics[0]!.partitions[0]!.errorCode).toBe(3);
    }
    await close();
  });
});
