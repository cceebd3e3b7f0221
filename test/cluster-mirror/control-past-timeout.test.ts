/**
 * A StartMirrorTopics or StopMirrorTopics of many topics on a three-node cluster that runs past
 * the client's request timeout (request.timeout.ms in `--command-config`): the node carries out
 * what it accepted for every topic named, whether or not the client is still connected, and
 * `fjord cluster-mirrors` reports per topic what it knows instead of a bare time-out. Without
 * sending the request again, every partition ends MIRRORING (start) or STOPPED and writable
 * (stop).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Kafka, logLevel } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MirrorAdmin, type PartitionMirrorDescription } from '../../src/admin/mirror-admin.js';
import { eventually, startCluster, type RunningCluster } from '../helpers/cluster.js';
import { clusterMirrors, seedSourceTopics } from '../helpers/mirror-cli.js';
import { startNode, type RunningNode } from '../helpers/node.js';

const FAST = { 'mirror.failed.retry.initial.backoff.ms': 200, 'mirror.failed.retry.max.backoff.ms': 1000, 'mirror.metadata.refresh.interval.ms': 1000 };
const MIRROR = 'dr';
const TOPICS = Array.from({ length: 30 }, (_, i) => `bulk-${String(i).padStart(2, '0')}`);
const PARTITIONS = 4;
/** Far shorter than a start or stop of every topic takes on three nodes. */
const REQUEST_TIMEOUT_MS = 500;

let cluster: RunningCluster;
let source: RunningNode;
const work = mkdtempSync(join(tmpdir(), 'fjord-control-timeout-'));
const shortTimeout = join(work, 'short-timeout.properties');

async function described(): Promise<readonly PartitionMirrorDescription[]> {
  const a = new MirrorAdmin({ bootstrapServers: cluster.bootstrap, requestTimeoutMs: 10_000 });
  try {
    return (await a.describeClusterMirrors([MIRROR]))[0]?.partitions ?? [];
  } finally {
    a.close();
  }
}

/** How many partitions of the test's topics describe shows in `state` (and, for MIRRORING, caught up). */
async function countIn(state: string): Promise<number> {
  return (await described()).filter((p) => TOPICS.includes(p.topic) && p.state === state && (state !== 'MIRRORING' || p.lag === 0)).length;
}

beforeAll(async () => {
  [cluster, source] = await Promise.all([
    startCluster({ nodes: 3, overrides: { ...FAST, 'default.replication.factor': 3, 'mirror.state.topic.replication.factor': 3, 'min.insync.replicas': 2 } }),
    startNode({ overrides: FAST }),
  ]);
  await seedSourceTopics(source.bootstrap, 'control-timeout-source', TOPICS, PARTITIONS);
  writeFileSync(join(work, 'mirror.properties'), `bootstrap.servers=${source.bootstrap}\nmirror.fetch.wait.max.ms=100\n`);
  writeFileSync(shortTimeout, `request.timeout.ms=${REQUEST_TIMEOUT_MS}\n`);
  const created = await clusterMirrors(cluster.bootstrap.join(','), '--create', '--mirror', MIRROR, '--mirror-config', join(work, 'mirror.properties'));
  expect(created.code, created.err).toBe(0);
}, 120_000);

afterAll(async () => {
  await source?.destroy();
  await cluster?.destroy();
  rmSync(work, { recursive: true, force: true });
});

/** The lines `--start`/`--stop` print per topic, in topic order. */
function perTopic(out: string, verb: string): string[] {
  return out.split('\n').filter((l) => l.startsWith(`${verb} mirroring of topic `)).sort();
}

describe('a control request that runs past the client request timeout', () => {
  it('--start of many topics is carried out for every topic, and the CLI reports each', async () => {
    const r = await clusterMirrors(cluster.node(1).bootstrap, '--command-config', shortTimeout, '--start', '--mirror', MIRROR, '--topics', 'bulk-.*', '--timeout', '120');
    expect(r.code, `${r.out}\n${r.err}`).toBe(0);
    expect(perTopic(r.out, 'Started')).toEqual(TOPICS.map((t) => `Started mirroring of topic ${t}.`));
    await eventually('every partition MIRRORING with lag 0', async () => (await countIn('MIRRORING')) === TOPICS.length * PARTITIONS, 120_000);
  }, 180_000);

  it('--stop of many topics is carried out for every topic without sending it again, and the CLI reports each; every partition is then writable', async () => {
    const r = await clusterMirrors(cluster.node(2).bootstrap, '--command-config', shortTimeout, '--stop', '--mirror', MIRROR, '--topics', 'bulk-.*', '--timeout', '120');
    expect(r.code, `${r.out}\n${r.err}`).toBe(0);
    expect(perTopic(r.out, 'Stopped')).toEqual(TOPICS.map((t) => `Stopped mirroring of topic ${t}.`));
    // Describe names every partition's desired state at once, whatever state each has reached.
    const desired = (await described()).filter((p) => TOPICS.includes(p.topic)).map((p) => p.desiredState);
    expect(desired).toEqual(Array(TOPICS.length * PARTITIONS).fill('STOPPED'));
    await eventually('every partition STOPPED', async () => (await countIn('STOPPED')) === TOPICS.length * PARTITIONS, 120_000);
    const kafka = new Kafka({ clientId: 'control-timeout-destination', brokers: cluster.bootstrap, logLevel: logLevel.NOTHING });
    const producer = kafka.producer({ allowAutoTopicCreation: false });
    await producer.connect();
    try {
      const acks = await producer.sendBatch({ acks: -1, topicMessages: TOPICS.map((topic) => ({ topic, messages: Array.from({ length: PARTITIONS }, (_, partition) => ({ partition, value: 'after-failover' })) })) });
      // Each partition took the write after the one mirrored record (and the stop's control records).
      expect(acks.filter((a) => a.errorCode === 0 && Number(a.baseOffset) >= 1)).toHaveLength(TOPICS.length * PARTITIONS);
    } finally {
      await producer.disconnect();
    }
  }, 180_000);
});
