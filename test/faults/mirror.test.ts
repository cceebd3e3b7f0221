/**
 * A cluster mirror under a fault: a source Fjord node (a cluster of its own, in its own network
 * namespace) takes writes to a topic that the three-node cluster mirrors (KIP-1279), while the
 * workload runs on the cluster's own topic. A `fjord cluster-mirrors --stop` (failover) is given,
 * and the destination node leading the most mirrored partitions is cut: from etcd, its peers and
 * the source as soon as it has begun stopping them (persisted STOPPING); or from etcd alone as
 * the stop is given, so that it never hears of the stop but still reaches its peers and the
 * source, and clients still reach it, until it fences itself. Afterwards:
 *
 * - every mirrored partition is STOPPED and takes acks=all writes;
 * - every replica holds, before the stop's MIRROR_PID_RESET batch, a byte prefix of the source's
 *   log: the source's batches at the source's offsets with the source's partition leader epochs
 *   (a mirror keeps them as they are, docs/mirroring.md), then the stop's batch;
 * - the replicas of every mirrored partition end byte-identical;
 * - the workload's history is clean.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ackedAll, converged, finish, replicaDifferences, startWorkload } from './fault-run.js';
import { partitionBytes } from './history-checker.js';
import { MirrorRun, notSourcePrefix, pidResetAt, until } from './mirror-run.js';
import { startNetnsCluster, type NetnsCluster } from './netns-cluster.js';

const TOPIC = 'faults';
const PARTITIONS = 3;
const MIRRORED = 'mirrored';
const MIRRORED_PARTITIONS = 6;
const MIRROR = 'dr';
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

describe.skipIf(process.getuid?.() !== 0)('a cluster mirror under faults', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'fjord-faults-'));
  });
  afterAll(() => {
    if (process.env.FJORD_FAULTS_KEEP !== '1') rmSync(dir, { recursive: true, force: true });
  });

  /**
   * A stop given through another node while the destination node leading the most mirrored
   * partitions is cut, from etcd and the others (`everything`) or from etcd alone, once it has
   * persisted STOPPING for one of them.
   */
  async function stopWithLeaderCut(tag: number, cutFrom: 'everything' | 'etcd'): Promise<void> {
    let cluster: NetnsCluster | null = null;
    try {
      cluster = await startNetnsCluster({
        tag,
        nodes: 3,
        sources: 1,
        overrides: { 'default.replication.factor': 3, 'mirror.metadata.refresh.interval.ms': 1000, 'mirror.failed.retry.initial.backoff.ms': 200, 'mirror.failed.retry.max.backoff.ms': 1000 },
      });
      const c = cluster;
      const m = new MirrorRun(c, c.sources[0]!, MIRROR, MIRRORED, MIRRORED_PARTITIONS);
      await m.startSource(200);
      const w = startWorkload(c, dir, { topic: TOPIC, partitions: PARTITIONS, acksOneTo: 1 });
      await m.create(dir, c.node(1).bootstrap);
      await m.untilAll(c.node(1).bootstrap, 'MIRRORING', 120_000, (p) => p.destinationOffset > 20);
      await w.until('acks=all writes of the workload', (ops) => ackedAll(ops) >= 60, 120_000);

      // The node leading most mirrored partitions is the one cut off; the stop goes to another.
      const leaders = await m.leaders();
      const counts = c.nodes.map((n) => [...leaders.values()].filter((l) => l === n.nodeId).length);
      const cutNode = c.nodes[counts.indexOf(Math.max(...counts))]!;
      const led = [...leaders].filter(([, l]) => l === cutNode.nodeId).map(([p]) => p);
      const other = c.nodes.find((n) => n !== cutNode)!;
      // Cut from etcd alone, it is cut as the stop is given: it never hears of the stop from the
      // metadata log and mirrors on, reached by its peers and the source, until it fences itself;
      // the new leaders run the whole stop sequence. Cut from everything, it is cut as soon as it
      // has persisted STOPPING for one of its partitions: the rest of its stop sequence (last
      // mirrored epoch, epoch bump, MIRROR_PID_RESET, STOPPED) is left to whoever leads next.
      if (cutFrom === 'etcd') c.cut(cutNode, c.etcd);
      const stop = m.cli(other.bootstrap, ['--stop', '--mirror', MIRROR, '--topics', MIRRORED, '--timeout', '120']);
      if (cutFrom === 'everything') {
        let stopExited = false;
        void stop.done.then(() => (stopExited = true));
        const stopping = (): boolean => led.some((p) => cutNode.logs().includes(`"msg":"mirror ${MIRROR} ${MIRRORED}-${p}: MIRRORING -> STOPPING"`));
        await until('the stop under way on the leader', () => stopExited || stopping(), 120_000, 5);
        for (const o of [c.etcd, m.source, ...c.nodes.filter((n) => n !== cutNode)]) c.cut(cutNode, o);
      }
      const resetOnCutNode = (): number => led.filter((p) => pidResetAt(partitionBytes(cutNode.dataDir, MIRRORED, p)) >= 0).length;
      const stoppedAtCut = resetOnCutNode();
      const stopped = await stop.done;
      console.log(`fault figures (mirror stop): node ${cutNode.nodeId} cut from ${cutFrom} with the MIRROR_PID_RESET of ${stoppedAtCut} of its ${led.length} partitions on its disk; --stop exited ${stopped.code}: ${stopped.out.trim()}`);
      await until('new leaders of the cut node partitions', async () => [...(await m.leaders(cutNode)).values()].every((l) => l !== cutNode.nodeId && l >= 0), 60_000);
      await sleep(3000);
      c.healCuts();
      await m.untilAll(other.bootstrap, 'STOPPED', 120_000);
      expect(await m.writeEach(60_000)).toEqual([]);
      const wrote = ackedAll(w.ops());
      await w.until('acks=all writes of the workload after the stop', (ops) => ackedAll(ops) >= wrote + 30, 60_000);

      const sourceAcked = m.sourceAcked();
      await m.stopSource();
      const summary = await finish(c, w, TOPIC, PARTITIONS);
      if (!(await converged(c, MIRRORED, MIRRORED_PARTITIONS))) expect(replicaDifferences(c, MIRRORED, MIRRORED_PARTITIONS)).toEqual([]);
      expect(notSourcePrefix(c, m.source, MIRRORED, MIRRORED_PARTITIONS, true)).toEqual([]);
      const prefixes = Array.from({ length: MIRRORED_PARTITIONS }, (_, p) => pidResetAt(partitionBytes(c.nodes[0]!.dataDir, MIRRORED, p)));
      // Where the new leaders took the cut node's partitions up: the persisted state they found.
      const resumed = led.map((p) =>
        c.nodes
          .filter((n) => n !== cutNode)
          .flatMap((n) => [...n.logs().matchAll(new RegExp(`"msg":"mirror ${MIRROR} ${MIRRORED}-${p}: (STOPPING -> \\w+)"`, 'g'))].map((x) => x[1])),
      );
      console.log(`fault figures (mirror): ${JSON.stringify({ sourceAcked, leaders: Object.fromEntries(leaders), mirroredBytes: prefixes, resumed, ...summary, violations: summary.violations.length })}`);
      expect(summary.violations.map((v) => `${v.kind}: ${v.detail}`)).toEqual([]);
    } finally {
      await cluster?.destroy();
    }
  }

  it('a stop whose destination leader is cut off midway ends with every partition STOPPED, writable, and a byte prefix of the source', () => stopWithLeaderCut(47, 'everything'), 300_000);

  it('a stop whose destination leader is cut from etcd alone as it is given (peers, source and clients still reach it) ends the same', () => stopWithLeaderCut(49, 'etcd'), 300_000);
});
