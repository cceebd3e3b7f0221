/**
 * `fjord cluster-mirrors --start … --dry-run` for a failback, between two Fjord node processes:
 * A mirrored to B, B was stopped (failover) and written to, while A took 5 more records and a
 * transaction it never finished. A dry run of starting the reverse mirror on A prints what A
 * would lose (offsets 10..16: 7 records, their time range, the open transaction) and changes
 * nothing; the real start then truncates exactly that and A converges on B's log (verified).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Kafka, logLevel, type Producer } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clusterMirrors, type CliRun } from '../helpers/mirror-cli.js';
import { locatePartitions, offsetRange } from '../../src/cli/mirror-verify-reader.js';
import { KafkaClient } from '../../src/client/kafka-client.js';
import { startNode, type RunningNode } from '../helpers/node.js';
import { waitFor } from '../helpers/wait.js';

let a: RunningNode;
let b: RunningNode;
let txnProducer: Producer;
const work = mkdtempSync(join(tmpdir(), 'fjord-cli-start-dry-run-'));
const TOPIC = 'fb';
const T0 = 1_764_000_000_000;

const cli = (node: RunningNode, ...argv: string[]): Promise<CliRun> => clusterMirrors(node.bootstrap, ...argv);

async function partitionOf(node: RunningNode, mirror: string): Promise<{ state: string; destinationOffset: number } | undefined> {
  const r = await cli(node, '--describe', '--mirror', mirror, '--json');
  return (JSON.parse(r.out) as { topic: string; state: string; destinationOffset: number }[]).find((p) => p.topic === TOPIC);
}

const kafkaOf = (node: RunningNode): Kafka => new Kafka({ clientId: 'start-dry-run', brokers: [node.bootstrap], logLevel: logLevel.NOTHING });

async function produce(node: RunningNode, values: readonly string[], firstTimestamp: number): Promise<void> {
  const p = kafkaOf(node).producer({ allowAutoTopicCreation: false });
  await p.connect();
  await p.send({ topic: TOPIC, acks: -1, messages: values.map((value, i) => ({ partition: 0, value, timestamp: String(firstTimestamp + i) })) });
  await p.disconnect();
}

/** The log end offset (READ_UNCOMMITTED ListOffsets LATEST: past the open transaction too). */
async function logEnd(node: RunningNode): Promise<number> {
  const client = new KafkaClient({ bootstrapServers: [node.bootstrap], clientId: 'start-dry-run' });
  try {
    const at = (await locatePartitions(client, [TOPIC])).get(`${TOPIC}-0`);
    if (at === undefined) throw new Error(`no ${TOPIC}-0`);
    return (await offsetRange(client, at)).highWatermark;
  } finally {
    client.close();
  }
}

beforeAll(async () => {
  [a, b] = await Promise.all([startNode(), startNode({ overrides: { 'mirror.metadata.refresh.interval.ms': 1000 } })]);
  const admin = kafkaOf(a).admin();
  await admin.connect();
  await admin.createTopics({ topics: [{ topic: TOPIC, numPartitions: 1 }], waitForLeaders: true });
  await admin.disconnect();
  await produce(a, Array.from({ length: 10 }, (_, i) => `a-${i}`), T0 - 100);
  // A → B, caught up, then failed over to B: stopped and written to there.
  writeFileSync(join(work, 'a.properties'), `bootstrap.servers=${a.bootstrap}\nmirror.fetch.wait.max.ms=100\n`);
  expect((await cli(b, '--create', '--mirror', 'm1', '--mirror-config', join(work, 'a.properties'))).code).toBe(0);
  expect((await cli(b, '--start', '--mirror', 'm1', '--topics', TOPIC)).code).toBe(0);
  await waitFor('B caught up', async () => (await partitionOf(b, 'm1'))?.destinationOffset === 10);
  expect((await cli(b, '--stop', '--mirror', 'm1', '--topics', TOPIC)).code).toBe(0);
  await waitFor('B stopped', async () => (await partitionOf(b, 'm1'))?.state === 'STOPPED');
  await produce(b, ['b-0', 'b-1', 'b-2', 'b-3'], T0 + 1000);
  // A, still up, took writes B never saw: 5 records and an unfinished transaction of 2.
  await produce(a, ['a-10', 'a-11', 'a-12', 'a-13', 'a-14'], T0);
  txnProducer = kafkaOf(a).producer({ transactionalId: 'fb-txn', idempotent: true, maxInFlightRequests: 1, transactionTimeout: 300_000, allowAutoTopicCreation: false });
  await txnProducer.connect();
  const txn = await txnProducer.transaction();
  await txn.send({ topic: TOPIC, acks: -1, messages: [{ partition: 0, value: 'open-0', timestamp: String(T0 + 10) }, { partition: 0, value: 'open-1', timestamp: String(T0 + 11) }] });
  // The failback mirror on A, from B.
  writeFileSync(join(work, 'b.properties'), `bootstrap.servers=${b.bootstrap}\nmirror.fetch.wait.max.ms=100\n`);
  expect((await cli(a, '--create', '--mirror', 'm2', '--mirror-config', join(work, 'b.properties'))).code).toBe(0);
}, 240_000);

afterAll(async () => {
  await txnProducer?.disconnect().catch(() => undefined);
  await Promise.all([a?.destroy(), b?.destroy()]);
  rmSync(work, { recursive: true, force: true });
});

describe('fjord cluster-mirrors --start --dry-run (failback)', () => {
  it('prints what the start would truncate and abort, changing nothing', async () => {
    expect(await logEnd(a)).toBe(17);
    const r = await cli(a, '--start', '--mirror', 'm2', '--topics', TOPIC, '--dry-run');
    expect(r.code, r.err).toBe(0);
    const lines = r.out.split('\n');
    expect(lines[0]).toBe(`${TOPIC}-0: not mirrored here -> LOG_TRUNCATION -> MIRRORING; the source holds last mirrored epoch 0 for this cluster.`);
    expect(lines[1]).toBe(
      `${TOPIC}-0:   would truncate offsets 10..16 (to 17 by the last mirrored epoch, then to 10 where the epochs part from the source's): 7 records and 0 control markers in 2 batches, timestamps ${new Date(T0).toISOString()} to ${new Date(T0 + 11).toISOString()}.`,
    );
    expect(lines[2]).toMatch(new RegExp(`^${TOPIC}-0: {3}would drop the open transaction of producer \\d+ \\(epoch \\d+\\), open since offset 15, with the truncated records\\.$`));
    expect(lines[3]).toBe(`${TOPIC}-0:   would then copy from the source from offset 10 (offsets 10..14 now).`);
    expect(lines[4]).toBe('Dry run: nothing was changed.');
    // Nothing changed: A still ends at 17 and is no mirror topic; B's mirror is still stopped.
    expect(await logEnd(a)).toBe(17);
    expect(await partitionOf(a, 'm2')).toBeUndefined();
    expect((await partitionOf(b, 'm1'))?.state).toBe('STOPPED');
  });

  it('then truncates exactly that on the real start, and A converges on B', async () => {
    expect((await cli(a, '--start', '--mirror', 'm2', '--topics', TOPIC)).code).toBe(0);
    await waitFor('A mirroring B', async () => {
      const p = await partitionOf(a, 'm2');
      return p?.state === 'MIRRORING' && p.destinationOffset === 15;
    });
    expect(await logEnd(a)).toBe(15);
    const verified = await cli(a, '--verify', '--mirror', 'm2');
    expect(verified.code, verified.out).toBe(0);
    expect(verified.out).toContain(`${TOPIC}-0: offsets 0..14 identical`);
    // A dry run now has nothing to do.
    const again = await cli(a, '--start', '--mirror', 'm2', '--topics', TOPIC, '--dry-run');
    expect(again.out.split('\n')[0]).toBe(`${TOPIC}-0: already MIRRORING; the start changes nothing.`);
  });

  it('refuses a start that would loop, and plans a restart of the STOPPED topic that truncates nothing', async () => {
    // A now mirrors fb from B: starting B's m1 (from A) again would be a loop.
    const loop = await cli(b, '--start', '--mirror', 'm1', '--topics', TOPIC, '--dry-run');
    expect(loop.out.split('\n')[0]).toBe(`${TOPIC}: the source mirrors it from this cluster; the start would be refused with TOPIC_ALREADY_IN_CLUSTER_MIRROR (mirror loop).`);
    // Fail back over to A: stop m2 there. B's copy is then the shared history plus nothing else,
    // so restarting m1 on B (the STOPPED topic) cuts nothing and copies what A writes next.
    expect((await cli(a, '--stop', '--mirror', 'm2', '--topics', TOPIC)).code).toBe(0);
    await waitFor('A stopped', async () => (await partitionOf(a, 'm2'))?.state === 'STOPPED');
    const aEnd = await logEnd(a);
    const r = await cli(b, '--start', '--mirror', 'm1', '--topics', TOPIC, '--dry-run');
    expect(r.code, r.err).toBe(0);
    const lines = r.out.split('\n');
    expect(lines[0]).toMatch(new RegExp(`^${TOPIC}-0: STOPPED -> LOG_TRUNCATION -> MIRRORING; the source holds last mirrored epoch \\d+ for this cluster\\.$`));
    expect(lines[1]).toBe(`${TOPIC}-0:   nothing would be truncated: the log here ends at offset 15, within the history it shares with the source.`);
    expect(lines[2]).toBe(`${TOPIC}-0:   no open transaction.`);
    expect(lines[3]).toBe(`${TOPIC}-0:   would then copy from the source from offset 15 (offsets 15..${aEnd - 1} now).`);
    expect((await partitionOf(b, 'm1'))?.state).toBe('STOPPED');
    expect((await cli(b, '--start', '--mirror', 'm1', '--topics', TOPIC)).code).toBe(0);
    await waitFor('B mirroring A again', async () => {
      const p = await partitionOf(b, 'm1');
      return p?.state === 'MIRRORING' && p.destinationOffset === aEnd;
    });
    const verified = await cli(b, '--verify', '--mirror', 'm1');
    expect(verified.code, verified.out).toBe(0);
    expect(verified.out).toContain(`${TOPIC}-0: offsets 0..${aEnd - 1} identical`);
  });

  it('names a topic it would create, one the source lacks, and rejects --dry-run with --wait', async () => {
    const admin = kafkaOf(b).admin();
    await admin.connect();
    await admin.createTopics({ topics: [{ topic: 'fresh', numPartitions: 2 }], waitForLeaders: true });
    const id = (await admin.fetchTopicMetadata({ topics: ['fresh'] })).topics[0];
    await admin.disconnect();
    expect(id?.partitions).toHaveLength(2);
    const r = await cli(a, '--start', '--mirror', 'm2', '--topics', 'fresh,absent', '--dry-run');
    expect(r.code, r.err).toBe(0);
    expect(r.out.split('\n')).toEqual([
      expect.stringMatching(/^fresh: would be created here with 2 partitions \(topic id [0-9a-f-]{36}\) and copied from the source's log start; nothing here to truncate\.$/),
      'absent: not found on the source; the start would fail with UNKNOWN_TOPIC_OR_PARTITION.',
      'Dry run: nothing was changed.',
    ]);
    const onA = kafkaOf(a).admin();
    await onA.connect();
    expect(await onA.listTopics()).not.toContain('fresh');
    await onA.disconnect();
    expect((await cli(a, '--start', '--mirror', 'm2', '--topics', TOPIC, '--dry-run', '--wait')).code).toBe(2);
    expect((await cli(a, '--pause', '--mirror', 'm2', '--topics', TOPIC, '--dry-run')).code).toBe(2);
    const help = await cli(a, '--help');
    expect(help.out).toMatch(/--start .*--dry-run/);
    expect(help.out).toContain('--verify');
  });
});
