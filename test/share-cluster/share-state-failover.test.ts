/**
 * Share-partition state on a real three-node cluster (one etcd, three `fjord start` processes,
 * __share_group_state replicated to all three): a share consumer acknowledges records of a
 * partition whose share coordinator is another node, the partition leader is SIGKILLed, and the
 * new leader hands out exactly the unacknowledged records again, their delivery counts kept;
 * then the share coordinator itself is SIGKILLed, its successor takes the next acknowledgement
 * and answers ReadShareGroupStateSummary with the start offset, and a last partition failover
 * still redelivers only what was never acknowledged. FindCoordinator key type SHARE names the
 * coordinator on every node; DescribeShareGroupOffsets on a node that does not hold the
 * share-partition reads the coordinator's summary. A share group's membership survives a
 * SIGKILL of its group coordinator: the new one describes the same epochs and members and takes
 * a member's heartbeat at the epoch it had. A node whose leadership of a partition goes to
 * another node and comes back serves what the leader in between persisted, not what it held.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Kafka, logLevel, type Admin, type Producer } from 'kafkajs';
import type { ApiSpec } from '../../src/client/apis.js';
import { Apis } from '../../src/client/apis.js';
import { KafkaClient } from '../../src/client/kafka-client.js';
import { partitionForKey } from '../../src/coordinator/coordinator-runtime.js';
import { ErrorCode } from '../../src/protocol/generated/errors.js';
import { encodeDescribeShareGroupOffsetsRequest, type DescribeShareGroupOffsetsRequestInput } from '../../src/protocol/generated/messages/describe-share-group-offsets-request.js';
import { decodeDescribeShareGroupOffsetsResponse, type DescribeShareGroupOffsetsResponse } from '../../src/protocol/generated/messages/describe-share-group-offsets-response.js';
import { encodeElectLeadersRequest, type ElectLeadersRequestInput } from '../../src/protocol/generated/messages/elect-leaders-request.js';
import { decodeElectLeadersResponse, type ElectLeadersResponse } from '../../src/protocol/generated/messages/elect-leaders-response.js';
import { encodeFindCoordinatorRequest, type FindCoordinatorRequestInput } from '../../src/protocol/generated/messages/find-coordinator-request.js';
import { decodeFindCoordinatorResponse, type FindCoordinatorResponse } from '../../src/protocol/generated/messages/find-coordinator-response.js';
import { encodeShareAcknowledgeRequest, type ShareAcknowledgeRequestInput } from '../../src/protocol/generated/messages/share-acknowledge-request.js';
import { decodeShareAcknowledgeResponse, type ShareAcknowledgeResponse } from '../../src/protocol/generated/messages/share-acknowledge-response.js';
import { encodeShareFetchRequest, type ShareFetchRequestInput } from '../../src/protocol/generated/messages/share-fetch-request.js';
import { decodeShareFetchResponse, type ShareFetchResponse } from '../../src/protocol/generated/messages/share-fetch-response.js';
import { encodeShareGroupDescribeRequest, type ShareGroupDescribeRequestInput } from '../../src/protocol/generated/messages/share-group-describe-request.js';
import { decodeShareGroupDescribeResponse, type ShareGroupDescribeResponse } from '../../src/protocol/generated/messages/share-group-describe-response.js';
import { encodeShareGroupHeartbeatRequest, type ShareGroupHeartbeatRequestInput } from '../../src/protocol/generated/messages/share-group-heartbeat-request.js';
import { decodeShareGroupHeartbeatResponse, type ShareGroupHeartbeatResponse } from '../../src/protocol/generated/messages/share-group-heartbeat-response.js';
import { ShareStateApis } from '../../src/share/share-state-apis.js';
import { eventually, startCluster, type RunningCluster } from '../helpers/cluster.js';

const FIND_COORDINATOR_V6: ApiSpec<FindCoordinatorRequestInput, FindCoordinatorResponse> = { apiKey: 10, versions: [6, 6], encode: encodeFindCoordinatorRequest, decode: decodeFindCoordinatorResponse };
const SHARE_FETCH: ApiSpec<ShareFetchRequestInput, ShareFetchResponse> = { apiKey: 78, versions: [1, 1], encode: encodeShareFetchRequest, decode: decodeShareFetchResponse };
const SHARE_ACK: ApiSpec<ShareAcknowledgeRequestInput, ShareAcknowledgeResponse> = { apiKey: 79, versions: [1, 1], encode: encodeShareAcknowledgeRequest, decode: decodeShareAcknowledgeResponse };
const SHARE_HEARTBEAT: ApiSpec<ShareGroupHeartbeatRequestInput, ShareGroupHeartbeatResponse> = { apiKey: 76, versions: [1, 1], encode: encodeShareGroupHeartbeatRequest, decode: decodeShareGroupHeartbeatResponse };
const SHARE_DESCRIBE: ApiSpec<ShareGroupDescribeRequestInput, ShareGroupDescribeResponse> = { apiKey: 77, versions: [1, 1], encode: encodeShareGroupDescribeRequest, decode: decodeShareGroupDescribeResponse };
const ELECT_LEADERS: ApiSpec<ElectLeadersRequestInput, ElectLeadersResponse> = { apiKey: 43, versions: [1, 2], encode: encodeElectLeadersRequest, decode: decodeElectLeadersResponse };
const DESCRIBE_OFFSETS: ApiSpec<DescribeShareGroupOffsetsRequestInput, DescribeShareGroupOffsetsResponse> = { apiKey: 90, versions: [1, 1], encode: encodeDescribeShareGroupOffsetsRequest, decode: decodeDescribeShareGroupOffsetsResponse };

const ACCEPT = 1;
const TOPIC = 'tasks';

let cluster: RunningCluster;
let producer: Producer;
let kafka: Kafka;
let topicId = '';
let group = '';
const clients = new Map<number, KafkaClient>();

/** One raw client per node, dropped when the node is killed. */
function client(nodeId: number): KafkaClient {
  let c = clients.get(nodeId);
  if (c === undefined) {
    c = new KafkaClient({ bootstrapServers: [cluster.node(nodeId).bootstrap], clientId: 'share-state-failover', requestTimeoutMs: 20_000 });
    clients.set(nodeId, c);
  }
  return c;
}

async function kill(nodeId: number): Promise<void> {
  clients.get(nodeId)?.close();
  clients.delete(nodeId);
  await cluster.node(nodeId).kill();
}

const live = (): number[] => cluster.nodes.filter((n) => n.running !== null).map((n) => n.nodeId);

/** The live leader of TOPIC-0 every live node agrees on. */
async function partitionLeader(): Promise<number> {
  return eventually('a live leader of tasks-0 named by every live node', async () => {
    const ids = await Promise.all(
      live().map(async (id) => {
        const m = await client(id).send(Apis.Metadata, { topics: [{ name: TOPIC }], allowAutoTopicCreation: false, includeTopicAuthorizedOperations: false });
        return m.topics[0]?.partitions.find((p) => p.partitionIndex === 0)?.leaderId ?? -1;
      }),
    );
    const [only] = new Set(ids);
    return new Set(ids).size === 1 && only !== undefined && live().includes(only) ? only : null;
  }, 45_000);
}

/** The share coordinator of `g`'s share-partition TOPIC-0 every live node names (FindCoordinator key type SHARE). */
async function shareCoordinator(g: string): Promise<number> {
  return eventually(`a share coordinator for ${g}`, async () => {
    const ids = await Promise.all(
      live().map(async (id) => {
        const c = (await client(id).send(FIND_COORDINATOR_V6, { keyType: 2, coordinatorKeys: [`${g}:${topicId}:0`] })).coordinators[0]!;
        return c.errorCode === 0 ? c.nodeId : -1;
      }),
    );
    const [only] = new Set(ids);
    return new Set(ids).size === 1 && only !== undefined && live().includes(only) ? only : null;
  }, 45_000);
}

/** The live coordinator of group `g` every live node names (FindCoordinator key type GROUP). */
async function groupCoordinatorOf(g: string): Promise<number> {
  return eventually(`the group coordinator of ${g}`, async () => {
    const ids = await Promise.all(
      live().map(async (id) => {
        const c = (await client(id).send(Apis.FindCoordinator, { keyType: 0, coordinatorKeys: [g] })).coordinators[0]!;
        return c.errorCode === 0 ? c.nodeId : -1;
      }),
    );
    const [only] = new Set(ids);
    return new Set(ids).size === 1 && only !== undefined && live().includes(only) ? only : null;
  }, 45_000);
}

/** One ShareFetch at `nodeId`; the acquired offsets with their delivery counts. */
async function shareFetch(nodeId: number, memberId: string, shareSessionEpoch: number, maxWaitMs: number): Promise<{ errorCode: number; acquired: [number, number][] }> {
  const r = await client(nodeId).send(SHARE_FETCH, {
    groupId: group,
    memberId,
    shareSessionEpoch,
    maxWaitMs,
    minBytes: 1,
    maxBytes: 1 << 20,
    maxRecords: 100,
    batchSize: 100,
    topics: [{ topicId, partitions: [{ partitionIndex: 0, acknowledgementBatches: [] }] }],
    forgottenTopicsData: [],
  });
  if (r.errorCode !== 0) return { errorCode: r.errorCode, acquired: [] };
  const p = r.responses[0]?.partitions[0];
  const acquired: [number, number][] = [];
  for (const a of p?.acquiredRecords ?? []) for (let o = Number(a.firstOffset); o <= Number(a.lastOffset); o++) acquired.push([o, a.deliveryCount]);
  return { errorCode: p?.errorCode ?? ErrorCode.UNKNOWN_SERVER_ERROR, acquired };
}

/** The first records a fresh member is handed at the partition's current leader. */
async function fetchAtLeader(memberId: string): Promise<{ leader: number; acquired: [number, number][] }> {
  return eventually(`records for ${memberId} at the partition leader`, async () => {
    const leader = await partitionLeader();
    const f = await shareFetch(leader, memberId, 0, 3000);
    return f.errorCode === 0 && f.acquired.length > 0 ? { leader, acquired: f.acquired } : null;
  }, 45_000);
}

async function accept(nodeId: number, memberId: string, shareSessionEpoch: number, first: number, last: number): Promise<number> {
  const r = await client(nodeId).send(SHARE_ACK, {
    groupId: group,
    memberId,
    shareSessionEpoch,
    topics: [{ topicId, partitions: [{ partitionIndex: 0, acknowledgementBatches: [{ firstOffset: BigInt(first), lastOffset: BigInt(last), acknowledgeTypes: [ACCEPT] }] }] }],
  });
  return r.errorCode !== 0 ? r.errorCode : (r.responses[0]?.partitions[0]?.errorCode ?? ErrorCode.UNKNOWN_SERVER_ERROR);
}

async function summaryAt(nodeId: number): Promise<{ errorCode: number; startOffset: number; deliveryCompleteCount: number }> {
  const r = await client(nodeId).send(ShareStateApis.ReadShareGroupStateSummary, { groupId: group, topics: [{ topicId, partitions: [{ partition: 0, leaderEpoch: -1 }] }] });
  const p = r.results[0]!.partitions[0]!;
  return { errorCode: p.errorCode, startOffset: Number(p.startOffset), deliveryCompleteCount: p.deliveryCompleteCount };
}

/** Puts `first` at the head of a partition's replicas and elects it (preferred election), every node staying up. */
async function leadPartition(admin: Admin, topic: string, partition: number, first: number): Promise<void> {
  const replicas = [first, ...[1, 2, 3].filter((id) => id !== first)];
  const leaderOf = async (): Promise<number> => {
    const m = await client(first).send(Apis.Metadata, { topics: [{ name: topic }], allowAutoTopicCreation: false, includeTopicAuthorizedOperations: false });
    return m.topics[0]?.partitions.find((p) => p.partitionIndex === partition)?.leaderId ?? -1;
  };
  await eventually(`replicas ${replicas.join(',')} of ${topic}-${partition} in the ISR`, async () => {
    const m = await client(first).send(Apis.Metadata, { topics: [{ name: topic }], allowAutoTopicCreation: false, includeTopicAuthorizedOperations: false });
    return (m.topics[0]?.partitions.find((p) => p.partitionIndex === partition)?.isrNodes.length ?? 0) === 3;
  }, 45_000);
  await admin.alterPartitionReassignments({ topics: [{ topic, partitionAssignment: [{ partition, replicas }] }] });
  await eventually(`${first} to lead ${topic}-${partition}`, async () => {
    await client(first).send(ELECT_LEADERS, { electionType: 0, topicPartitions: [{ topic, partitions: [partition] }], timeoutMs: 5000 });
    return (await leaderOf()) === first;
  }, 45_000);
}

const range = (from: number, to: number, deliveryCount: number): [number, number][] => Array.from({ length: to - from + 1 }, (_, i) => [from + i, deliveryCount]);

beforeAll(async () => {
  cluster = await startCluster({
    nodes: 3,
    overrides: {
      'offsets.topic.num.partitions': 3,
      'offsets.topic.replication.factor': 3,
      'share.coordinator.state.topic.num.partitions': 3,
      'share.coordinator.state.topic.replication.factor': 3,
    },
  });
  kafka = new Kafka({ clientId: 'share-state-failover', brokers: cluster.bootstrap, logLevel: logLevel.NOTHING, retry: { retries: 30, initialRetryTime: 100, maxRetryTime: 1000 } });
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({ topics: [{ topic: TOPIC, numPartitions: 1, replicationFactor: 3 }], waitForLeaders: true });
  await admin.disconnect();
  producer = kafka.producer({ allowAutoTopicCreation: false });
  await producer.connect();
  const m = await client(1).send(Apis.Metadata, { topics: [{ name: TOPIC }], allowAutoTopicCreation: false, includeTopicAuthorizedOperations: false });
  topicId = m.topics[0]!.topicId;
}, 120_000);

afterAll(async () => {
  for (const c of clients.values()) c.close();
  await producer?.disconnect().catch(() => undefined);
  await cluster?.destroy();
});

describe('share-partition state on a three-node cluster', () => {
  it('keeps acknowledgements and delivery counts across SIGKILLs of the partition leader and of the share coordinator', async () => {
    // A group whose share coordinator for tasks-0 is not the partition's leader.
    const leader = await partitionLeader();
    for (let i = 0; group === ''; i++) {
      if ((await shareCoordinator(`workers-${i}`)) !== leader) group = `workers-${i}`;
    }
    expect(await shareCoordinator(group)).not.toBe(leader);

    // The first fetch starts the share-partition at the (empty) log's end, as share.auto.offset.reset=latest does.
    expect((await shareFetch(leader, 'member-a', 0, 0)).errorCode).toBe(0);
    await producer.send({ topic: TOPIC, acks: -1, messages: Array.from({ length: 10 }, (_, i) => ({ value: `task-${i}` })) });
    const first = await eventually('the ten records acquired', async () => {
      const f = await shareFetch(leader, 'member-a', 1, 3000);
      return f.acquired.length > 0 ? f : null;
    });
    expect(first).toEqual({ errorCode: 0, acquired: range(0, 9, 1) });
    // 0-4 acknowledged: durable at the share coordinator on the other node before the answer.
    expect(await accept(leader, 'member-a', 2, 0, 4)).toBe(0);

    await kill(leader);
    const second = await fetchAtLeader('member-b');
    expect(second.leader).not.toBe(leader);
    // Only the unacknowledged records come back, each on its second delivery.
    expect(second.acquired).toEqual(range(5, 9, 2));
    expect(await accept(second.leader, 'member-b', 1, 5, 6)).toBe(0);
    await cluster.node(leader).start();

    // Now the share coordinator dies.
    const coordinator = await shareCoordinator(group);
    await kill(coordinator);
    let next = 7;
    if (coordinator !== second.leader) {
      // The partition leader survived: its next acknowledgement reaches the new coordinator.
      expect(await accept(second.leader, 'member-b', 2, 7, 7)).toBe(0);
      next = 8;
    }
    const successor = await shareCoordinator(group);
    expect(successor).not.toBe(coordinator);
    const summary = await eventually('the new share coordinator to answer', async () => {
      const s = await summaryAt(successor);
      return s.errorCode === 0 ? s : null;
    });
    expect(summary).toEqual({ errorCode: 0, startOffset: next, deliveryCompleteCount: 0 });
    // A node that is not the coordinator says so.
    const other = live().find((id) => id !== successor)!;
    expect((await summaryAt(other)).errorCode).toBe(ErrorCode.NOT_COORDINATOR);

    // DescribeShareGroupOffsets at the group's coordinator: from the share-partition it holds, or
    // else from the share coordinator's summary; the start offset is the same either way.
    await cluster.node(coordinator).start();
    const holder = await partitionLeader();
    const groupCoordinator = await groupCoordinatorOf(group);
    await eventually('a member to join the share group', async () => (await client(groupCoordinator).send(SHARE_HEARTBEAT, { groupId: group, memberId: 'member-d', memberEpoch: 0, subscribedTopicNames: [TOPIC] })).errorCode === 0);
    const described = await client(groupCoordinator).send(DESCRIBE_OFFSETS, { groups: [{ groupId: group, topics: [{ topicName: TOPIC, partitions: [0] }] }] });
    expect(described.groups[0]!.topics[0]!.partitions[0]).toMatchObject({ partitionIndex: 0, startOffset: BigInt(next), errorCode: 0 });

    // A last failover of the partition: what was never acknowledged comes back, delivery counts kept.
    // (When the coordinator's death already moved the partition, its new leader has not loaded it yet.)
    if (holder === second.leader) await kill(holder);
    const third = await fetchAtLeader('member-c');
    expect(third.acquired).toEqual(range(next, 9, 3));
  }, 240_000);

  it('keeps a share group\'s epochs and members across a SIGKILL of its group coordinator', async () => {
    const g = 'pool';
    const heartbeat = (nodeId: number, memberId: string, memberEpoch: number) =>
      client(nodeId).send(SHARE_HEARTBEAT, { groupId: g, memberId, memberEpoch, subscribedTopicNames: memberEpoch === 0 ? [TOPIC] : null });
    const describe = async (nodeId: number) => {
      const d = (await client(nodeId).send(SHARE_DESCRIBE, { groupIds: [g], includeAuthorizedOperations: false })).groups[0]!;
      return { errorCode: d.errorCode, groupEpoch: d.groupEpoch, assignmentEpoch: d.assignmentEpoch, members: d.members.map((m) => [m.memberId, m.memberEpoch]).sort() };
    };
    while (live().length < 3) await cluster.node(cluster.nodes.find((n) => n.running === null)!.nodeId).start();
    const first = await groupCoordinatorOf(g);
    expect(await eventually('w-1 to join', async () => {
      const r = await heartbeat(first, 'w-1', 0);
      return r.errorCode === 0 ? r : null;
    })).toMatchObject({ memberEpoch: 1 });
    expect(await heartbeat(first, 'w-2', 0)).toMatchObject({ errorCode: 0, memberEpoch: 2 });
    expect(await heartbeat(first, 'w-1', 1)).toMatchObject({ errorCode: 0, memberEpoch: 2 });
    // A node that does not coordinate the group says so.
    const bystander = live().find((id) => id !== first)!;
    expect((await heartbeat(bystander, 'w-1', 2)).errorCode).toBe(ErrorCode.NOT_COORDINATOR);
    const before = await describe(first);
    expect(before).toEqual({ errorCode: 0, groupEpoch: 2, assignmentEpoch: 2, members: [['w-1', 2], ['w-2', 2]] });

    await kill(first);
    const second = await groupCoordinatorOf(g);
    expect(second).not.toBe(first);
    // The new coordinator replayed the group's records: same epochs and members, old epochs accepted.
    expect(await eventually('the new coordinator to describe the group', async () => {
      const d = await describe(second);
      return d.errorCode === 0 ? d : null;
    })).toEqual(before);
    expect(await heartbeat(second, 'w-1', 2)).toMatchObject({ errorCode: 0, memberEpoch: 2 });
    expect(await heartbeat(second, 'w-2', 2)).toMatchObject({ errorCode: 0, memberEpoch: 2 });
    await cluster.node(first).start();

    // The group's __consumer_offsets partition goes to another node and comes back, every node
    // staying up: the coordinator it comes back to serves what the other one wrote meanwhile.
    const admin = kafka.admin();
    await admin.connect();
    try {
      const offsetsPartition = partitionForKey(g, 3);
      const home = await groupCoordinatorOf(g);
      const away = [1, 2, 3].find((id) => id !== home)!;
      await leadPartition(admin, '__consumer_offsets', offsetsPartition, away);
      expect(await groupCoordinatorOf(g)).toBe(away);
      const joined = await eventually('w-3 to join at the other coordinator', async () => {
        const r = await heartbeat(away, 'w-3', 0);
        return r.errorCode === 0 ? r : null;
      });
      expect(joined.memberEpoch).toBe(3);
      await leadPartition(admin, '__consumer_offsets', offsetsPartition, home);
      expect(await groupCoordinatorOf(g)).toBe(home);
      expect(await eventually('the group back at its first coordinator', async () => {
        const d = await describe(home);
        return d.errorCode === 0 ? d : null;
      })).toEqual({ errorCode: 0, groupEpoch: 3, assignmentEpoch: 3, members: [['w-1', 2], ['w-2', 2], ['w-3', 3]] });
    } finally {
      await admin.disconnect();
    }
  }, 180_000);

  it('serves what other leaders persisted when a partition\'s leadership comes back to a node', async () => {
    while (live().length < 3) await cluster.node(cluster.nodes.find((n) => n.running === null)!.nodeId).start();
    const admin = kafka.admin();
    await admin.connect();
    const lead = (first: number): Promise<void> => leadPartition(admin, TOPIC, 0, first);
    try {
      const home = await partitionLeader();
      group = 'returning';
      expect((await shareFetch(home, 'r-a', 0, 0)).errorCode).toBe(0);
      const hw = await eventually('the share-partition to start', async () => {
        const s = await summaryAt(await shareCoordinator(group));
        return s.startOffset >= 0 ? s.startOffset : null;
      });
      await producer.send({ topic: TOPIC, acks: -1, messages: Array.from({ length: 10 }, (_, i) => ({ value: `later-${i}` })) });
      const first = await eventually('ten records acquired', async () => {
        const f = await shareFetch(home, 'r-a', 1, 3000);
        return f.acquired.length > 0 ? f : null;
      });
      expect(first.acquired).toEqual(range(hw, hw + 9, 1));
      expect(await accept(home, 'r-a', 2, hw, hw + 1)).toBe(0);

      // Leadership goes to another node while `home` keeps running; that leader acknowledges more.
      const away = [1, 2, 3].find((id) => id !== home)!;
      await lead(away);
      const second = await fetchAtLeader('r-b');
      expect(second).toEqual({ leader: away, acquired: range(hw + 2, hw + 9, 2) });
      expect(await accept(away, 'r-b', 1, hw + 2, hw + 5)).toBe(0);

      // Back at `home`: only what no leader saw acknowledged comes again, on its third delivery.
      await lead(home);
      const third = await fetchAtLeader('r-c');
      expect(third).toEqual({ leader: home, acquired: range(hw + 6, hw + 9, 3) });
    } finally {
      await admin.disconnect();
    }
  }, 180_000);
});
