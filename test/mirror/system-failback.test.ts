/**
 * Failback as the KIP's system tests run it, with the same mirror name both ways, onto an old
 * source of three replicas that went through an unclean election after the failover:
 *
 *  1. a (three Fjord nodes, one etcd, the topic on all three) is mirrored into b (one Fjord node)
 *     by mirror `dr`; b stops it (failover) and takes writes of its own;
 *  2. on a, a follower stops, the leader takes writes only it and the other ISR member hold, both
 *     stop, and the out-of-sync follower is elected uncleanly and takes writes of its own: a's
 *     log now has a suffix b never saw, under epochs b never saw, and the lost records are still
 *     in the stopped replicas' directories until they rejoin;
 *  3. a creates its own mirror `dr` from b and starts the topic (failback) while one of its nodes
 *     is down: every replica of a, the one that rejoins afterwards too, drops its suffix and
 *     copies b's writes, ending byte-identical to b; the topic is read-only on a
 *     (READ_ONLY_TOPIC) until stopped;
 *  4. a stops (the failback is done) and takes writes; b starts the topic again in its mirror
 *     `dr` and ends byte-identical to a.
 */
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Kafka, logLevel } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KafkaClient } from '../../src/client/kafka-client.js';
import { KafkaConnection } from '../../src/client/kafka-connection.js';
import { ErrorCode } from '../../src/protocol/generated/errors.js';
import { encodeProduceRequest } from '../../src/protocol/generated/messages/produce-request.js';
import { decodeProduceResponse } from '../../src/protocol/generated/messages/produce-response.js';
import { RecordBatchView } from '../../src/protocol/record-batch.js';
import { buildRecordBatch, decodeRecords } from '../../src/protocol/records.js';
import { eventually, startCluster, type ClusterNode, type RunningCluster } from '../helpers/cluster.js';
import { clusterMirrors, type CliRun } from '../helpers/mirror-cli.js';
import { startNode, type RunningNode } from '../helpers/node.js';

const MIRROR = 'dr';
const TOPIC = 'ledger';
const FAST = { 'mirror.failed.retry.initial.backoff.ms': 200, 'mirror.failed.retry.max.backoff.ms': 1000, 'mirror.metadata.refresh.interval.ms': 500 };

let a: RunningCluster;
let b: RunningNode;
const work = mkdtempSync(join(tmpdir(), 'fjord-system-failback-'));

beforeAll(async () => {
  [a, b] = await Promise.all([
    startCluster({
      nodes: 3,
      // __mirror_state is created at the failback, while one of a's nodes is down: as for
      // Kafka's internal topics, a replication factor above the registered nodes cannot be met.
      overrides: { ...FAST, 'mirror.state.topic.replication.factor': 2, 'mirror.state.topic.num.partitions': 2, 'replica.lag.time.max.ms': 3000 },
    }),
    startNode({ overrides: FAST }),
  ]);
}, 120_000);

afterAll(async () => {
  await Promise.all([a?.destroy(), b?.destroy()]);
  rmSync(work, { recursive: true, force: true });
});

const live = (): ClusterNode[] => a.nodes.filter((n) => n.running !== null);
const aBootstrap = (): string => live().map((n) => n.bootstrap).join(',');

function mirrorConfig(name: string, bootstrap: string): string {
  const file = join(work, `${name}.properties`);
  writeFileSync(file, `bootstrap.servers=${bootstrap}\nmirror.fetch.wait.max.ms=100\nmirror.socket.timeout.ms=5000\n`);
  return file;
}

async function ok(bootstrap: string, ...argv: string[]): Promise<CliRun> {
  const r = await clusterMirrors(bootstrap, ...argv);
  expect(r.code, `${argv.join(' ')}: ${r.out}\n${r.err}`).toBe(0);
  return r;
}

/** Whether the topic's one partition is in `state` (with lag 0 when MIRRORING) in the mirror at `bootstrap`. */
async function isIn(bootstrap: string, state: string): Promise<boolean> {
  const r = await clusterMirrors(bootstrap, '--describe', '--mirror', MIRROR, '--json');
  if (r.code !== 0) throw new Error(r.err);
  const rows = (JSON.parse(r.out) as { topic: string; state: string; lag: number }[]).filter((p) => p.topic === TOPIC);
  return rows.length === 1 && rows[0]!.state === state && (state !== 'MIRRORING' || rows[0]!.lag === 0);
}

function segments(dataDir: string): Buffer {
  const dir = join(dataDir, `${TOPIC}-0`);
  if (!existsSync(dir)) return Buffer.alloc(0);
  return Buffer.concat(readdirSync(dir).filter((f) => f.endsWith('.log')).sort().map((f) => readFileSync(join(dir, f))));
}

/** The data records of a log's segment bytes, as `offset:value`. */
function values(bytes: Buffer): string[] {
  const out: string[] = [];
  for (let pos = 0; pos + 61 <= bytes.length; ) {
    const batch = new RecordBatchView(bytes, pos);
    if (!batch.isControl) for (const r of decodeRecords(batch)) out.push(`${r.offset}:${r.value?.toString() ?? ''}`);
    pos += batch.sizeInBytes;
  }
  return out;
}

async function produce(bootstrap: string, prefix: string, count: number): Promise<void> {
  const kafka = new Kafka({ clientId: 'failback', brokers: bootstrap.split(','), logLevel: logLevel.NOTHING, retry: { retries: 30, initialRetryTime: 200, maxRetryTime: 1000 } });
  const p = kafka.producer({ allowAutoTopicCreation: false });
  await p.connect();
  try {
    await p.send({ topic: TOPIC, acks: -1, messages: Array.from({ length: count }, (_, i) => ({ partition: 0, value: `${prefix}-${i}` })) });
  } finally {
    await p.disconnect();
  }
}

async function leaderOfA(): Promise<ClusterNode> {
  return eventually('a leader of the topic on a', async () => {
    const c = new KafkaClient({ bootstrapServers: live().map((n) => n.bootstrap), clientId: 'failback-leader', requestTimeoutMs: 5000 });
    try {
      const id = (await c.metadata([TOPIC])).topics[0]?.partitions[0]?.leaderId;
      return live().find((n) => n.nodeId === id);
    } finally {
      c.close();
    }
  });
}

/** The error code of one Produce v9 straight to `port`, as the node answers it. */
async function produceError(port: number): Promise<number> {
  const conn = await KafkaConnection.connect({ host: '127.0.0.1', port, clientId: 'failback-raw' });
  try {
    const batch = buildRecordBatch({ records: [{ value: Buffer.from('local write') }] });
    const res = await conn.request(
      0,
      9,
      (w) => encodeProduceRequest(w, { transactionalId: null, acks: -1, timeoutMs: 5000, topicData: [{ name: TOPIC, partitionData: [{ index: 0, records: batch }] }] }, 9),
      (r) => decodeProduceResponse(r, 9),
    );
    return res.responses[0]?.partitionResponses[0]?.errorCode ?? -999;
  } finally {
    conn.close();
  }
}

/** The first `count` values a read_committed consumer of a new group reads from `brokers`, in order. */
async function readCommitted(brokers: string[], count: number): Promise<string[]> {
  const seen: string[] = [];
  const consumer = new Kafka({ clientId: 'failback-reader', brokers, logLevel: logLevel.NOTHING }).consumer({ groupId: `reader-${Date.now()}`, readUncommitted: false, maxWaitTimeInMs: 100 });
  await consumer.connect();
  try {
    await consumer.subscribe({ topic: TOPIC, fromBeginning: true });
    await consumer.run({ eachMessage: async ({ message }) => void seen.push(message.value?.toString() ?? '') });
    await eventually(`${count} records read_committed`, async () => seen.length >= count, 60_000);
  } finally {
    await consumer.disconnect();
  }
  return seen.slice(0, count);
}

/** Every replica of a holds exactly `want`'s bytes. */
async function everyReplicaOfAEquals(what: string, want: () => Buffer): Promise<Buffer> {
  return eventually(what, async () => {
    const w = want();
    return a.nodes.every((n) => segments(n.dataDir!).equals(w)) ? w : null;
  }, 60_000);
}

describe('failback with the same mirror name onto a three-replica old source after an unclean election', () => {
  // Generous: a node restart on a loaded machine takes seconds, and this case restarts three.
  it('converges every replica of the old source with the new one, and back again', async () => {
    const admin = new Kafka({ clientId: 'failback', brokers: a.bootstrap, logLevel: logLevel.NOTHING }).admin();
    await admin.connect();
    try {
      await admin.createTopics({
        topics: [{ topic: TOPIC, replicaAssignment: [{ partition: 0, replicas: [1, 2, 3] }], configEntries: [{ name: 'unclean.leader.election.enable', value: 'true' }, { name: 'min.insync.replicas', value: '1' }] }],
        waitForLeaders: true,
      });
    } finally {
      await admin.disconnect();
    }
    await produce(aBootstrap(), 'a', 20);
    // A transaction open on a while b copies it: b's stop aborts it, a commits it afterwards.
    const txnProducer = new Kafka({ clientId: 'failback', brokers: a.bootstrap, logLevel: logLevel.NOTHING }).producer({ transactionalId: 'failback-open', idempotent: true, maxInFlightRequests: 1, allowAutoTopicCreation: false });
    await txnProducer.connect();
    const openTxn = await txnProducer.transaction();
    await openTxn.send({ topic: TOPIC, acks: -1, messages: [{ partition: 0, value: 'open-0' }] });
    const mirrored = await everyReplicaOfAEquals('a replicated', () => segments(a.node(1).dataDir!));

    // 1. a → b, then failover to b.
    await ok(b.bootstrap, '--create', '--mirror', MIRROR, '--mirror-config', mirrorConfig('b-from-a', aBootstrap()));
    await ok(b.bootstrap, '--start', '--mirror', MIRROR, '--topics', TOPIC);
    await eventually('b caught up', async () => (await isIn(b.bootstrap, 'MIRRORING')) && segments(b.dataDir).equals(mirrored));
    expect(await produceError(b.port)).toBe(ErrorCode.READ_ONLY_TOPIC);
    await ok(b.bootstrap, '--stop', '--mirror', MIRROR, '--topics', TOPIC);
    await eventually('b stopped', async () => isIn(b.bootstrap, 'STOPPED'));
    await produce(b.bootstrap, 'b', 5);
    await openTxn.commit();
    await txnProducer.disconnect();

    // 2. An unclean election on a: node 3 falls behind, nodes 1 and 2 take writes, stop, and
    // node 3 is elected with the shorter log and writes its own history.
    await a.node(3).stop();
    await produce(aBootstrap(), 'lost', 4);
    await a.node(1).stop();
    await a.node(2).stop();
    expect(values(segments(a.node(1).dataDir!)).filter((v) => v.includes(':lost-'))).toHaveLength(4);
    await a.node(3).start();
    await eventually('node 3 elected uncleanly', async () => (await leaderOfA()).nodeId === 3);
    expect(values(segments(a.node(3).dataDir!)).filter((v) => v.includes(':lost-'))).toEqual([]);
    await produce(aBootstrap(), 'unclean', 3);
    await a.node(1).start();
    await a.node(2).start();
    const diverged = await everyReplicaOfAEquals('a replicas agree after the unclean election', () => segments(a.node(3).dataDir!));
    // Offset 21 is a's COMMIT marker, which node 3 had.
    expect(values(diverged).slice(20)).toEqual(['20:open-0', '22:unclean-0', '23:unclean-1', '24:unclean-2']);

    // 3. Failback: a mirrors b under the same mirror name; every replica drops a's own suffix,
    // node 2 too, which is down while the leader truncates and comes back holding that suffix.
    await a.node(2).stop();
    await ok(a.bootstrap[0]!, '--create', '--mirror', MIRROR, '--mirror-config', mirrorConfig('a-from-b', b.bootstrap));
    // What the operator sees first: b holds the last epoch it mirrored from a, so a keeps the
    // 21 records both share and cuts its own COMMIT marker and 3 records (not everything, as a
    // lost or wrong LME would).
    const dryRun = await ok(a.bootstrap[0]!, '--start', '--mirror', MIRROR, '--topics', TOPIC, '--dry-run');
    expect(dryRun.out).toMatch(new RegExp(`${TOPIC}-0:   would truncate offsets 21\\.\\.24 .*: 3 records and 1 control markers`));
    expect(dryRun.out).toContain(`${TOPIC}-0:   would then copy from the source from offset 21 `);
    expect(values(segments(a.node(1).dataDir!))).toEqual(values(diverged));
    await ok(a.bootstrap[0]!, '--start', '--mirror', MIRROR, '--topics', TOPIC);
    await eventually('a mirroring b', async () => isIn(a.bootstrap[0]!, 'MIRRORING'), 60_000);
    await eventually('nodes 1 and 3 equal to b', async () => segments(a.node(1).dataDir!).equals(segments(b.dataDir)) && segments(a.node(3).dataDir!).equals(segments(b.dataDir)), 60_000);
    expect(segments(a.node(2).dataDir!).equals(diverged)).toBe(true);
    await a.node(2).start();
    const failedBack = await everyReplicaOfAEquals('every replica of a equal to b', () => segments(b.dataDir));
    const records = values(failedBack);
    expect(records.slice(0, 20)).toEqual(Array.from({ length: 20 }, (_, i) => `${i}:a-${i}`));
    expect(records.slice(20).map((r) => r.split(':')[1])).toEqual(['open-0', 'b-0', 'b-1', 'b-2', 'b-3', 'b-4']);
    expect(records.filter((r) => r.includes(':lost-') || r.includes(':unclean-'))).toEqual([]);
    expect(await produceError((await leaderOfA()).port)).toBe(ErrorCode.READ_ONLY_TOPIC);
    // A read_committed consumer on a reads what b holds as committed: the transaction a
    // committed after the failover reads as aborted, as it does on b, and nothing holds it up.
    const committedOnA = await readCommitted(a.bootstrap, 25);
    expect(committedOnA).toEqual([...Array.from({ length: 20 }, (_, i) => `a-${i}`), 'b-0', 'b-1', 'b-2', 'b-3', 'b-4']);

    // 4. a takes the topic back, and b mirrors it again under its own mirror dr.
    await ok(a.bootstrap[0]!, '--stop', '--mirror', MIRROR, '--topics', TOPIC);
    await eventually('a stopped', async () => isIn(a.bootstrap[0]!, 'STOPPED'));
    await produce(aBootstrap(), 'a-again', 3);
    // a holds the last epoch it mirrored from b: b, whose log a copied whole, cuts nothing.
    const again0 = await ok(b.bootstrap, '--start', '--mirror', MIRROR, '--topics', TOPIC, '--dry-run');
    expect(again0.out).toContain(`${TOPIC}-0:   nothing would be truncated: the log here ends at offset 28,`);
    expect(again0.out).toContain(`${TOPIC}-0:   would then copy from the source from offset 28 `);
    await ok(b.bootstrap, '--start', '--mirror', MIRROR, '--topics', TOPIC);
    const back = await everyReplicaOfAEquals('a replicated after the failback', () => segments(b.dataDir));
    await eventually('b mirroring a again', async () => (await isIn(b.bootstrap, 'MIRRORING')));
    const again = values(back);
    expect(again.slice(-3).map((r) => r.split(':')[1])).toEqual(['a-again-0', 'a-again-1', 'a-again-2']);
    expect(again.slice(0, 26)).toEqual(records);
    expect(await produceError(b.port)).toBe(ErrorCode.READ_ONLY_TOPIC);
  }, 180_000);
});
