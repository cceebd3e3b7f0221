/**
 * A Fjord node mirroring from a real three-broker Apache Kafka cluster (KRaft, a controller of its
 * own, topics with replication factor 3) while the source's partition leaders change under it:
 *
 * - kill -9 of a partition leader while a producer writes: the mirror goes on from the new leader
 *   and ends byte-identical to the source (segments, so record values and offsets);
 * - an unclean leader election on the source (the only ISR member stopped, an out-of-sync replica
 *   elected, so the source loses a suffix): the mirror truncates the same suffix on the
 *   DivergingEpoch answer to its LastFetchedEpoch, copies the new leader's history, and matches
 *   the source again.
 *
 * The mirror's socket timeout is long, so the partitions stay in the fetcher through the outage
 * and meet the new leader with a Fetch, not with a restart's OffsetsForLeaderEpoch round.
 */
import { readFileSync, readdirSync, rmSync, writeFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Kafka, logLevel, type Admin, type Producer } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clusterMirrors, type CliRun } from '../helpers/mirror-cli.js';
import { RecordBatchView } from '../../src/protocol/record-batch.js';
import { decodeRecords } from '../../src/protocol/records.js';
import { waitFor } from '../helpers/wait.js';
import { startFjordNode, type FjordNode } from './fjord-node.js';
import { javaTool } from './lib/java.js';
import { startKafkaCluster, type KafkaCluster } from './lib/kafka-cluster.js';

const MIRROR = 'from-kafka-cluster';
const FAILOVER = 'failover';
const LOSSY = 'lossy';

let source: KafkaCluster;
let fjord: FjordNode;
let kafka: Kafka;
let admin: Admin;
const work = mkdtempSync(join(tmpdir(), 'fjord-mirror-source-failover-'));

beforeAll(async () => {
  const started = Date.now();
  [source, fjord] = await Promise.all([
    // Kafka 4.1 formats new clusters with eligible leader replicas (KIP-966), under which the last
    // ISR member stays eligible and no unclean election happens while it is down.
    startKafkaCluster({ brokers: 3, features: ['eligible.leader.replicas.version=0'], brokerOverrides: { 'replica.lag.time.max.ms': '5000' } }),
    startFjordNode({ overrides: { 'mirror.metadata.refresh.interval.ms': '1000', 'mirror.failed.retry.initial.backoff.ms': '200', 'mirror.failed.retry.max.backoff.ms': '1000' } }),
  ]);
  console.log(`[interop] three-broker Apache Kafka ${source.version} cluster and Fjord serving after ${Date.now() - started} ms`);
  kafka = new Kafka({ clientId: 'source-failover', brokers: source.bootstrap.split(','), logLevel: logLevel.NOTHING, retry: { retries: 30, initialRetryTime: 200, maxRetryTime: 2000 } });
  admin = kafka.admin();
  await admin.connect();
  // Leaders named by the assignment: broker 2 leads `failover`, broker 1 leads `lossy`.
  await admin.createTopics({
    topics: [
      { topic: FAILOVER, replicaAssignment: [{ partition: 0, replicas: [2, 3, 1] }] },
      { topic: LOSSY, replicaAssignment: [{ partition: 0, replicas: [1, 3, 2] }], configEntries: [{ name: 'unclean.leader.election.enable', value: 'true' }, { name: 'min.insync.replicas', value: '1' }] },
    ],
    waitForLeaders: true,
  });
  const cfg = join(work, `${MIRROR}.properties`);
  writeFileSync(cfg, `bootstrap.servers=${source.bootstrap}\nmirror.fetch.wait.max.ms=100\nmirror.fetch.backoff.ms=200\nmirror.socket.timeout.ms=120000\n`);
  expect((await cli('--create', '--mirror', MIRROR, '--mirror-config', cfg)).code).toBe(0);
  expect((await cli('--start', '--mirror', MIRROR, '--topics', `${FAILOVER},${LOSSY}`)).code).toBe(0);
}, 180_000);

afterAll(async () => {
  await admin?.disconnect().catch(() => undefined);
  await Promise.all([source?.stop(), fjord?.stop()]);
  rmSync(work, { recursive: true, force: true });
});

const cli = (...argv: string[]): Promise<CliRun> => clusterMirrors(fjord.bootstrap, ...argv);

async function mirrored(topic: string): Promise<{ state: string; lag: number }> {
  const r = await cli('--describe', '--mirror', MIRROR, '--json');
  if (r.code !== 0) throw new Error(r.err);
  const p = (JSON.parse(r.out) as { topic: string; state: string; lag: number }[]).find((x) => x.topic === topic);
  if (p === undefined) throw new Error(`${topic} not described`);
  return p;
}

function segments(dir: string): Buffer {
  const files = readdirSync(dir).filter((f) => f.endsWith('.log')).sort();
  return Buffer.concat(files.map((f) => readFileSync(join(dir, f))));
}

/** (offset, value) of every record in a log's segment bytes. */
function offsetsAndValues(bytes: Buffer): string[] {
  const out: string[] = [];
  for (let pos = 0; pos + 61 <= bytes.length; ) {
    const b = new RecordBatchView(bytes, pos);
    if (!b.isControl) for (const r of decodeRecords(b)) out.push(`${r.offset}:${r.value?.toString() ?? ''}`);
    pos += b.sizeInBytes;
  }
  return out;
}

async function leaderOf(topic: string): Promise<number> {
  const md = await admin.fetchTopicMetadata({ topics: [topic] });
  return md.topics[0]?.partitions.find((p) => p.partitionId === 0)?.leader ?? -1;
}

async function produce(producer: Producer, topic: string, prefix: string, from: number, count: number): Promise<void> {
  await producer.send({ topic, acks: -1, messages: Array.from({ length: count }, (_, i) => ({ partition: 0, value: `${prefix}-${from + i}` })) });
}

/** Waits until the mirror is caught up and its segments equal those of source broker `brokerId`. */
async function expectConverged(topic: string, brokerId: number): Promise<Buffer> {
  const sourceDir = join(source.broker(brokerId).logDir, `${topic}-0`);
  const mirrorDir = join(fjord.dataDir, 'logs', `${topic}-0`);
  await waitFor(`${topic} mirrored with no lag`, async () => {
    const p = await mirrored(topic);
    return p.state === 'MIRRORING' && p.lag === 0;
  }, 60_000, 200);
  await waitFor(`${topic}: the mirror's segments equal broker ${brokerId}'s`, () => segments(mirrorDir).equals(segments(sourceDir)), 30_000, 200);
  const bytes = segments(mirrorDir);
  expect(offsetsAndValues(bytes)).toEqual(offsetsAndValues(segments(sourceDir)));
  return bytes;
}

describe('Mirroring from a three-broker Apache Kafka cluster whose leaders change', () => {
  it('kill -9 of the partition leader while a producer writes: the mirror follows the new leader and ends byte-identical', async () => {
    const producer = kafka.producer({ allowAutoTopicCreation: false });
    await producer.connect();
    try {
      await produce(producer, FAILOVER, 'f', 0, 50);
      await waitFor('the mirror copying', async () => (await mirrored(FAILOVER)).state === 'MIRRORING');
      const writes = (async () => {
        for (let i = 1; i <= 30; i++) await produce(producer, FAILOVER, 'f', i * 10 + 40, 10);
      })();
      await waitFor('some writes after the start', async () => (await admin.fetchTopicOffsets(FAILOVER))[0]!.high !== '50', 30_000, 20);
      expect(await leaderOf(FAILOVER)).toBe(2);
      await source.kill(2);
      await writes;
    } finally {
      await producer.disconnect();
    }
    const leader = await leaderOf(FAILOVER);
    expect([1, 3]).toContain(leader);
    const bytes = await expectConverged(FAILOVER, leader);
    // Every acknowledged write is there, at the source's offsets.
    const values = new Set(offsetsAndValues(bytes).map((r) => r.split(':')[1]));
    for (let i = 0; i < 350; i++) expect(values.has(`f-${i}`)).toBe(true);
  });

  it('an unclean leader election on the source: the mirror truncates the suffix the source lost and matches it again', async () => {
    // Broker 2 is down since the previous test: the ISR of `lossy` is {1, 3}.
    const producer = kafka.producer({ allowAutoTopicCreation: false });
    await producer.connect();
    try {
      await produce(producer, LOSSY, 'kept', 0, 20);
      await expectConverged(LOSSY, 1);
      // Broker 3 stops: broker 1 alone takes the next writes, and the mirror copies them.
      await source.stopBroker(3);
      await produce(producer, LOSSY, 'lost', 20, 20);
      const before = await expectConverged(LOSSY, 1);
      expect(offsetsAndValues(before).filter((r) => r.includes(':lost-'))).toHaveLength(20);
      // The only ISR member stops; the out-of-sync broker 3 comes back and is elected uncleanly.
      await source.stopBroker(1);
      await source.startBroker(3);
      await waitFor('broker 3 elected', async () => {
        if ((await leaderOf(LOSSY)) === 3) return true;
        await javaTool('org.apache.kafka.tools.LeaderElectionCommand', ['--bootstrap-server', `127.0.0.1:${source.broker(3).port}`, '--election-type', 'UNCLEAN', '--topic', LOSSY, '--partition', '0']);
        return (await leaderOf(LOSSY)) === 3;
      }, 60_000, 500);
      await produce(producer, LOSSY, 'new', 20, 10);
    } finally {
      await producer.disconnect();
    }
    const after = await expectConverged(LOSSY, 3);
    const records = offsetsAndValues(after);
    expect(records.filter((r) => r.includes(':lost-'))).toEqual([]);
    expect(records.slice(0, 20)).toEqual(Array.from({ length: 20 }, (_, i) => `${i}:kept-${i}`));
    expect(records.slice(20)).toEqual(Array.from({ length: 10 }, (_, i) => `${20 + i}:new-${20 + i}`));
  });
});
