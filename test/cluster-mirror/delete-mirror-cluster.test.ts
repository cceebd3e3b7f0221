/**
 * DeleteClusterMirror on a three-node destination (one etcd, three `fjord start` processes, a
 * Fjord source node):
 *  - it waits for every partition's persisted STOPPED: a `__mirror_state` coordinator that does
 *    not answer (its node frozen with SIGSTOP) confirms nothing, and the delete is refused with
 *    INVALID_CLUSTER_MIRROR_STATES instead of unbinding a partition it cannot see;
 *  - once it goes through, the mirror's `__mirror_state` records are tombstoned in every shard,
 *    each by its own coordinator, not only in the shards the receiving node leads.
 */
import { Kafka, logLevel } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MirrorAdmin } from '../../src/admin/mirror-admin.js';
import { Apis, type ApiSpec } from '../../src/client/apis.js';
import { KafkaClient } from '../../src/client/kafka-client.js';
import { partitionForKey } from '../../src/coordinator/coordinator-runtime.js';
import { mirrorStateKeyString } from '../../src/mirror/mirror-coordinator.js';
import { ApiKey } from '../../src/protocol/generated/api-table.js';
import { ErrorCode } from '../../src/protocol/generated/errors.js';
import { encodeReadMirrorStatesRequest, type ReadMirrorStatesRequestInput } from '../../src/protocol/generated/messages/read-mirror-states-request.js';
import { decodeReadMirrorStatesResponse, type ReadMirrorStatesResponse } from '../../src/protocol/generated/messages/read-mirror-states-response.js';
import { eventually, startCluster, type RunningCluster } from '../helpers/cluster.js';
import { startNode, type RunningNode } from '../helpers/node.js';

const READ_MIRROR_STATES: ApiSpec<ReadMirrorStatesRequestInput, ReadMirrorStatesResponse> = { apiKey: ApiKey.ReadMirrorStates, versions: [0, 0], encode: encodeReadMirrorStatesRequest, decode: decodeReadMirrorStatesResponse };
const FAST = { 'mirror.failed.retry.initial.backoff.ms': 200, 'mirror.failed.retry.max.backoff.ms': 1000, 'mirror.metadata.refresh.interval.ms': 500 };
const MIRROR = 'gone';
const TOPIC = 'spread';
/** Enough partitions that their states land in shards led by every node. */
const PARTITIONS = 12;
const STATE_PARTITIONS = 6;
const STOPPED = 6;
const UNKNOWN = -1;

let cluster: RunningCluster;
let source: RunningNode;
const closers: (() => void)[] = [];

function client(nodeId: number): KafkaClient {
  const c = new KafkaClient({ bootstrapServers: [cluster.node(nodeId).bootstrap], requestTimeoutMs: 10_000 });
  closers.push(() => c.close());
  return c;
}

function admin(): MirrorAdmin {
  const a = new MirrorAdmin({ bootstrapServers: cluster.bootstrap, requestTimeoutMs: 10_000 });
  closers.push(() => a.close());
  return a;
}

async function leaders(topic: string): Promise<{ topicId: string; leaders: number[] }> {
  const t = (await client(1).metadata([topic])).topics.find((x) => x.name === topic);
  return { topicId: t?.topicId ?? '', leaders: [...(t?.partitions ?? [])].sort((a, b) => a.partitionIndex - b.partitionIndex).map((p) => p.leaderId) };
}

/** The node whose `__mirror_state` shard holds each partition's state. */
async function coordinators(topicId: string): Promise<number[]> {
  const shards = (await leaders('__mirror_state')).leaders;
  return Array.from({ length: PARTITIONS }, (_, p) => shards[partitionForKey(mirrorStateKeyString(MIRROR, topicId, p), STATE_PARTITIONS)]!);
}

async function stateAt(nodeId: number, partition: number): Promise<{ state: number; lastMirrorEpoch: number; errorCode: number }> {
  const r = await client(nodeId).send(READ_MIRROR_STATES, { mirrorName: MIRROR, topics: [{ name: TOPIC, partitions: [{ partitionIndex: partition }] }] });
  return r.topics[0]!.partitions[0]!;
}

const deleteThrough = async (nodeId: number) => client(nodeId).send(Apis.DeleteClusterMirror, { mirrorName: MIRROR, stateValidationOffset: -1n });

beforeAll(async () => {
  [cluster, source] = await Promise.all([
    startCluster({
      nodes: 3,
      // A frozen node keeps its partitions for the length of one delete attempt.
      overrides: { ...FAST, 'broker.session.timeout.ms': 15_000, 'default.replication.factor': 1, 'mirror.state.topic.replication.factor': 1, 'mirror.state.topic.num.partitions': STATE_PARTITIONS },
    }),
    startNode({ overrides: FAST }),
  ]);
  const kafka = new Kafka({ clientId: 'delete-mirror-source', brokers: [source.bootstrap], logLevel: logLevel.NOTHING });
  const a = kafka.admin();
  await a.connect();
  await a.createTopics({ topics: [{ topic: TOPIC, numPartitions: PARTITIONS }], waitForLeaders: true });
  await a.disconnect();
  const producer = kafka.producer({ allowAutoTopicCreation: false });
  await producer.connect();
  await producer.send({ topic: TOPIC, acks: -1, messages: Array.from({ length: PARTITIONS }, (_, p) => ({ partition: p, value: `v${p}` })) });
  await producer.disconnect();
  await admin().createClusterMirror(MIRROR, { 'bootstrap.servers': source.bootstrap, 'mirror.fetch.wait.max.ms': '100', 'mirror.socket.timeout.ms': '3000' });
  expect((await admin().startMirrorTopics(MIRROR, [TOPIC])).map((t) => t.errorCode)).toEqual([0]);
  await eventually('every partition MIRRORING', async () => {
    const [m] = await admin().describeClusterMirrors([MIRROR]);
    const parts = (m?.partitions ?? []).filter((p) => p.topic === TOPIC);
    return parts.length === PARTITIONS && parts.every((p) => p.state === 'MIRRORING' && p.lag === 0);
  });
  await admin().stopMirrorTopics(MIRROR, [TOPIC]);
  await eventually('every partition STOPPED', async () => {
    const [m] = await admin().describeClusterMirrors([MIRROR]);
    const parts = (m?.partitions ?? []).filter((p) => p.topic === TOPIC);
    return parts.length === PARTITIONS && parts.every((p) => p.state === 'STOPPED');
  });
}, 150_000);

afterAll(async () => {
  for (const c of closers) c();
  for (const n of cluster?.nodes ?? []) n.resume();
  await source?.destroy();
  await cluster?.destroy();
});

describe('DeleteClusterMirror on a cluster', () => {
  it('is refused while a partition\'s mirror coordinator does not answer', async () => {
    const { topicId, leaders: ls } = await leaders(TOPIC);
    const coords = await coordinators(topicId);
    // A partition node 1 neither leads nor keeps the state of: node 1 can only ask its coordinator.
    const p = ls.findIndex((l, i) => l !== 1 && coords[i] !== 1);
    expect(p).toBeGreaterThanOrEqual(0);
    const frozen = cluster.node(coords[p]!);
    expect((await stateAt(frozen.nodeId, p)).state).toBe(STOPPED);
    frozen.pause();
    let refused;
    try {
      refused = await deleteThrough(1);
    } finally {
      frozen.resume();
    }
    expect(refused.errorCode).toBe(ErrorCode.INVALID_CLUSTER_MIRROR_STATES);
    expect(refused.errorMessage).toMatch(/not known to be STOPPED/);
    expect((await admin().listClusterMirrors()).map((m) => m.mirrorName)).toEqual([MIRROR]);
  }, 60_000);

  it('tombstones the mirror\'s state in every shard, whichever node leads it', async () => {
    const { topicId } = await leaders(TOPIC);
    const coords = await coordinators(topicId);
    // The test is only worth something when the states are spread beyond the node asked to delete.
    expect(new Set(coords).size).toBeGreaterThan(1);
    for (let p = 0; p < PARTITIONS; p++) expect((await stateAt(coords[p]!, p)).state).toBe(STOPPED);
    expect((await eventually('delete accepted', async () => (await deleteThrough(1)).errorCode === 0))).toBe(true);
    await eventually(
      'every shard tombstoned',
      async () => {
        for (let p = 0; p < PARTITIONS; p++) {
          const s = await stateAt(coords[p]!, p);
          if (s.errorCode !== 0 || s.state !== UNKNOWN || s.lastMirrorEpoch !== -1) return false;
        }
        return true;
      },
      20_000,
    );
  }, 60_000);
});
