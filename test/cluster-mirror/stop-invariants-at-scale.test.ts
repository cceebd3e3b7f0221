/**
 * A stop of 2,000 mirrored partitions on a three-node cluster (etcd, RF 3), then every partition
 * checked against KIP-1279's stop guarantees (spec §8.5), so that gathering the work of many
 * partitions cannot trade one of them away:
 *
 *  - its last mirrored epoch is persisted (the failback lookup answers it) and equals the epoch of
 *    the source's last batch;
 *  - its destination leader epoch is above the source's leader epoch and above that LME;
 *  - its log holds the source's batch byte for byte at the source's offset, then a
 *    MIRROR_PID_RESET control batch written under the new epoch;
 *  - it is STOPPED and takes a write (acks=all) after the reset.
 *
 * Not timed: the figures are in bench/compare. Sized for CI (two cores).
 */
import { Kafka, logLevel } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MirrorAdmin } from '../../src/admin/mirror-admin.js';
import { Apis } from '../../src/client/apis.js';
import { KafkaClient } from '../../src/client/kafka-client.js';
import { ControlRecordType, controlTypeOf } from '../../src/protocol/control-records.js';
import { ErrorCode } from '../../src/protocol/generated/errors.js';
import { iterateBatches } from '../../src/protocol/record-batch.js';
import { eventually, startCluster, type RunningCluster } from '../helpers/cluster.js';
import { seedSourceTopics } from '../helpers/mirror-cli.js';
import { startNode, type RunningNode } from '../helpers/node.js';

const FAST = { 'mirror.failed.retry.initial.backoff.ms': 200, 'mirror.failed.retry.max.backoff.ms': 1000, 'mirror.metadata.refresh.interval.ms': 2000 };
const MIRROR = 'dr';
const TOPICS = Array.from({ length: 40 }, (_, i) => `scale-${String(i).padStart(2, '0')}`);
const PARTITIONS = 50;
const TOTAL = TOPICS.length * PARTITIONS;
/** Partitions per Fetch request when reading the logs back. */
const FETCH_CHUNK = 250;

let cluster: RunningCluster;
let source: RunningNode;
const closers: (() => void)[] = [];

function admin(): MirrorAdmin {
  const a = new MirrorAdmin({ bootstrapServers: cluster.bootstrap, requestTimeoutMs: 120_000 });
  closers.push(() => a.close());
  return a;
}

function client(bootstrap: string): KafkaClient {
  const c = new KafkaClient({ bootstrapServers: [bootstrap], requestTimeoutMs: 30_000 });
  closers.push(() => c.close());
  return c;
}

interface PartitionMeta {
  readonly topic: string;
  readonly topicId: string;
  readonly partition: number;
  readonly leader: number;
  readonly leaderEpoch: number;
}

async function partitionsOf(c: KafkaClient): Promise<PartitionMeta[]> {
  const md = await c.metadata(TOPICS);
  return md.topics.flatMap((t) => t.partitions.map((p) => ({ topic: t.name ?? '', topicId: t.topicId, partition: p.partitionIndex, leader: p.leaderId, leaderEpoch: p.leaderEpoch })));
}

/** Every batch of each partition from offset 0, read from its leader (`clientOf`). */
async function readLogs(parts: readonly PartitionMeta[], clientOf: (leader: number) => KafkaClient): Promise<Map<string, Buffer>> {
  const out = new Map<string, Buffer>();
  const byLeader = new Map<number, PartitionMeta[]>();
  for (const p of parts) {
    let list = byLeader.get(p.leader);
    if (list === undefined) byLeader.set(p.leader, (list = []));
    list.push(p);
  }
  for (const [leader, list] of byLeader) {
    for (let i = 0; i < list.length; i += FETCH_CHUNK) {
      const chunk = list.slice(i, i + FETCH_CHUNK);
      const byTopic = new Map<string, PartitionMeta[]>();
      for (const p of chunk) {
        let l = byTopic.get(p.topicId);
        if (l === undefined) byTopic.set(p.topicId, (l = []));
        l.push(p);
      }
      const res = await clientOf(leader).send(Apis.Fetch, {
        replicaId: -1, maxWaitMs: 0, minBytes: 0, maxBytes: 64 << 20, isolationLevel: 0, sessionId: 0, sessionEpoch: -1,
        topics: [...byTopic].map(([topicId, ps]) => ({ topicId, partitions: ps.map((p) => ({ partition: p.partition, currentLeaderEpoch: -1, fetchOffset: 0n, partitionMaxBytes: 1 << 16 })) })),
        forgottenTopicsData: [],
      });
      expect(res.errorCode).toBe(ErrorCode.NONE);
      for (const t of res.responses) {
        const name = chunk.find((p) => p.topicId === t.topicId)!.topic;
        for (const p of t.partitions) {
          expect(p.errorCode, `${name}-${p.partitionIndex}`).toBe(ErrorCode.NONE);
          out.set(`${name}-${p.partitionIndex}`, p.records ?? Buffer.alloc(0));
        }
      }
    }
  }
  return out;
}

beforeAll(async () => {
  [cluster, source] = await Promise.all([
    // Kafka's stock session: a busy CI machine would fence a node on the helpers' 3 s one.
    startCluster({ nodes: 3, overrides: { ...FAST, 'broker.session.timeout.ms': 9000, 'broker.heartbeat.interval.ms': 2000, 'default.replication.factor': 3, 'mirror.state.topic.replication.factor': 3, 'min.insync.replicas': 2 } }),
    startNode({ overrides: FAST }),
  ]);
  await seedSourceTopics(source.bootstrap, 'stop-at-scale-source', TOPICS, PARTITIONS);
  await eventually('three brokers registered', async () => (await client(cluster.bootstrap[0]!).metadata([])).brokers.length === 3);
  await admin().createClusterMirror(MIRROR, { 'bootstrap.servers': source.bootstrap, 'mirror.fetch.wait.max.ms': '100' });
}, 120_000);

afterAll(async () => {
  for (const c of closers) c();
  await source?.destroy();
  await cluster?.destroy();
});

describe(`a stop of ${TOTAL} partitions on three nodes`, () => {
  it('leaves every partition with its LME persisted, an epoch above the source, a PID reset after the mirrored records, and writable', async () => {
    const started = await admin().startMirrorTopics(MIRROR, TOPICS);
    expect(started.filter((t) => t.errorCode === ErrorCode.NONE)).toHaveLength(TOPICS.length);
    const caughtUp = async (): Promise<boolean> => {
      const [m] = await admin().describeClusterMirrors([MIRROR]);
      return (m?.partitions ?? []).filter((p) => p.state === 'MIRRORING' && p.lag === 0).length === TOTAL;
    };
    await eventually('every partition MIRRORING with lag 0', caughtUp, 150_000);

    const stopped = await admin().stopMirrorTopics(MIRROR, TOPICS);
    expect(stopped.filter((t) => t.errorCode === ErrorCode.NONE)).toHaveLength(TOPICS.length);
    await eventually(
      'every partition STOPPED',
      async () => {
        const [m] = await admin().describeClusterMirrors([MIRROR]);
        return (m?.partitions ?? []).filter((p) => p.state === 'STOPPED').length === TOTAL;
      },
      120_000,
    );

    const sourceClient = client(source.bootstrap);
    const sourceParts = await partitionsOf(sourceClient);
    const sourceLogs = await readLogs(sourceParts, () => sourceClient);
    const sourceClusterId = (await sourceClient.describeCluster()).clusterId;
    const md = await client(cluster.bootstrap[0]!).metadata(TOPICS);
    const nodes = new Map(md.brokers.map((b) => [b.nodeId, client(`${b.host}:${b.port}`)]));
    const destParts = await partitionsOf(client(cluster.bootstrap[0]!));
    expect(destParts).toHaveLength(TOTAL);
    const destLogs = await readLogs(destParts, (leader) => nodes.get(leader)!);
    const lmes = await admin().lookupLastMirrorEpochs(
      sourceClusterId,
      [...new Set(destParts.map((p) => p.topicId))].map((topicId) => ({ topicId, partitions: destParts.filter((p) => p.topicId === topicId).map((p) => p.partition) })),
    );

    const problems: string[] = [];
    const sourceEpoch = new Map(sourceParts.map((p) => [`${p.topic}-${p.partition}`, p.leaderEpoch]));
    const resetOffset = new Map<string, number>();
    for (const p of destParts) {
      const tp = `${p.topic}-${p.partition}`;
      const src = [...iterateBatches(sourceLogs.get(tp) ?? Buffer.alloc(0))];
      const dst = [...iterateBatches(destLogs.get(tp) ?? Buffer.alloc(0))];
      const lastSource = src.at(-1);
      if (lastSource === undefined) {
        problems.push(`${tp}: the source holds no batch`);
        continue;
      }
      const lme = lmes.get(`${p.topicId}:${p.partition}`) ?? -1;
      if (lme !== lastSource.partitionLeaderEpoch) problems.push(`${tp}: LME ${lme}, the source's last batch has epoch ${lastSource.partitionLeaderEpoch}`);
      if (!(p.leaderEpoch > lme && p.leaderEpoch > (sourceEpoch.get(tp) ?? Infinity))) problems.push(`${tp}: leader epoch ${p.leaderEpoch}, LME ${lme}, source leader epoch ${sourceEpoch.get(tp)}`);
      // The mirrored records, byte for byte at the source's offsets.
      for (let i = 0; i < src.length; i++) {
        if (dst[i] === undefined || !dst[i]!.bytes.equals(src[i]!.bytes)) problems.push(`${tp}: batch ${i} differs from the source's`);
      }
      const after = dst.slice(src.length);
      const reset = after.find((b) => controlTypeOf(b) === ControlRecordType.MIRROR_PID_RESET);
      if (reset === undefined) problems.push(`${tp}: no MIRROR_PID_RESET after the mirrored records (leader ${p.leader} epoch ${p.leaderEpoch}; batches ${dst.map((b) => `${b.baseOffset}@${b.partitionLeaderEpoch}${b.isControl ? `c${controlTypeOf(b)}` : ''}`).join(' ')})`);
      else {
        if (reset.partitionLeaderEpoch <= lme) problems.push(`${tp}: MIRROR_PID_RESET under epoch ${reset.partitionLeaderEpoch}, not above the LME ${lme}`);
        resetOffset.set(tp, reset.baseOffset);
      }
    }
    expect(problems.slice(0, 20)).toEqual([]);

    const kafka = new Kafka({ clientId: 'stop-at-scale-destination', brokers: cluster.bootstrap, logLevel: logLevel.NOTHING });
    const producer = kafka.producer({ allowAutoTopicCreation: false });
    await producer.connect();
    try {
      const acks = await producer.sendBatch({ acks: -1, topicMessages: TOPICS.map((topic) => ({ topic, messages: Array.from({ length: PARTITIONS }, (_, partition) => ({ partition, value: 'after-failover' })) })) });
      const late = acks.filter((a) => a.errorCode !== ErrorCode.NONE || Number(a.baseOffset) <= (resetOffset.get(`${a.topicName}-${a.partition}`) ?? Infinity));
      expect(late).toEqual([]);
      expect(acks).toHaveLength(TOTAL);
    } finally {
      await producer.disconnect();
    }
  }, 420_000);
});
