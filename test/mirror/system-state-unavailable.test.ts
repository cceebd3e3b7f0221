/**
 * A mirror started on a cluster whose `__mirror_state` cannot be created yet (its replication
 * factor is above the nodes registered while one is down, as for Kafka's internal topics): the
 * start is accepted, and `--describe` must show the partition with the reason it cannot go on,
 * not an empty list. Once the node is back, the topic is mirrored.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Kafka, logLevel } from 'kafkajs';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { eventually, startCluster, type RunningCluster } from '../helpers/cluster.js';
import { clusterMirrors } from '../helpers/mirror-cli.js';
import { startNode, type RunningNode } from '../helpers/node.js';

const FAST = { 'mirror.failed.retry.initial.backoff.ms': 200, 'mirror.failed.retry.max.backoff.ms': 1000, 'mirror.metadata.refresh.interval.ms': 500 };
let dest: RunningCluster;
let source: RunningNode;
const work = mkdtempSync(join(tmpdir(), 'fjord-system-state-unavailable-'));

beforeAll(async () => {
  [dest, source] = await Promise.all([startCluster({ nodes: 2, overrides: { ...FAST, 'mirror.state.topic.replication.factor': 2 } }), startNode({ overrides: FAST })]);
}, 120_000);

afterAll(async () => {
  await Promise.all([dest?.destroy(), source?.destroy()]);
  rmSync(work, { recursive: true, force: true });
});

it('shows a started partition whose state cannot be read yet, with the reason, and mirrors it once it can', async () => {
  const admin = new Kafka({ clientId: 'state-unavailable', brokers: [source.bootstrap], logLevel: logLevel.NOTHING }).admin();
  await admin.connect();
  await admin.createTopics({ topics: [{ topic: 'ledger', numPartitions: 1 }], waitForLeaders: true });
  await admin.disconnect();
  await dest.node(2).stop();
  const props = join(work, 'dr.properties');
  writeFileSync(props, `bootstrap.servers=${source.bootstrap}\nmirror.fetch.wait.max.ms=100\n`);
  const node1 = dest.node(1).bootstrap;
  expect((await clusterMirrors(node1, '--create', '--mirror', 'dr', '--mirror-config', props)).code).toBe(0);
  expect((await clusterMirrors(node1, '--start', '--mirror', 'dr', '--topics', 'ledger')).out).toBe('Started mirroring of topic ledger.');
  const rows = async (): Promise<{ topic: string; state: string; errorMessage: string | null }[]> => {
    const r = await clusterMirrors(node1, '--describe', '--mirror', 'dr', '--json');
    if (r.code !== 0) throw new Error(r.err);
    return JSON.parse(r.out) as never;
  };
  // Until node 2 is back, __mirror_state has no leader: the operator is told so.
  const shown = await eventually('the partition shown with its reason', async () => {
    const r = await rows();
    return r.length === 1 && r[0]!.errorMessage !== null ? r[0]! : null;
  });
  expect(shown.errorMessage).toContain('__mirror_state');
  await dest.node(2).start();
  await eventually('mirroring once the state can be read', async () => {
    const r = await rows();
    return r.length === 1 && r[0]!.state === 'MIRRORING';
  }, 60_000);
});
