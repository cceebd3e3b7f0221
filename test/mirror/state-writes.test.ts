/**
 * A mirror partition's state is written to `__mirror_state` when it changes, not on every
 * metadata change: two Fjord nodes, a 4-partition topic MIRRORING on the destination, then
 * metadata changes that do not concern it (five other topics created, one deleted, one topic
 * config altered). Pausing the mirrored topic afterwards is the barrier (its PAUSING and PAUSED
 * writes queue behind anything those changes caused on each partition): `__mirror_state` grows
 * by exactly those 8 records.
 *
 * The count starts once the partitions are settled: the fetcher's first fetch asks for a
 * proactive leader epoch bump (§9.4), a real change of each partition's epoch (the same leader
 * goes on mirroring, so it writes no state of its own: epoch-bump-batching counts that); a pause
 * and resume after the bumps are seen puts anything the start wrote behind the count.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
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
const work = mkdtempSync(join(tmpdir(), 'fjord-state-writes-'));
const TOPIC = 'counted';
const PARTITIONS = 4;

const cli = (...argv: string[]): Promise<CliRun> => clusterMirrors(b.bootstrap, ...argv);

const states = (): Promise<string[]> => mirrorStates(b.bootstrap, 'from-a', TOPIC);

/** The destination's leader epoch of every partition of the mirrored topic. */
const destinationEpochs = (): Promise<number[]> => leaderEpochs(b.bootstrap, TOPIC);

async function pauseResume(): Promise<void> {
  const paused = await cli('--pause', '--mirror', 'from-a', '--topics', TOPIC);
  expect(paused.code, paused.err).toBe(0);
  await waitFor('PAUSED', async () => (await states()).every((x) => x === 'PAUSED'));
  const resumed = await cli('--resume', '--mirror', 'from-a', '--topics', TOPIC);
  expect(resumed.code, resumed.err).toBe(0);
  await waitFor('MIRRORING again', async () => (await states()).every((x) => x === 'MIRRORING'));
}

const stateRecords = (): Promise<number> => mirrorStateRecords(dstAdmin);

beforeAll(async () => {
  [a, b] = await Promise.all([startNode(), startNode()]);
  srcAdmin = new Kafka({ clientId: 'state-writes', brokers: [a.bootstrap], logLevel: logLevel.NOTHING }).admin();
  dstAdmin = new Kafka({ clientId: 'state-writes', brokers: [b.bootstrap], logLevel: logLevel.NOTHING }).admin();
  await Promise.all([srcAdmin.connect(), dstAdmin.connect()]);
  await srcAdmin.createTopics({ topics: [{ topic: TOPIC, numPartitions: PARTITIONS }], waitForLeaders: true });
  const file = join(work, 'from-a.properties');
  writeFileSync(file, `bootstrap.servers=${a.bootstrap}\nmirror.fetch.wait.max.ms=100\n`);
  const created = await cli('--create', '--mirror', 'from-a', '--mirror-config', file);
  expect(created.code, created.err).toBe(0);
  const started = await cli('--start', '--mirror', 'from-a', '--topics', TOPIC);
  expect(started.code, started.err).toBe(0);
  await waitFor('MIRRORING', async () => {
    const s = await states();
    return s.length === PARTITIONS && s.every((x) => x === 'MIRRORING');
  });
  // The source's epochs are 0: each partition here is bumped to 10 or more once.
  await waitFor('proactive epoch bumps', async () => (await destinationEpochs()).every((e) => e >= 10));
  await pauseResume();
}, 120_000);

afterAll(async () => {
  await Promise.all([srcAdmin?.disconnect(), dstAdmin?.disconnect()]);
  await Promise.all([a?.destroy(), b?.destroy()]);
  rmSync(work, { recursive: true, force: true });
});

describe('mirror partition state writes', () => {
  it('writes nothing to __mirror_state for metadata changes that leave a partition as it was', async () => {
    const before = await stateRecords();
    for (let i = 0; i < 5; i++) await dstAdmin.createTopics({ topics: [{ topic: `unrelated-${i}`, numPartitions: 2 }], waitForLeaders: true });
    await dstAdmin.deleteTopics({ topics: ['unrelated-0'] });
    await dstAdmin.alterConfigs({ validateOnly: false, resources: [{ type: 2, name: 'unrelated-1', configEntries: [{ name: 'retention.ms', value: '3600000' }] }] });

    const paused = await cli('--pause', '--mirror', 'from-a', '--topics', TOPIC);
    expect(paused.code, paused.err).toBe(0);
    await waitFor('PAUSED', async () => (await states()).every((x) => x === 'PAUSED'));
    // PAUSING and PAUSED, once each per partition, and nothing else.
    expect((await stateRecords()) - before).toBe(2 * PARTITIONS);

    // A real change is still written: resumed, each partition goes back to MIRRORING once.
    const resumed = await cli('--resume', '--mirror', 'from-a', '--topics', TOPIC);
    expect(resumed.code, resumed.err).toBe(0);
    await waitFor('MIRRORING again', async () => (await states()).every((x) => x === 'MIRRORING'));
    expect((await stateRecords()) - before).toBe(3 * PARTITIONS);
  });
});
