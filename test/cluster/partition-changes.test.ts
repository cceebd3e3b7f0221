/**
 * Leader and ISR changes on a three-node cluster: AlterPartition from a partition leader with
 * Kafka's fencing errors, ElectLeaders (PREFERRED and UNCLEAN) with Kafka's per-partition errors,
 * unclean.leader.election.enable on node loss, and the metadata log's compare-and-swap refusing a
 * stale writer and a deposed controller (against the same real etcd).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Etcd3 } from 'etcd3';
import { Apis, type ApiSpec } from '../../src/client/apis.js';
import type { KafkaClient } from '../../src/client/kafka-client.js';
import { ErrorCode } from '../../src/protocol/generated/errors.js';
import { encodeAlterPartitionRequest, type AlterPartitionRequestInput } from '../../src/protocol/generated/messages/alter-partition-request.js';
import { decodeAlterPartitionResponse, type AlterPartitionResponse } from '../../src/protocol/generated/messages/alter-partition-response.js';
import { encodeElectLeadersRequest, type ElectLeadersRequestInput } from '../../src/protocol/generated/messages/elect-leaders-request.js';
import { decodeElectLeadersResponse, type ElectLeadersResponse } from '../../src/protocol/generated/messages/elect-leaders-response.js';
import type { MetadataResponse } from '../../src/protocol/generated/messages/metadata-response.js';
import type { ListPartitionReassignmentsResponse } from '../../src/protocol/generated/messages/list-partition-reassignments-response.js';
import { EtcdMetadataLog } from '../../src/controller/etcd/etcd-metadata-log.js';
import { eventually, startCluster, type RunningCluster } from '../helpers/cluster.js';
import { AlterReassignments, ListReassignments, onNode, topicMetadataOn } from '../helpers/node-client.js';

const AlterPartition: ApiSpec<AlterPartitionRequestInput, AlterPartitionResponse> = { apiKey: 56, versions: [2, 3], encode: encodeAlterPartitionRequest, decode: decodeAlterPartitionResponse };
const ElectLeaders: ApiSpec<ElectLeadersRequestInput, ElectLeadersResponse> = { apiKey: 43, versions: [2, 2], encode: encodeElectLeadersRequest, decode: decodeElectLeadersResponse };
const SESSION_MS = 3000;

let cluster: RunningCluster;

const on = <T>(nodeId: number, fn: (c: KafkaClient) => Promise<T>): Promise<T> => onNode(cluster, nodeId, 'pc', fn);
const metadata = (nodeId: number, topic: string): Promise<MetadataResponse> => topicMetadataOn(cluster, nodeId, 'pc', topic);

async function createAssigned(name: string, assignment: number[][], configs: { name: string; value: string }[] = []): Promise<string> {
  const r = await on(1, (c) =>
    c.send(Apis.CreateTopics, { topics: [{ name, numPartitions: -1, replicationFactor: -1, assignments: assignment.map((brokerIds, partitionIndex) => ({ partitionIndex, brokerIds })), configs }], timeoutMs: 10_000, validateOnly: false }),
  );
  expect(r.topics[0]!.errorCode).toBe(ErrorCode.NONE);
  return r.topics[0]!.topicId;
}

/** Partition 0 of `topic` as node `nodeId` sees it, once `ok` holds. */
const partitionOn = (nodeId: number, topic: string, ok: (p: MetadataResponse['topics'][number]['partitions'][number]) => boolean = () => true, timeoutMs = 10_000) =>
  eventually(`${topic}-0 on node ${nodeId}`, async () => {
    const p = (await metadata(nodeId, topic)).topics[0]?.partitions[0];
    return p && ok(p) ? p : null;
  }, timeoutMs);

const alter = (from: number, topicId: string, leaderEpoch: number, partitionEpoch: number, newIsr: number[], brokerEpoch = -1n) =>
  on(from, (c) => c.send(AlterPartition, { brokerId: from, brokerEpoch, topics: [{ topicId, partitions: [{ partitionIndex: 0, leaderEpoch, newIsrWithEpochs: newIsr.map((brokerId) => ({ brokerId, brokerEpoch: -1n })), partitionEpoch }] }] }));

const elect = (nodeId: number, electionType: number, topic: string) =>
  on(nodeId, async (c) => (await c.send(ElectLeaders, { electionType, topicPartitions: [{ topic, partitions: [0] }], timeoutMs: 10_000 })).replicaElectionResults[0]!.partitionResult[0]!);

beforeAll(async () => {
  cluster = await startCluster({ nodes: 3, overrides: { 'auto.leader.rebalance.enable': false } });
}, 240_000);

afterAll(async () => {
  await cluster?.destroy();
}, 60_000);

describe('partition leader and ISR changes', () => {
  it('AlterPartition: the leader shrinks and expands its ISR; stale or foreign callers get Kafka\'s errors', async () => {
    const topicId = await createAssigned('ap', [[1, 2, 3]]);
    const p0 = await partitionOn(2, 'ap');
    expect(p0).toMatchObject({ leaderId: 1, replicaNodes: [1, 2, 3], isrNodes: [1, 2, 3] });
    // The partition epoch is not in Metadata; a new partition starts at 0.
    const shrunk = await alter(1, topicId, p0.leaderEpoch, 0, [1, 2]);
    expect(shrunk.topics[0]!.partitions[0]).toMatchObject({ errorCode: ErrorCode.NONE, leaderId: 1, isr: [1, 2], partitionEpoch: 1 });
    // Node 3 is a caught-up follower, so the leader itself takes it back into the ISR (epoch 2).
    await partitionOn(3, 'ap', (p) => p.isrNodes.length === 3);
    expect((await alter(1, topicId, p0.leaderEpoch, 1, [1])).topics[0]!.partitions[0]!.errorCode).toBe(ErrorCode.INVALID_UPDATE_VERSION);
    expect((await alter(1, topicId, p0.leaderEpoch - 1, 2, [1])).topics[0]!.partitions[0]!.errorCode).toBe(ErrorCode.FENCED_LEADER_EPOCH);
    expect((await alter(2, topicId, p0.leaderEpoch, 2, [2])).topics[0]!.partitions[0]!.errorCode).toBe(ErrorCode.NOT_LEADER_OR_FOLLOWER);
    expect((await alter(1, topicId, p0.leaderEpoch, 2, [1, 2], 999_999n)).errorCode).toBe(ErrorCode.STALE_BROKER_EPOCH);
    expect((await alter(1, topicId, p0.leaderEpoch, 2, [1, 2, 7])).topics[0]!.partitions[0]!.errorCode).toBe(ErrorCode.INVALID_REQUEST);
  });

  it('ElectLeaders PREFERRED moves leadership back once the preferred replica is in the ISR again', async () => {
    await createAssigned('pref', [[3, 1, 2]]);
    expect(await elect(1, 0, 'pref')).toMatchObject({ errorCode: ErrorCode.ELECTION_NOT_NEEDED });
    // Node 3 shuts down: its leadership moves to 1 and it leaves the ISR.
    await cluster.node(3).stop();
    const moved = await partitionOn(1, 'pref', (p) => p.leaderId === 1);
    expect(moved.isrNodes).toEqual([1, 2]);
    await cluster.node(3).start();
    // Back as a follower, it catches up and the leader takes it into the ISR again...
    await partitionOn(1, 'pref', (p) => p.isrNodes.includes(3), SESSION_MS * 4);
    // ...and now the preferred replica can lead, at the next leader epoch.
    expect(await elect(2, 0, 'pref')).toMatchObject({ errorCode: ErrorCode.NONE });
    const after = await partitionOn(3, 'pref', (p) => p.leaderId === 3);
    expect(after.leaderEpoch).toBe(moved.leaderEpoch + 1);
  });

  it('losing the last ISR member: leader -1 (LEADER_NOT_AVAILABLE) unless unclean election is allowed; ElectLeaders UNCLEAN picks a live replica', async () => {
    await createAssigned('clean', [[2, 1]]);
    await createAssigned('unclean', [[2, 1]], [{ name: 'unclean.leader.election.enable', value: 'true' }]);
    // Node 1 dies: the controller takes it out of both ISRs, and node 2 is the last member.
    await cluster.node(1).kill();
    for (const topic of ['clean', 'unclean']) await partitionOn(3, topic, (p) => p.isrNodes.length === 1 && p.isrNodes[0] === 2, SESSION_MS * 4);
    await cluster.node(2).kill();
    await cluster.node(1).start();
    const unclean = await partitionOn(3, 'unclean', (p) => p.leaderId === 1, SESSION_MS * 4);
    expect(unclean.isrNodes).toEqual([1]);
    const clean = await partitionOn(3, 'clean', (p) => p.leaderId === -1, SESSION_MS * 4);
    expect(clean.errorCode).toBe(ErrorCode.LEADER_NOT_AVAILABLE);
    expect(clean.isrNodes).toEqual([2]);
    expect(clean.offlineReplicas).toEqual([2]);
    expect(await elect(3, 0, 'clean')).toMatchObject({ errorCode: ErrorCode.PREFERRED_LEADER_NOT_AVAILABLE });
    expect(await elect(3, 1, 'clean')).toMatchObject({ errorCode: ErrorCode.NONE });
    expect(await partitionOn(3, 'clean', (p) => p.leaderId === 1)).toMatchObject({ isrNodes: [1], errorCode: ErrorCode.NONE });
    expect(await elect(3, 1, 'clean')).toMatchObject({ errorCode: ErrorCode.ELECTION_NOT_NEEDED });
    await cluster.node(2).start();
  });

  it('a leaderless partition gets its leader back when its last ISR member returns', async () => {
    await createAssigned('returns', [[3, 2]]);
    // Node 2 dies first, so node 3 is the last ISR member when it dies too.
    await cluster.node(2).kill();
    await partitionOn(1, 'returns', (x) => x.isrNodes.length === 1 && x.isrNodes[0] === 3, SESSION_MS * 4);
    await cluster.node(3).kill();
    await partitionOn(1, 'returns', (x) => x.leaderId === -1, SESSION_MS * 4);
    await cluster.node(3).start();
    expect(await partitionOn(1, 'returns', (x) => x.leaderId === 3, SESSION_MS * 4)).toMatchObject({ errorCode: ErrorCode.NONE });
    await cluster.node(2).start();
  });

  it('AlterPartitionReassignments adds the new replicas, then drops the old ones once the new are in the ISR', async () => {
    await createAssigned('moving', [[1, 2]]);
    const p0 = await partitionOn(3, 'moving');
    const reassign = (replicas: number[] | null, allowReplicationFactorChange = false) =>
      on(1, async (c) => (await c.send(AlterReassignments, { timeoutMs: 10_000, allowReplicationFactorChange, topics: [{ name: 'moving', partitions: [{ partitionIndex: 0, replicas }] }] })).responses[0]!.partitions[0]!);
    const list = () => on(2, (c) => c.send(ListReassignments, { timeoutMs: 10_000, topics: null }));
    expect(await reassign(null)).toMatchObject({ errorCode: ErrorCode.NO_REASSIGNMENT_IN_PROGRESS });
    expect(await reassign([2, 3, 1])).toMatchObject({ errorCode: ErrorCode.INVALID_REPLICATION_FACTOR });
    expect(await reassign([2, 7])).toMatchObject({ errorCode: ErrorCode.INVALID_REPLICA_ASSIGNMENT });
    // Node 3 is held (SIGSTOP, shorter than its session) so the reassignment is seen in progress.
    cluster.node(3).pause();
    let ongoing: ListPartitionReassignmentsResponse;
    try {
      expect(await reassign([2, 3])).toMatchObject({ errorCode: ErrorCode.NONE });
      ongoing = await eventually('the reassignment listed on node 2', async () => {
        const l = await list();
        return l.topics.length > 0 ? l : null;
      });
    } finally {
      cluster.node(3).resume();
    }
    expect(ongoing.topics).toEqual([{ name: 'moving', partitions: [{ partitionIndex: 0, replicas: [2, 3, 1], addingReplicas: [3], removingReplicas: [1] }] }]);
    // Node 3 catches up as a follower: the leader takes it into the ISR, which completes the
    // reassignment with the first new replica leading at the next epoch.
    expect(await partitionOn(1, 'moving', (p) => p.replicaNodes.length === 2, SESSION_MS * 4)).toMatchObject({ leaderId: 2, leaderEpoch: p0.leaderEpoch + 1, replicaNodes: [2, 3], isrNodes: [2, 3] });
    await eventually('no reassignment listed', async () => ((await list()).topics.length === 0 ? true : null));
  });

  it('the metadata log refuses a stale offset and a deposed controller', async () => {
    const client = new Etcd3({ hosts: cluster.etcd.endpoint });
    try {
      const prefix = '/cas-test';
      const ctlKey = `${prefix}/controller`;
      const lease1 = client.lease(5, { autoKeepAlive: false });
      const won = await client.if(ctlKey, 'Create', '==', 0).then(client.put(ctlKey).value('1').lease(await lease1.grant())).commit();
      const fence1 = { key: ctlKey, createRevision: won.header.revision };
      const log = new EtcdMetadataLog(client, `${prefix}/metadata`, () => fence1, () => undefined);
      const rec = Buffer.from([1, 2, 3]);
      expect(await log.appendIf([rec], -1, true)).toEqual({ kind: 'ok', lastOffset: 0 });
      expect(await log.appendIf([rec, rec], 0, false)).toEqual({ kind: 'ok', lastOffset: 2 });
      // A writer that validated against offset 0 is too late: the log is at 2.
      expect(await log.appendIf([rec], 0, false)).toEqual({ kind: 'stale', headOffset: 2 });
      // Controller 1 loses its lease; controller 2 is elected; 1's fenced writes are refused.
      await lease1.revoke();
      await client.if(ctlKey, 'Create', '==', 0).then(client.put(ctlKey).value('2')).commit();
      expect(await log.appendIf([rec], 2, true)).toEqual({ kind: 'notController' });
      const replayed: number[] = [];
      await log.replay((offset) => replayed.push(offset));
      expect(replayed).toEqual([0, 1, 2]);
    } finally {
      client.close();
    }
  });
});
