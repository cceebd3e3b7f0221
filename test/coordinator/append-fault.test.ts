import { afterEach, describe, expect, it } from 'vitest';
import { BrokerServer } from '../../src/server/server.js';
import { ApiRegistry } from '../../src/server/api-registry.js';
import { createLogger } from '../../src/common/logger.js';
import { createGroupApiHandlers } from '../../src/coordinator/group-api-handlers.js';
import { ErrorCode } from '../../src/protocol/generated/errors.js';
import type { Reader } from '../../src/protocol/reader.js';
import type { Writer } from '../../src/protocol/writer.js';
import { encodeOffsetCommitRequest, type OffsetCommitRequestInput } from '../../src/protocol/generated/messages/offset-commit-request.js';
import { decodeOffsetCommitResponse } from '../../src/protocol/generated/messages/offset-commit-response.js';
import { encodeOffsetFetchRequest } from '../../src/protocol/generated/messages/offset-fetch-request.js';
import { decodeOffsetFetchResponse } from '../../src/protocol/generated/messages/offset-fetch-response.js';
import { encodeJoinGroupRequest } from '../../src/protocol/generated/messages/join-group-request.js';
import { decodeJoinGroupResponse } from '../../src/protocol/generated/messages/join-group-response.js';
import { encodeSyncGroupRequest } from '../../src/protocol/generated/messages/sync-group-request.js';
import { decodeSyncGroupResponse } from '../../src/protocol/generated/messages/sync-group-response.js';
import { encodeLeaveGroupRequest } from '../../src/protocol/generated/messages/leave-group-request.js';
import { decodeLeaveGroupResponse } from '../../src/protocol/generated/messages/leave-group-response.js';
import { encodeDescribeGroupsRequest } from '../../src/protocol/generated/messages/describe-groups-request.js';
import { decodeDescribeGroupsResponse } from '../../src/protocol/generated/messages/describe-groups-response.js';
import { encodeDeleteGroupsRequest } from '../../src/protocol/generated/messages/delete-groups-request.js';
import { decodeDeleteGroupsResponse } from '../../src/protocol/generated/messages/delete-groups-response.js';
import { encodeConsumerGroupHeartbeatRequest, type ConsumerGroupHeartbeatRequestInput } from '../../src/protocol/generated/messages/consumer-group-heartbeat-request.js';
import { decodeConsumerGroupHeartbeatResponse } from '../../src/protocol/generated/messages/consumer-group-heartbeat-response.js';
import { encodeConsumerGroupDescribeRequest } from '../../src/protocol/generated/messages/consumer-group-describe-request.js';
import { WireClient } from '../broker/wire.js';
import { testHost } from './harness.js';
import { TempLogs } from './logs.js';

/**
 * A write whose __consumer_offsets append fails (the storage FileSystem seam refuses the write)
 * leaves the groups exactly as they were: the client of the failed write gets the coordinator
 * error, and OffsetFetch / DescribeGroups / ConsumerGroupDescribe over TCP answer byte for byte
 * what they answered before.
 */

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function serve() {
  const logs = new TempLogs();
  cleanups.push(() => logs.destroy());
  const host = testHost(logs.openLog, { 'offsets.topic.num.partitions': '1', 'group.initial.rebalance.delay.ms': '0' }, {}, { orders: 3 });
  const groups = await createGroupApiHandlers(host);
  cleanups.push(() => groups.close());
  const registry = new ApiRegistry();
  registry.registerAll(groups.handlers);
  const server = new BrokerServer({
    host: '127.0.0.1',
    port: 0,
    handlers: registry.handlers,
    headers: registry.headers,
    maxFrameBytes: 1 << 20,
    idleTimeoutMs: 60_000,
    maxInFlight: 16,
    log: createLogger({}, 'error', () => undefined),
    unsupportedApiVersionsBody: () => registry.unsupportedApiVersionsBody(),
  });
  const port = await server.listen();
  cleanups.push(() => server.close(100));
  const client = await WireClient.connect(port);
  cleanups.push(async () => client.close());
  const call = async <T,>(apiKey: number, version: number, enc: (w: Writer) => void, dec: (r: Reader, v: number) => T): Promise<T> => dec(await client.call(apiKey, version, enc), version);
  /** The raw response body, for byte-for-byte comparisons. */
  const raw = async (apiKey: number, version: number, enc: (w: Writer) => void): Promise<string> => {
    client.write(client.frame(apiKey, version, enc, 7));
    return (await client.next()).body.toString('hex');
  };
  return { logs, host, call, raw };
}

const commit = (groupId: string, offsets: number[], member: Partial<OffsetCommitRequestInput> = {}): ((w: Writer) => void) => (w) =>
  encodeOffsetCommitRequest(w, { groupId, generationIdOrMemberEpoch: -1, memberId: '', groupInstanceId: null, ...member, topics: [{ name: 'orders', partitions: offsets.map((o, i) => ({ partitionIndex: i, committedOffset: BigInt(o), committedLeaderEpoch: 1, committedMetadata: 'm' })) }] }, 8);
const fetchOffsets = (groupId: string) => (w: Writer) => encodeOffsetFetchRequest(w, { groupId, topics: null, requireStable: false }, 7);
const describe3 = (w: Writer) => encodeDescribeGroupsRequest(w, { groups: ['plain', 'classic', 'k848'], includeAuthorizedOperations: false }, 5);
const describe848 = (w: Writer) => encodeConsumerGroupDescribeRequest(w, { groupIds: ['k848'], includeAuthorizedOperations: false }, 0);
const heartbeat = (req: ConsumerGroupHeartbeatRequestInput) => (w: Writer) =>
  encodeConsumerGroupHeartbeatRequest(w, { groupId: 'k848', instanceId: null, rackId: null, rebalanceTimeoutMs: 30000, subscribedTopicRegex: null, serverAssignor: null, topicPartitions: [], ...req }, 0);

describe('a failed __consumer_offsets append', () => {
  it('leaves offsets, classic and KIP-848 groups as they were, seen over the wire', async () => {
    const { logs, call, raw } = await serve();
    const ok = await call(8, 8, commit('plain', [10, 20]), decodeOffsetCommitResponse);
    expect(ok.topics[0]!.partitions.map((p) => p.errorCode)).toEqual([ErrorCode.NONE, ErrorCode.NONE]);

    // A classic group with one stable member and its assignment.
    const join = await call(11, 3, (w) => encodeJoinGroupRequest(w, { groupId: 'classic', sessionTimeoutMs: 30000, rebalanceTimeoutMs: 30000, memberId: '', protocolType: 'consumer', protocols: [{ name: 'range', metadata: Buffer.from('sub') }] }, 3), decodeJoinGroupResponse);
    expect(join.errorCode).toBe(ErrorCode.NONE);
    const sync = await call(14, 3, (w) => encodeSyncGroupRequest(w, { groupId: 'classic', generationId: join.generationId, memberId: join.memberId, groupInstanceId: null, assignments: [{ memberId: join.memberId, assignment: Buffer.from('asg') }] }, 3), decodeSyncGroupResponse);
    expect(Buffer.from(sync.assignment).toString()).toBe('asg');
    await call(8, 8, commit('classic', [5], { generationIdOrMemberEpoch: join.generationId, memberId: join.memberId }), decodeOffsetCommitResponse);

    // A KIP-848 group with one member.
    const a = await call(68, 0, heartbeat({ memberId: '', memberEpoch: 0, subscribedTopicNames: ['orders'] }), decodeConsumerGroupHeartbeatResponse);
    expect(a.errorCode).toBe(ErrorCode.NONE);

    const before = { plain: await raw(9, 7, fetchOffsets('plain')), classic: await raw(9, 7, fetchOffsets('classic')), groups: await raw(15, 5, describe3), k848: await raw(69, 0, describe848) };
    const now = async () => ({ plain: await raw(9, 7, fetchOffsets('plain')), classic: await raw(9, 7, fetchOffsets('classic')), groups: await raw(15, 5, describe3), k848: await raw(69, 0, describe848) });

    logs.fs.failNextWrite();
    const failedCommit = await call(8, 8, commit('plain', [11, 21, 31]), decodeOffsetCommitResponse);
    expect(failedCommit.topics[0]!.partitions.map((p) => p.errorCode)).toEqual([ErrorCode.NOT_COORDINATOR, ErrorCode.NOT_COORDINATOR, ErrorCode.NOT_COORDINATOR]);
    expect(await now()).toEqual(before);

    // The last member leaving empties the group (a snapshot record): refused, it stays Stable.
    logs.fs.failNextWrite();
    const left = await call(13, 3, (w) => encodeLeaveGroupRequest(w, { groupId: 'classic', members: [{ memberId: join.memberId, groupInstanceId: null }] }, 3), decodeLeaveGroupResponse);
    expect(left.errorCode).toBe(ErrorCode.NOT_COORDINATOR);
    expect(await now()).toEqual(before);

    // A second KIP-848 member joining bumps the group epoch and the target: refused, nothing moves.
    logs.fs.failNextWrite();
    const b = await call(68, 0, heartbeat({ memberId: '', memberEpoch: 0, subscribedTopicNames: ['orders'] }), decodeConsumerGroupHeartbeatResponse);
    expect(b.errorCode).toBe(ErrorCode.NOT_COORDINATOR);
    expect(await now()).toEqual(before);

    logs.fs.failNextWrite();
    const deleted = await call(42, 2, (w) => encodeDeleteGroupsRequest(w, { groupsNames: ['plain'] }, 2), decodeDeleteGroupsResponse);
    expect(deleted.results.map((r) => r.errorCode)).toEqual([ErrorCode.NOT_COORDINATOR]);
    expect(await now()).toEqual(before);

    // The next writes go through and are seen.
    const again = await call(8, 8, commit('plain', [12]), decodeOffsetCommitResponse);
    expect(again.topics[0]!.partitions[0]!.errorCode).toBe(ErrorCode.NONE);
    const fetched = await call(9, 7, fetchOffsets('plain'), decodeOffsetFetchResponse);
    expect(fetched.topics[0]!.partitions.map((p) => Number(p.committedOffset))).toEqual([12, 20]);
    const leftNow = await call(13, 3, (w) => encodeLeaveGroupRequest(w, { groupId: 'classic', members: [{ memberId: join.memberId, groupInstanceId: null }] }, 3), decodeLeaveGroupResponse);
    expect(leftNow.errorCode).toBe(ErrorCode.NONE);
    const described = await call(15, 5, describe3, decodeDescribeGroupsResponse);
    expect(described.groups.map((g) => [g.groupId, g.groupState, g.members.length])).toEqual([
      ['plain', 'Empty', 0],
      ['classic', 'Empty', 0],
      ['k848', 'Stable', 1],
    ]);
  });
});
