/**
 * Partition directories on a three-node cluster: a node holds a directory only for the partitions
 * it replicates (a node outside the replica set answers NOT_LEADER_OR_FOLLOWER and has none), a
 * node that a reassignment adds creates it then, and a replica that a reassignment removes, that
 * a cancelled reassignment was adding, or whose topic is deleted has its directory removed on
 * that node, also when the change happened while the node was down.
 */
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Kafka, logLevel } from 'kafkajs';
import { Apis } from '../../src/client/apis.js';
import type { KafkaClient } from '../../src/client/kafka-client.js';
import { ErrorCode } from '../../src/protocol/generated/errors.js';
import type { MetadataResponse } from '../../src/protocol/generated/messages/metadata-response.js';
import { eventually, startCluster, type RunningCluster } from '../helpers/cluster.js';
import { AlterReassignments, ListReassignments, onNode, topicMetadataOn } from '../helpers/node-client.js';

const SLOW_MS = 20_000;

let cluster: RunningCluster;

const on = <T>(nodeId: number, fn: (c: KafkaClient) => Promise<T>): Promise<T> => onNode(cluster, nodeId, 'rl', fn);
const metadata = (nodeId: number, topic: string): Promise<MetadataResponse> => topicMetadataOn(cluster, nodeId, 'rl', topic);

const partitionOn = (nodeId: number, topic: string, ok: (p: MetadataResponse['topics'][number]['partitions'][number]) => boolean) =>
  eventually(`${topic}-0 on node ${nodeId}`, async () => {
    const p = (await metadata(nodeId, topic)).topics[0]?.partitions[0];
    return p && ok(p) ? p : null;
  }, SLOW_MS);

/** The partition directories (and interrupted deletions) of `topic` in node `nodeId`'s data dir. */
function dirsOf(nodeId: number, topic: string): string[] {
  const dir = cluster.node(nodeId).dataDir!;
  return readdirSync(dir).filter((n) => n.startsWith(`${topic}-`)).sort();
}

const hasDir = (nodeId: number, topic: string): boolean => existsSync(join(cluster.node(nodeId).dataDir!, `${topic}-0`));

async function createAssigned(name: string, replicas: number[]): Promise<string> {
  const r = await on(1, (c) =>
    c.send(Apis.CreateTopics, { topics: [{ name, numPartitions: -1, replicationFactor: -1, assignments: [{ partitionIndex: 0, brokerIds: replicas }], configs: [] }], timeoutMs: 10_000, validateOnly: false }),
  );
  expect(r.topics[0]!.errorCode).toBe(ErrorCode.NONE);
  return r.topics[0]!.topicId;
}

const reassign = (topic: string, replicas: number[] | null) =>
  on(1, async (c) => (await c.send(AlterReassignments, { timeoutMs: 10_000, allowReplicationFactorChange: false, topics: [{ name: topic, partitions: [{ partitionIndex: 0, replicas }] }] })).responses[0]!.partitions[0]!);

const listed = (nodeId: number) => on(nodeId, (c) => c.send(ListReassignments, { timeoutMs: 10_000, topics: null }));

async function produce(topic: string, values: string[]): Promise<void> {
  const producer = new Kafka({ clientId: 'replica-logs', brokers: cluster.bootstrap, logLevel: logLevel.NOTHING }).producer();
  await producer.connect();
  try {
    await producer.send({ topic, acks: -1, messages: values.map((value) => ({ value })) });
  } finally {
    await producer.disconnect();
  }
}

/** Fetch and ListOffsets for partition 0 sent to node `nodeId` itself. */
async function askDirectly(nodeId: number, topic: string, topicId: string): Promise<{ fetch: number; listOffsets: number }> {
  return on(nodeId, async (c) => {
    const f = await c.send(Apis.Fetch, {
      replicaId: -1, maxWaitMs: 0, minBytes: 0, maxBytes: 1 << 20, isolationLevel: 0, sessionId: 0, sessionEpoch: -1,
      topics: [{ topicId, partitions: [{ partition: 0, currentLeaderEpoch: -1, fetchOffset: 0n, partitionMaxBytes: 1 << 20 }] }],
      forgottenTopicsData: [],
    });
    const l = await c.send(Apis.ListOffsets, { replicaId: -1, isolationLevel: 0, topics: [{ name: topic, partitions: [{ partitionIndex: 0, currentLeaderEpoch: -1, timestamp: -1n }] }] });
    return { fetch: f.responses[0]!.partitions[0]!.errorCode, listOffsets: l.topics[0]!.partitions[0]!.errorCode };
  });
}

beforeAll(async () => {
  cluster = await startCluster({ nodes: 3, overrides: { 'auto.leader.rebalance.enable': false } });
}, 240_000);

afterAll(async () => {
  await cluster?.destroy();
}, 60_000);

describe('partition directories follow the replica assignment', () => {
  it('a node outside the replica set has no directory and answers NOT_LEADER_OR_FOLLOWER; a node a reassignment adds creates it, one it removes deletes it', async () => {
    const topicId = await createAssigned('placed', [1, 2]);
    await produce('placed', ['a', 'b', 'c']);
    await partitionOn(3, 'placed', (p) => p.isrNodes.length === 2);
    expect(hasDir(1, 'placed') && hasDir(2, 'placed')).toBe(true);
    expect(dirsOf(3, 'placed')).toEqual([]);
    expect(await askDirectly(3, 'placed', topicId)).toEqual({ fetch: ErrorCode.NOT_LEADER_OR_FOLLOWER, listOffsets: ErrorCode.NOT_LEADER_OR_FOLLOWER });
    // Asking did not create one either.
    expect(dirsOf(3, 'placed')).toEqual([]);

    expect(await reassign('placed', [2, 3])).toMatchObject({ errorCode: ErrorCode.NONE });
    await partitionOn(3, 'placed', (p) => p.replicaNodes.join() === '2,3' && p.isrNodes.length === 2);
    expect(hasDir(3, 'placed')).toBe(true);
    await eventually('node 1 deleting its replica', async () => dirsOf(1, 'placed').length === 0, SLOW_MS);
    expect(await askDirectly(1, 'placed', topicId)).toEqual({ fetch: ErrorCode.NOT_LEADER_OR_FOLLOWER, listOffsets: ErrorCode.NOT_LEADER_OR_FOLLOWER });

    // Moved off node 2 while node 2 is down: node 2 deletes the replica when it starts again.
    await cluster.node(2).stop();
    expect(await reassign('placed', [3, 1])).toMatchObject({ errorCode: ErrorCode.NONE });
    await partitionOn(3, 'placed', (p) => p.replicaNodes.join() === '3,1' && p.isrNodes.length === 2);
    expect(hasDir(1, 'placed')).toBe(true);
    expect(hasDir(2, 'placed')).toBe(true);
    await cluster.node(2).start();
    expect(dirsOf(2, 'placed')).toEqual([]);
    await cluster.node(2).stop();
    await cluster.node(2).start();
    expect(dirsOf(2, 'placed')).toEqual([]);

    // The records came along to the new replicas.
    const consumer = new Kafka({ clientId: 'replica-logs-read', brokers: cluster.bootstrap, logLevel: logLevel.NOTHING }).consumer({ groupId: 'replica-logs' });
    await consumer.connect();
    try {
      const seen: string[] = [];
      await consumer.subscribe({ topic: 'placed', fromBeginning: true });
      await consumer.run({ eachMessage: async ({ message }) => void seen.push(message.value!.toString()) });
      await eventually('the three records', async () => seen.length >= 3, SLOW_MS);
      expect(seen).toEqual(['a', 'b', 'c']);
    } finally {
      await consumer.disconnect();
    }
  });

  it('cancelling a reassignment reverts to the original replicas and the replica that was being added deletes its directory', async () => {
    await createAssigned('cancelled', [1, 2]);
    await partitionOn(3, 'cancelled', (p) => p.isrNodes.length === 2);
    // Node 3 is held (SIGSTOP, shorter than its session) so the reassignment stays in progress.
    cluster.node(3).pause();
    try {
      expect(await reassign('cancelled', [1, 3])).toMatchObject({ errorCode: ErrorCode.NONE });
      const ongoing = await listed(1);
      expect(ongoing.topics).toEqual([{ name: 'cancelled', partitions: [{ partitionIndex: 0, replicas: [1, 3, 2], addingReplicas: [3], removingReplicas: [2] }] }]);
      expect(await reassign('cancelled', null)).toMatchObject({ errorCode: ErrorCode.NONE });
    } finally {
      cluster.node(3).resume();
    }
    expect((await listed(3)).topics).toEqual([]);
    expect(await partitionOn(3, 'cancelled', (p) => p.replicaNodes.join() === '1,2')).toMatchObject({ leaderId: 1, isrNodes: [1, 2] });
    expect(await reassign('cancelled', null)).toMatchObject({ errorCode: ErrorCode.NO_REASSIGNMENT_IN_PROGRESS });
    await eventually('node 3 holding no replica of cancelled', async () => dirsOf(3, 'cancelled').length === 0, SLOW_MS);
    expect(hasDir(1, 'cancelled') && hasDir(2, 'cancelled')).toBe(true);
  });

  it('a deleted topic leaves no directory on any node', async () => {
    await createAssigned('gone', [1, 2, 3]);
    await partitionOn(1, 'gone', (p) => p.isrNodes.length === 3);
    // A new partition's ISR is its whole replica set from the start, so each follower may still
    // be opening its log when the leader already reports it.
    for (const n of [1, 2, 3]) await eventually(`node ${n} holding gone-0`, async () => hasDir(n, 'gone'), SLOW_MS);
    const r = await on(3, (c) => c.send(Apis.DeleteTopics, { topics: [], topicNames: ['gone'], timeoutMs: 10_000 }));
    expect(r.responses[0]!.errorCode).toBe(ErrorCode.NONE);
    for (const n of [1, 2, 3]) await eventually(`node ${n} deleting gone-0`, async () => dirsOf(n, 'gone').length === 0, SLOW_MS);
  });
});
