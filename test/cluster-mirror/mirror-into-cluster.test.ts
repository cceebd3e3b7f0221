/**
 * KIP-1279 on a replicated destination: a Fjord source node mirrored into a three-node Fjord
 * cluster (one etcd, three `fjord start` processes, RF 3 for the mirror topic and for
 * `__mirror_state`). Each destination partition leader fetches its own partitions and keeps its
 * state in the `__mirror_state` partition's leader, which is on another node for some of them
 * (ReadMirrorStates / WriteMirrorStates over the wire). DescribeClusterMirrors merged by the
 * admin client shows every partition with its lag, from whichever broker leads it. A SIGKILLed
 * leader's partitions resume on the new leaders from the persisted state: every replica's
 * segment files end equal to the source's, every value once.
 */
import { readFileSync, readdirSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { Kafka, logLevel, type Producer } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MirrorAdmin, type PartitionMirrorDescription } from '../../src/admin/mirror-admin.js';
import { Apis, type ApiSpec } from '../../src/client/apis.js';
import { KafkaClient } from '../../src/client/kafka-client.js';
import { partitionForKey } from '../../src/coordinator/coordinator-runtime.js';
import { mirrorStateKeyString } from '../../src/mirror/mirror-coordinator.js';
import { ApiKey } from '../../src/protocol/generated/api-table.js';
import { ErrorCode } from '../../src/protocol/generated/errors.js';
import { encodeBumpLeaderEpochsRequest, type BumpLeaderEpochsRequestInput } from '../../src/protocol/generated/messages/bump-leader-epochs-request.js';
import { decodeBumpLeaderEpochsResponse, type BumpLeaderEpochsResponse } from '../../src/protocol/generated/messages/bump-leader-epochs-response.js';
import { encodeReadMirrorStatesRequest, type ReadMirrorStatesRequestInput } from '../../src/protocol/generated/messages/read-mirror-states-request.js';
import { decodeReadMirrorStatesResponse, type ReadMirrorStatesResponse } from '../../src/protocol/generated/messages/read-mirror-states-response.js';
import { encodeWriteMirrorStatesRequest, type WriteMirrorStatesRequestInput } from '../../src/protocol/generated/messages/write-mirror-states-request.js';
import { decodeWriteMirrorStatesResponse, type WriteMirrorStatesResponse } from '../../src/protocol/generated/messages/write-mirror-states-response.js';
import { encodePauseMirrorTopicsRequest, type PauseMirrorTopicsRequestInput } from '../../src/protocol/generated/messages/pause-mirror-topics-request.js';
import { decodePauseMirrorTopicsResponse, type PauseMirrorTopicsResponse } from '../../src/protocol/generated/messages/pause-mirror-topics-response.js';
import { encodeResumeMirrorTopicsRequest, type ResumeMirrorTopicsRequestInput } from '../../src/protocol/generated/messages/resume-mirror-topics-request.js';
import { decodeResumeMirrorTopicsResponse, type ResumeMirrorTopicsResponse } from '../../src/protocol/generated/messages/resume-mirror-topics-response.js';
import { eventually, startCluster, type RunningCluster } from '../helpers/cluster.js';
import { startNode, type RunningNode } from '../helpers/node.js';

const FAST = { 'mirror.failed.retry.initial.backoff.ms': 200, 'mirror.failed.retry.max.backoff.ms': 1000, 'mirror.metadata.refresh.interval.ms': 1000 };
const TOPIC = 'orders';
/** Single-partition mirrored topics: at least one is led away from the node that keeps its state. */
const LEDGERS = ['ledger-a', 'ledger-b', 'ledger-c', 'ledger-d', 'ledger-e'];
const PARTITIONS = 3;
const MIRROR = 'dr';
const STATE_PARTITIONS = 5;
const MIRRORING = 2;
const PAUSED = 4;

const READ_MIRROR_STATES: ApiSpec<ReadMirrorStatesRequestInput, ReadMirrorStatesResponse> = { apiKey: ApiKey.ReadMirrorStates, versions: [0, 0], encode: encodeReadMirrorStatesRequest, decode: decodeReadMirrorStatesResponse };
const BUMP_LEADER_EPOCHS: ApiSpec<BumpLeaderEpochsRequestInput, BumpLeaderEpochsResponse> = { apiKey: ApiKey.BumpLeaderEpochs, versions: [0, 0], encode: encodeBumpLeaderEpochsRequest, decode: decodeBumpLeaderEpochsResponse };
const PAUSE_MIRROR_TOPICS: ApiSpec<PauseMirrorTopicsRequestInput, PauseMirrorTopicsResponse> = { apiKey: ApiKey.PauseMirrorTopics, versions: [0, 0], encode: encodePauseMirrorTopicsRequest, decode: decodePauseMirrorTopicsResponse };
const RESUME_MIRROR_TOPICS: ApiSpec<ResumeMirrorTopicsRequestInput, ResumeMirrorTopicsResponse> = { apiKey: ApiKey.ResumeMirrorTopics, versions: [0, 0], encode: encodeResumeMirrorTopicsRequest, decode: decodeResumeMirrorTopicsResponse };
const WRITE_MIRROR_STATES: ApiSpec<WriteMirrorStatesRequestInput, WriteMirrorStatesResponse> = { apiKey: ApiKey.WriteMirrorStates, versions: [0, 0], encode: encodeWriteMirrorStatesRequest, decode: decodeWriteMirrorStatesResponse };

let cluster: RunningCluster;
let source: RunningNode;
let sourceProducer: Producer;
const closers: (() => void)[] = [];

/** An admin client bootstrapped at the running nodes, leaving out `except` (a SIGSTOPped one would hang it). */
function admin(except: readonly number[] = []): MirrorAdmin {
  const a = new MirrorAdmin({ bootstrapServers: cluster.nodes.filter((n) => n.running !== null && !except.includes(n.nodeId)).map((n) => n.bootstrap), requestTimeoutMs: 5000 });
  closers.push(() => a.close());
  return a;
}

function client(nodeId: number): KafkaClient {
  const c = new KafkaClient({ bootstrapServers: [cluster.node(nodeId).bootstrap], requestTimeoutMs: 10_000 });
  closers.push(() => c.close());
  return c;
}

/** Leader node id of each partition of `topic` and its topic id, as a live node's Metadata answers it. */
async function leaders(topic: string): Promise<{ topicId: string; leaders: number[] }> {
  const live = cluster.nodes.find((n) => n.running !== null)!;
  const md = await client(live.nodeId).metadata([topic]);
  const t = md.topics.find((x) => x.name === topic);
  return { topicId: t?.topicId ?? '', leaders: [...(t?.partitions ?? [])].sort((a, b) => a.partitionIndex - b.partitionIndex).map((p) => p.leaderId) };
}

/** The node leading the `__mirror_state` partition that holds TOPIC-`partition`'s state. */
async function coordinatorOf(topicId: string, partition: number): Promise<number> {
  const shard = partitionForKey(mirrorStateKeyString(MIRROR, topicId, partition), STATE_PARTITIONS);
  return (await leaders('__mirror_state')).leaders[shard]!;
}

async function readState(nodeId: number, partition: number) {
  const r = await client(nodeId).send(READ_MIRROR_STATES, { mirrorName: MIRROR, topics: [{ name: TOPIC, partitions: [{ partitionIndex: partition }] }] });
  return r.topics[0]!.partitions[0]!;
}

function segments(dataDir: string, topic: string, partition: number): Buffer {
  const dir = join(dataDir, `${topic}-${partition}`);
  if (!existsSync(dir)) return Buffer.alloc(0);
  return Buffer.concat(readdirSync(dir).filter((f) => f.endsWith('.log')).sort().map((f) => readFileSync(join(dir, f))));
}

/** Every partition of the mirror as the admin's merged describe shows it. */
async function described(): Promise<readonly PartitionMirrorDescription[]> {
  const [m] = await admin().describeClusterMirrors([MIRROR]);
  return m?.partitions ?? [];
}

async function caughtUp(): Promise<readonly PartitionMirrorDescription[] | null> {
  const parts = (await described()).filter((p) => p.topic === TOPIC);
  return parts.length === PARTITIONS && parts.every((p) => p.state === 'MIRRORING' && p.lag === 0) ? parts : null;
}

/** Every live destination replica of every partition equals the source's log, byte for byte. */
function replicasEqualSource(): boolean {
  for (let p = 0; p < PARTITIONS; p++) {
    const want = segments(source.dataDir, TOPIC, p);
    for (const n of cluster.nodes) if (n.running !== null && !segments(n.dataDir!, TOPIC, p).equals(want)) return false;
  }
  return true;
}

async function produce(from: number, to: number): Promise<void> {
  for (let i = from; i < to; i += 50) {
    const n = Math.min(50, to - i);
    await sourceProducer.send({ topic: TOPIC, acks: -1, messages: Array.from({ length: n }, (_, j) => ({ partition: (i + j) % PARTITIONS, value: `v${i + j}` })) });
  }
}

beforeAll(async () => {
  [cluster, source] = await Promise.all([
    startCluster({
      nodes: 3,
      // A session long enough that a SIGSTOPped leader keeps its partitions while a test looks at them.
      overrides: { ...FAST, 'broker.session.timeout.ms': 10_000, 'default.replication.factor': 3, 'mirror.state.topic.replication.factor': 3, 'mirror.state.topic.num.partitions': STATE_PARTITIONS, 'min.insync.replicas': 2, 'replica.lag.time.max.ms': 3000 },
    }),
    startNode({ overrides: FAST }),
  ]);
  const kafka = new Kafka({ clientId: 'mirror-cluster-source', brokers: [source.bootstrap], logLevel: logLevel.NOTHING });
  const a = kafka.admin();
  await a.connect();
  await a.createTopics({ topics: [{ topic: TOPIC, numPartitions: PARTITIONS }, ...LEDGERS.map((topic) => ({ topic, numPartitions: 1 }))], waitForLeaders: true });
  await a.disconnect();
  sourceProducer = kafka.producer({ idempotent: true, maxInFlightRequests: 1, allowAutoTopicCreation: false });
  await sourceProducer.connect();
}, 120_000);

afterAll(async () => {
  for (const c of closers) c();
  await sourceProducer?.disconnect().catch(() => undefined);
  await source?.destroy();
  await cluster?.destroy();
});

describe('mirroring into a three-node Fjord cluster', () => {
  it('each partition leader mirrors its partitions, state kept by the __mirror_state leaders; describe shows every partition', async () => {
    await produce(0, 600);
    await admin().createClusterMirror(MIRROR, { 'bootstrap.servers': source.bootstrap, 'mirror.fetch.wait.max.ms': '100', 'mirror.socket.timeout.ms': '3000' });
    const started = await admin().startMirrorTopics(MIRROR, [TOPIC]);
    expect(started.map((t) => t.errorCode)).toEqual([0]);
    const parts = await eventually('every partition MIRRORING with lag 0', caughtUp, 30_000).catch(async (e: unknown) => {
      console.log(JSON.stringify(await described()));
      for (const n of cluster.nodes) console.log(n.logs().split('\n').filter((l) => l.includes('mirror')).slice(-15).join('\n'));
      throw e;
    });
    expect(parts.map((p) => p.destinationOffset)).toEqual([200, 200, 200]);
    // The destination topic is replicated on every node, leaders spread over the cluster.
    const { leaders: ls } = await leaders(TOPIC);
    expect(ls.every((l) => l > 0)).toBe(true);
    await eventually('every replica equal to the source', async () => replicasEqualSource(), 30_000);
  }, 90_000);

  it('ReadMirrorStates answers the state at the coordinator and NOT_COORDINATOR elsewhere; an older leader epoch is fenced', async () => {
    const { topicId, leaders: ls } = await leaders(TOPIC);
    const coord = await coordinatorOf(topicId, 0);
    const at = await readState(coord, 0);
    expect(at.errorCode).toBe(ErrorCode.NONE);
    expect(at.state).toBe(MIRRORING);
    for (const n of cluster.nodes.filter((x) => x.nodeId !== coord)) expect((await readState(n.nodeId, 0)).errorCode).toBe(ErrorCode.NOT_COORDINATOR);
    // BumpLeaderEpochs served by a node that neither leads the partition nor need be the controller.
    const epochOf = async (nodeId: number) => (await client(nodeId).metadata([TOPIC])).topics[0]!.partitions.find((p) => p.partitionIndex === 0)!.leaderEpoch;
    const before = await epochOf(ls[0]!);
    const bumper = cluster.nodes.find((x) => x.nodeId !== ls[0])!.nodeId;
    const bumped = await client(bumper).send(BUMP_LEADER_EPOCHS, { topics: [{ topicId, partitions: [{ partitionIndex: 0, minLeaderEpoch: before }] }] });
    expect(bumped.topics[0]!.partitions[0]!.errorCode).toBe(ErrorCode.NONE);
    await eventually('the bumped epoch on every node', async () => (await Promise.all(cluster.nodes.map((n) => epochOf(n.nodeId)))).every((e) => e === before + 1));
    // A write at the epoch before the bump (a deposed leader's): refused, nothing changed.
    const write = (leaderEpoch: number) =>
      client(coord).send(WRITE_MIRROR_STATES, { mirrorName: MIRROR, stoppedTopics: [], topics: [{ name: TOPIC, partitions: [{ partitionIndex: 0, state: PAUSED, leaderEpoch }] }] });
    const epoch = before + 1;
    const fenced = await write(before);
    expect(fenced.topics[0]!.partitions[0]!.errorCode).toBe(ErrorCode.FENCED_LEADER_EPOCH);
    expect((await readState(coord, 0)).state).toBe(MIRRORING);
    const other = cluster.nodes.find((x) => x.nodeId !== coord)!.nodeId;
    const elsewhere = await client(other).send(WRITE_MIRROR_STATES, { mirrorName: MIRROR, stoppedTopics: [], topics: [{ name: TOPIC, partitions: [{ partitionIndex: 0, state: PAUSED, leaderEpoch: epoch }] }] });
    expect(elsewhere.topics[0]!.partitions[0]!.errorCode).toBe(ErrorCode.NOT_COORDINATOR);
    expect((await readState(coord, 0)).state).toBe(MIRRORING);
  }, 30_000);

  it('Resume is validated against the state its coordinator keeps for a partition led on a stopped node', async () => {
    await sourceProducer.sendBatch({ acks: -1, topicMessages: LEDGERS.map((topic) => ({ topic, messages: [{ value: 'l0' }, { value: 'l1' }] })) });
    expect((await admin().startMirrorTopics(MIRROR, LEDGERS)).map((t) => t.errorCode)).toEqual(LEDGERS.map(() => 0));
    const ledgerIn = async (topic: string, state: string) => (await described()).some((p) => p.topic === topic && p.state === state);
    await eventually('every ledger MIRRORING', async () => (await Promise.all(LEDGERS.map((t) => ledgerIn(t, 'MIRRORING')))).every(Boolean), 30_000);
    // A topic whose only partition is led by one node while another keeps its state: that other
    // node leads nothing of the topic, so all it knows of the partition is what it coordinates.
    const shardLeaders = (await leaders('__mirror_state')).leaders;
    let pick: { topic: string; leader: number; coordinator: number; shard: number } | null = null;
    for (const topic of LEDGERS) {
      const { topicId, leaders: ls } = await leaders(topic);
      const shard = partitionForKey(mirrorStateKeyString(MIRROR, topicId, 0), STATE_PARTITIONS);
      const coordinator = shardLeaders[shard]!;
      if (ls[0]! > 0 && coordinator > 0 && ls[0] !== coordinator) pick = { topic, leader: ls[0]!, coordinator, shard };
    }
    expect(pick).not.toBeNull();
    const { topic, leader, coordinator, shard } = pick!;
    const topics = [{ topicName: topic }];
    cluster.node(leader).pause();
    try {
      // Until the stopped node leaves the ISR of the state's `__mirror_state` partition, the
      // coordinator's writes wait for it, and so do its reads.
      await eventually('the stopped node out of the __mirror_state ISR', async () => {
        const m = await client(coordinator).metadata(['__mirror_state']);
        const part = m.topics.find((t) => t.name === '__mirror_state')?.partitions.find((x) => x.partitionIndex === shard);
        return part !== undefined && !part.isrNodes.includes(leader);
      }, 8000);
      // Accepted: the partition is MIRRORING. Its stopped leader cannot act on the pause, so the
      // state its coordinator keeps stays MIRRORING.
      const paused = await client(coordinator).send(PAUSE_MIRROR_TOPICS, { mirrorName: MIRROR, topics, stateValidationOffset: -1n });
      expect(paused.topics.map((t) => t.errorCode)).toEqual([ErrorCode.NONE]);
      // Resume needs PAUSED partitions: refused, from the state read at the coordinator.
      const resumed = await client(coordinator).send(RESUME_MIRROR_TOPICS, { mirrorName: MIRROR, topics, stateValidationOffset: -1n });
      expect(resumed.topics.map((t) => t.errorCode)).toEqual([ErrorCode.INVALID_CLUSTER_MIRROR_STATES]);
      expect(resumed.topics[0]!.errorMessage).toContain('MIRRORING');
    } finally {
      cluster.node(leader).resume();
    }
    // Once the partition has paused, the same request is accepted and mirroring carries on.
    await eventually(`${topic} PAUSED`, () => ledgerIn(topic, 'PAUSED'), 40_000);
    const again = await client(coordinator).send(RESUME_MIRROR_TOPICS, { mirrorName: MIRROR, topics, stateValidationOffset: -1n });
    expect(again.topics.map((t) => t.errorCode)).toEqual([ErrorCode.NONE]);
    await eventually(`${topic} MIRRORING again`, () => ledgerIn(topic, 'MIRRORING'), 40_000);
  }, 120_000);

  it('a SIGKILLed leader: its partitions resume on the new leaders from the persisted state, nothing lost or duplicated', async () => {
    const { leaders: ls } = await leaders(TOPIC);
    const victim = ls[0]!;
    let next = 600;
    let stop = false;
    const writing = (async () => {
      while (!stop) {
        await produce(next, next + 300);
        next += 300;
      }
    })();
    await eventually('the mirror copying the new records', async () => (await described()).some((p) => p.destinationOffset > 200), 20_000);
    // The failover elects from the ISR, and a follower starved of CPU drops out of it after
    // replica.lag.time.max.ms (3 s here): kill only once every partition has its three in sync.
    await eventually(
      'every partition with three replicas in sync',
      async () => {
        const md = await client(cluster.nodes.find((n) => n.running !== null && n.nodeId !== victim)!.nodeId).metadata([TOPIC]);
        return md.topics[0]!.partitions.every((p) => p.isrNodes.length === 3);
      },
      20_000,
    );
    const atKill = await described();
    await cluster.node(victim).kill();
    const killedAt = next;
    // Keep writing across the failover: 3000 more records acknowledged by the source.
    await eventually('3000 more records written', async () => next >= killedAt + 3000, 30_000);
    stop = true;
    await writing;
    const end = next / PARTITIONS;
    // New leaders elected off the killed node, each resuming its partition's mirroring.
    const after = await eventually(
      'every partition caught up on a live leader',
      async () => {
        const parts = await caughtUp();
        const now = (await leaders(TOPIC)).leaders;
        return parts !== null && parts.every((p) => p.destinationOffset === end) && now.every((l) => l > 0 && l !== victim) ? now : null;
      },
      60_000,
    ).catch(async (e: unknown) => {
      console.log(JSON.stringify(await described().catch(() => [])));
      throw e;
    });
    expect(after[0]).not.toBe(victim);
    console.log(`killed node ${victim} at ${killedAt} records written (mirrored then: ${atKill.map((p) => p.destinationOffset).join('/')} of partitions 0/1/2), ${next} in all; leaders before ${ls.join(',')}, after ${after.join(',')}`);
    await eventually('every live replica equal to the source', async () => replicasEqualSource(), 30_000);
    // The killed node rejoins as a follower and converges to the same bytes.
    await cluster.node(victim).start();
    await eventually('every replica, the restarted one too, equal to the source', async () => replicasEqualSource(), 45_000);
    for (let p = 0; p < PARTITIONS; p++) expect(segments(source.dataDir, TOPIC, p).length).toBeGreaterThan(0);
  }, 180_000);

  it('the __mirror_state leader SIGKILLed: its successor takes the state writes (pause, resume) and mirroring carries on', async () => {
    const { topicId } = await leaders(TOPIC);
    const coord = await coordinatorOf(topicId, 0);
    const from = (await caughtUp())![0]!.destinationOffset * PARTITIONS;
    await cluster.node(coord).kill();
    await produce(from, from + 900);
    const successor = await eventually('a new leader of partition 0\'s __mirror_state partition', async () => {
      const c = await coordinatorOf(topicId, 0);
      return c > 0 && c !== coord ? c : null;
    });
    expect((await admin().pauseMirrorTopics(MIRROR, [TOPIC])).map((t) => t.errorCode)).toEqual([0]);
    await eventually('every partition PAUSED', async () => (await described()).filter((p) => p.topic === TOPIC && p.state === 'PAUSED').length === PARTITIONS, 30_000);
    expect((await readState(successor, 0)).state).toBe(PAUSED);
    expect((await admin().resumeMirrorTopics(MIRROR, [TOPIC])).map((t) => t.errorCode)).toEqual([0]);
    // Written after the resume: copied once the partitions fetch again.
    await produce(from + 900, from + 990);
    const parts = await eventually('every partition MIRRORING with lag 0 after the resume', caughtUp, 40_000).catch(async (e: unknown) => {
      console.log(JSON.stringify(await described().catch(() => [])));
      for (const n of cluster.nodes) console.log(n.logs().split('\n').filter((l) => /mirror dr|orders-/.test(l)).slice(-10).join('\n'));
      throw e;
    });
    expect(parts.map((p) => p.destinationOffset)).toEqual(Array.from({ length: PARTITIONS }, () => (from + 990) / PARTITIONS));
    expect((await readState(successor, 0)).state).toBe(MIRRORING);
    await cluster.node(coord).start();
    await eventually('every replica equal to the source', async () => replicasEqualSource(), 45_000);
  }, 120_000);

  it('stop makes the replicated topic writable; starting it again truncates every replica and converges with the source', async () => {
    expect((await admin().stopMirrorTopics(MIRROR, [TOPIC])).map((t) => t.errorCode)).toEqual([0]);
    await eventually('every partition STOPPED', async () => (await described()).filter((p) => p.topic === TOPIC && p.state === 'STOPPED').length === PARTITIONS, 30_000);
    // Writes of the destination's own, on every replica (acks=all, RF 3).
    const kafka = new Kafka({ clientId: 'mirror-cluster-dest', brokers: cluster.bootstrap, logLevel: logLevel.NOTHING, retry: { retries: 20, initialRetryTime: 100, maxRetryTime: 1000 } });
    const producer = kafka.producer({ allowAutoTopicCreation: false });
    await producer.connect();
    await producer.send({ topic: TOPIC, acks: -1, messages: Array.from({ length: 30 }, (_, i) => ({ partition: i % PARTITIONS, value: `dest-${i}` })) });
    await producer.disconnect();
    await eventually('the destination writes on every replica', async () => {
      for (let p = 0; p < PARTITIONS; p++) {
        const copies = cluster.nodes.map((n) => segments(n.dataDir!, TOPIC, p));
        if (!copies.every((c) => c.equals(copies[0]!)) || copies[0]!.length <= segments(source.dataDir, TOPIC, p).length) return false;
      }
      return true;
    }, 30_000);
    // Mirrored again in the same direction: LOG_TRUNCATION drops what the source never had, on
    // the leader and then every follower, before MIRRORING copies the source again.
    expect((await admin().startMirrorTopics(MIRROR, [TOPIC])).map((t) => t.errorCode)).toEqual([0]);
    await eventually('every partition MIRRORING with lag 0 again', caughtUp, 40_000).catch(async (e: unknown) => {
      console.log(JSON.stringify(await described().catch(() => [])));
      for (const n of cluster.nodes) console.log(n.logs().split('\n').filter((l) => /orders-0/.test(l)).slice(-10).join('\n'));
      throw e;
    });
    await eventually('every replica equal to the source again', async () => replicasEqualSource(), 45_000);
  }, 150_000);

  it('with mirror.support.unclean.leader.election=true, LOG_TRUNCATION waits until every replica is back in the ISR', async () => {
    const kafka = new Kafka({ clientId: 'mirror-cluster-configs', brokers: cluster.bootstrap, logLevel: logLevel.NOTHING, retry: { retries: 20, initialRetryTime: 100, maxRetryTime: 1000 } });
    const a = kafka.admin();
    await a.connect();
    await a.alterConfigs({ validateOnly: false, resources: [{ type: 2, name: TOPIC, configEntries: [{ name: 'mirror.support.unclean.leader.election', value: 'true' }] }] });
    expect((await admin().stopMirrorTopics(MIRROR, [TOPIC])).map((t) => t.errorCode)).toEqual([0]);
    await eventually('every partition STOPPED', async () => (await described()).filter((p) => p.topic === TOPIC && p.state === 'STOPPED').length === PARTITIONS, 30_000);
    // One replica of partition 0 drops out of the ISR (SIGSTOP past replica.lag.time.max.ms).
    const md = await a.fetchTopicMetadata({ topics: [TOPIC] });
    const p0 = md.topics[0]!.partitions.find((p) => p.partitionId === 0)!;
    const frozen = p0.replicas.find((r) => r !== p0.leader)!;
    cluster.node(frozen).pause();
    try {
      // Asked of a node that is not frozen: a request to the frozen one would hang.
      const watcher = cluster.nodes.find((n) => n.nodeId !== frozen && n.running !== null)!.nodeId;
      await eventually('the frozen replica out of partition 0\'s ISR', async () => {
        const m = await client(watcher).metadata([TOPIC]);
        const part = m.topics.find((t) => t.name === TOPIC)?.partitions.find((p) => p.partitionIndex === 0);
        return part !== undefined && !part.isrNodes.includes(frozen);
      }, 30_000);
      expect((await admin([frozen]).startMirrorTopics(MIRROR, [TOPIC])).map((t) => t.errorCode)).toEqual([0]);
      const leader = cluster.node(p0.leader);
      // Partition 0's own line: the leader's other partitions wait for the same replica, and
      // their state writes may land before partition 0's (its shard may still wait on the ISR).
      await eventually('LOG_TRUNCATION saying it waits for the replica', async () => leader.logs().includes(`${TOPIC}-0: LOG_TRUNCATION is waiting: replicas ${frozen} are not in the ISR (mirror.support.unclean.leader.election=true)`), 30_000);
      // Partition 0's leader describes it: the merged describe would also ask the frozen node
      // while its session (broker.session.timeout.ms) has not yet expired.
      const own = await client(p0.leader).send(Apis.DescribeClusterMirrors, { mirrorNames: [MIRROR], includeAuthorizedOperations: false, clusterId: null, lastMirrorEpochLookups: [] });
      const state = own.mirrors.find((m) => m.mirrorName === MIRROR)?.topics.find((t) => t.topicName === TOPIC)?.partitions.find((p) => p.partitionIndex === 0)?.stateValue;
      expect(state).toBe('LOG_TRUNCATION');
    } finally {
      cluster.node(frozen).resume();
    }
    await eventually('every partition MIRRORING with lag 0 once the replica is back', caughtUp, 60_000);
    await eventually('every replica equal to the source', async () => replicasEqualSource(), 45_000);
    await a.disconnect();
  }, 150_000);
  it('failback: after a stop, the old source mirrors the topic back from the cluster and ends equal to every replica', async () => {
    expect((await admin().stopMirrorTopics(MIRROR, [TOPIC])).map((t) => t.errorCode)).toEqual([0]);
    await eventually('every partition STOPPED', async () => (await described()).filter((p) => p.topic === TOPIC && p.state === 'STOPPED').length === PARTITIONS, 30_000);
    // The cluster takes writes of its own after the failover (acks=all, RF 3).
    const kafka = new Kafka({ clientId: 'mirror-cluster-failover', brokers: cluster.bootstrap, logLevel: logLevel.NOTHING, retry: { retries: 20, initialRetryTime: 100, maxRetryTime: 1000 } });
    const producer = kafka.producer({ allowAutoTopicCreation: false });
    await producer.connect();
    await producer.send({ topic: TOPIC, acks: -1, messages: Array.from({ length: 60 }, (_, i) => ({ partition: i % PARTITIONS, value: `after-failover-${i}` })) });
    await producer.disconnect();
    // The old source mirrors the topic back: LOG_TRUNCATION to the last mirrored epoch the
    // cluster's coordinators hold for it, then MIRRORING from the cluster's partition leaders.
    const back = new MirrorAdmin({ bootstrapServers: [source.bootstrap], requestTimeoutMs: 5000 });
    closers.push(() => back.close());
    await back.createClusterMirror('back', { 'bootstrap.servers': cluster.bootstrap.join(','), 'mirror.fetch.wait.max.ms': '100', 'mirror.socket.timeout.ms': '3000' });
    expect((await back.startMirrorTopics('back', [TOPIC])).map((t) => t.errorCode)).toEqual([0]);
    await eventually('the old source caught up with the cluster', async () => {
      const [m] = await back.describeClusterMirrors(['back']);
      const parts = (m?.partitions ?? []).filter((p) => p.topic === TOPIC);
      return parts.length === PARTITIONS && parts.every((p) => p.state === 'MIRRORING' && p.lag === 0);
    }, 60_000).catch(async (e: unknown) => {
      console.log(JSON.stringify(await back.describeClusterMirrors(['back']).catch(() => [])));
      console.log(source.logs().split('\n').filter((l) => l.includes('mirror back')).slice(-15).join('\n'));
      throw e;
    });
    // The old source's log is the cluster's, byte for byte, the cluster's own writes included.
    await eventually('the old source equal to every replica', async () => replicasEqualSource(), 45_000);
    for (let p = 0; p < PARTITIONS; p++) expect(segments(source.dataDir, TOPIC, p).includes(Buffer.from(`after-failover-${p}`))).toBe(true);
  }, 150_000);
});
