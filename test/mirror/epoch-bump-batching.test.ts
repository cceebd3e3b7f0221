/**
 * The fetcher's proactive leader-epoch bumps (§9.4) of a mirror start reach the controller
 * gathered. Every partition of a 40-partition source topic holds a record written at source
 * epoch 0, so each destination partition's first mirrored batch asks for a bump to 0 + 10 + 1.
 * Each partition is bumped exactly once, to 11, and the destination's metadata log takes those
 * 40 PartitionChangeRecords in a few batches: one batch per partition (what a bump per request
 * wrote) meant 40 writes applied and reconciled one after another while the partitions' data
 * waited behind them.
 *
 * A bump of this node's own leaves the partition with the same leader, still mirroring: it is not
 * a new leader term, so `__mirror_state` takes no MIRRORING record again for it. A pause after
 * the bumps is the barrier (its PAUSING and PAUSED writes queue behind anything they caused).
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Kafka, logLevel, type Admin } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clusterMirrors, leaderEpochs, mirrorStateRecords, mirrorStates, type CliRun } from '../helpers/mirror-cli.js';
import { startNode, type RunningNode } from '../helpers/node.js';
import { waitFor } from '../helpers/wait.js';

let a: RunningNode;
let b: RunningNode;
let srcAdmin: Admin;
let dstAdmin: Admin;
const work = mkdtempSync(join(tmpdir(), 'fjord-bump-batching-'));
const TOPIC = 'bumped';
const PARTITIONS = 40;

const cli = (...argv: string[]): Promise<CliRun> => clusterMirrors(b.bootstrap, ...argv);

/** Record batches in the destination's metadata log (`__cluster_metadata-0`), walked by their headers. */
function metadataBatches(node: RunningNode): number {
  const dir = join(node.dataDir, '__cluster_metadata-0');
  let n = 0;
  for (const f of readdirSync(dir).filter((x) => x.endsWith('.log'))) {
    const buf = readFileSync(join(dir, f));
    for (let at = 0; at + 12 <= buf.length; at += 12 + buf.readInt32BE(at + 8)) n++;
  }
  return n;
}

const stateRecords = (): Promise<number> => mirrorStateRecords(dstAdmin);

const states = (): Promise<string[]> => mirrorStates(b.bootstrap, 'from-a', TOPIC);

/** The destination's leader epoch of every partition of the mirrored topic. */
const destinationEpochs = (): Promise<number[]> => leaderEpochs(b.bootstrap, TOPIC);

beforeAll(async () => {
  [a, b] = await Promise.all([startNode(), startNode()]);
  const kafka = (bootstrap: string) => new Kafka({ clientId: 'bump-batching', brokers: [bootstrap], logLevel: logLevel.NOTHING });
  srcAdmin = kafka(a.bootstrap).admin();
  dstAdmin = kafka(b.bootstrap).admin();
  await Promise.all([srcAdmin.connect(), dstAdmin.connect()]);
  await srcAdmin.createTopics({ topics: [{ topic: TOPIC, numPartitions: PARTITIONS }], waitForLeaders: true });
  const producer = kafka(a.bootstrap).producer();
  await producer.connect();
  await producer.send({ topic: TOPIC, messages: Array.from({ length: PARTITIONS }, (_, p) => ({ partition: p, value: `r${p}` })) });
  await producer.disconnect();
  const file = join(work, 'from-a.properties');
  writeFileSync(file, `bootstrap.servers=${a.bootstrap}\nmirror.fetch.wait.max.ms=100\n`);
  const created = await cli('--create', '--mirror', 'from-a', '--mirror-config', file);
  expect(created.code, created.err).toBe(0);
}, 120_000);

afterAll(async () => {
  await Promise.all([srcAdmin?.disconnect(), dstAdmin?.disconnect()]);
  await Promise.all([a?.destroy(), b?.destroy()]);
  rmSync(work, { recursive: true, force: true });
});

describe('proactive leader-epoch bumps', () => {
  it('bumps each partition of a starting mirror once, in a few metadata batches', async () => {
    const before = metadataBatches(b);
    const started = await cli('--start', '--mirror', 'from-a', '--topics', TOPIC);
    expect(started.code, started.err).toBe(0);
    await waitFor('every record mirrored', async () => {
      const offsets = await dstAdmin.fetchTopicOffsets(TOPIC);
      return offsets.length === PARTITIONS && offsets.every((o) => o.high === '1');
    });
    await waitFor('every partition bumped', async () => (await destinationEpochs()).every((e) => e >= 11));
    expect(await destinationEpochs()).toEqual(Array.from({ length: PARTITIONS }, () => 11));
    // The start's own writes (the topic, its mirror binding, its configs) and the gathered bumps:
    // far fewer than one per partition. The node opens the new logs sixteen at a time, so the
    // partitions reach their first batch, and ask for their bump, in a few waves.
    const written = metadataBatches(b) - before;
    expect(written).toBeGreaterThan(0);
    expect(written).toBeLessThan(PARTITIONS / 2);

    const paused = await cli('--pause', '--mirror', 'from-a', '--topics', TOPIC);
    expect(paused.code, paused.err).toBe(0);
    await waitFor('PAUSED', async () => (await states()).every((x) => x === 'PAUSED'));
    // Per partition: its start (LOG_TRUNCATION, then MIRRORING), then PAUSING and PAUSED.
    expect(await stateRecords()).toBe(4 * PARTITIONS);
  });
});
