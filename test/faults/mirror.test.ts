/**
 * A cluster mirror under a fault: a source Fjord node (a cluster of its own, in its own network
 * namespace) takes writes to a topic that the three-node cluster mirrors (KIP-1279), while the
 * workload runs on the cluster's own topic. A `fjord cluster-mirrors --stop` (failover) is given,
 * and the destination node leading the most mirrored partitions is cut from etcd, its peers and
 * the source as soon as it has begun stopping them (persisted STOPPING). Afterwards:
 *
 * - every mirrored partition is STOPPED and takes acks=all writes;
 * - every replica holds, before the stop's MIRROR_PID_RESET batch, a byte prefix of the source's
 *   log: the source's batches at the source's offsets with the source's partition leader epochs
 *   (a mirror keeps them as they are, docs/mirroring.md), then the stop's batch;
 * - the replicas of every mirrored partition end byte-identical;
 * - the workload's history is clean.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ControlRecordType, controlTypeOf } from '../../src/protocol/control-records.js';
import { iterateBatches } from '../../src/protocol/record-batch.js';
import { ROOT } from '../helpers/node.js';
import { converged, finish, startWorkload } from './fault-run.js';
import { partitionBytes } from './history-checker.js';
import { startNetnsCluster, type NetnsCluster, type NetnsNode } from './netns-cluster.js';

const TOPIC = 'faults';
const PARTITIONS = 3;
const MIRRORED = 'mirrored';
const MIRRORED_PARTITIONS = 6;
const MIRROR = 'dr';
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Runs a command in the client namespace; resolves with its exit code and output. */
function run(c: NetnsCluster, args: readonly string[]): { done: Promise<{ code: number; out: string }>; proc: ChildProcess } {
  const proc = c.spawnClient(args);
  let out = '';
  proc.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  proc.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const done = new Promise<{ code: number; out: string }>((r) => proc.once('exit', (code) => r({ code: code ?? -1, out })));
  return { done, proc };
}

const cli = (c: NetnsCluster, bootstrap: string, args: readonly string[]) => run(c, ['node', join(ROOT, 'bin/fjord.js'), 'cluster-mirrors', '--bootstrap-server', bootstrap, ...args]);
const client = (c: NetnsCluster, mode: string, opts: object) => run(c, ['node', join(ROOT, 'bench/run.mjs'), join(ROOT, 'test/faults/mirror-client.ts'), mode, JSON.stringify(opts)]);
const lines = (out: string): Record<string, unknown>[] =>
  out
    .split('\n')
    .filter((l) => l.startsWith('{') || l.startsWith('['))
    .map((l) => JSON.parse(l) as Record<string, unknown>);

interface Described {
  readonly partition: number;
  readonly state: string;
  readonly destinationOffset: number;
}

async function describeMirror(c: NetnsCluster, bootstrap: string): Promise<Described[]> {
  const { code, out } = await cli(c, bootstrap, ['--describe', '--mirror', MIRROR, '--json']).done;
  if (code !== 0) return [];
  const rows = out.split('\n').find((l) => l.startsWith('['));
  return rows === undefined ? [] : (JSON.parse(rows) as Described[]);
}

async function until(what: string, pred: () => boolean | Promise<boolean>, timeoutMs: number, everyMs = 250): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await pred())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(everyMs);
  }
}

/** Where the stop's MIRROR_PID_RESET batch starts in the partition's bytes, or -1. */
function pidResetAt(bytes: Buffer): number {
  for (const b of iterateBatches(bytes)) if (b.isControl && controlTypeOf(b) === ControlRecordType.MIRROR_PID_RESET) return b.offset;
  return -1;
}

/** The mirrored partitions `node` leads, as Metadata from the other nodes names them. */
async function ledBy(c: NetnsCluster, node: NetnsNode | null): Promise<Map<number, number>> {
  const others = c.nodes.filter((n) => n !== node).map((n) => n.bootstrap);
  const { out } = await client(c, 'leaders', { bootstrap: others.join(','), topic: MIRRORED, partitions: MIRRORED_PARTITIONS }).done;
  return new Map(lines(out).map((l) => [Number(l.partition), Number(l.leader)]));
}

describe.skipIf(process.getuid?.() !== 0)('a cluster mirror under faults', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'fjord-faults-'));
  });
  afterAll(() => {
    if (process.env.FJORD_FAULTS_KEEP !== '1') rmSync(dir, { recursive: true, force: true });
  });

  it('a stop whose destination leader is cut off midway ends with every partition STOPPED, writable, and a byte prefix of the source', async () => {
    let cluster: NetnsCluster | null = null;
    try {
      cluster = await startNetnsCluster({
        tag: 47,
        nodes: 3,
        sources: 1,
        overrides: { 'default.replication.factor': 3, 'mirror.metadata.refresh.interval.ms': 1000, 'mirror.failed.retry.initial.backoff.ms': 200, 'mirror.failed.retry.max.backoff.ms': 1000 },
      });
      const c = cluster;
      const source = c.sources[0]!;
      const producer = client(c, 'source', { bootstrap: source.bootstrap, topic: MIRRORED, partitions: MIRRORED_PARTITIONS });
      let produced = '';
      producer.proc.stdout!.on('data', (d: Buffer) => (produced += d.toString()));
      const sourceAcked = (): number => Math.max(0, ...lines(produced).map((l) => Number(l.acked)));
      await until('writes on the source', () => sourceAcked() >= 200, 60_000);
      const w = startWorkload(c, dir, { topic: TOPIC, partitions: PARTITIONS, acksOneTo: 1 });

      const config = join(dir, 'source.properties');
      writeFileSync(config, `bootstrap.servers=${source.bootstrap}\n`);
      const created = await cli(c, c.node(1).bootstrap, ['--create', '--mirror', MIRROR, '--mirror-config', config]).done;
      expect(created.out).toContain('Created cluster mirror');
      const started = await cli(c, c.node(1).bootstrap, ['--start', '--mirror', MIRROR, '--topics', MIRRORED]).done;
      expect(started.code, started.out).toBe(0);
      await until(
        'every mirrored partition MIRRORING with records',
        async () => {
          const d = await describeMirror(c, c.node(1).bootstrap);
          return d.length === MIRRORED_PARTITIONS && d.every((p) => p.state === 'MIRRORING' && p.destinationOffset > 20);
        },
        120_000,
      );

      // The node leading most mirrored partitions is the one cut off; the stop goes to another.
      const leaders = await ledBy(c, null);
      const counts = c.nodes.map((n) => [...leaders.values()].filter((l) => l === n.nodeId).length);
      const cutNode = c.nodes[counts.indexOf(Math.max(...counts))]!;
      const led = [...leaders].filter(([, l]) => l === cutNode.nodeId).map(([p]) => p);
      const other = c.nodes.find((n) => n !== cutNode)!;
      const stop = cli(c, other.bootstrap, ['--stop', '--mirror', MIRROR, '--topics', MIRRORED, '--timeout', '120']);
      // Cut as soon as the leader has persisted STOPPING for one of its partitions: the rest of
      // its stop sequence (last mirrored epoch, epoch bump, MIRROR_PID_RESET, STOPPED) is left to
      // whoever leads the partitions next.
      let stopExited = false;
      void stop.done.then(() => (stopExited = true));
      const stopping = (): boolean => led.some((p) => cutNode.logs().includes(`"msg":"mirror ${MIRROR} ${MIRRORED}-${p}: MIRRORING -> STOPPING"`));
      await until('the stop under way on the leader', () => stopExited || stopping(), 120_000, 5);
      for (const o of [c.etcd, source, ...c.nodes.filter((n) => n !== cutNode)]) c.cut(cutNode, o);
      const resetOnCutNode = (): number => led.filter((p) => pidResetAt(partitionBytes(cutNode.dataDir, MIRRORED, p)) >= 0).length;
      const stoppedAtCut = resetOnCutNode();
      const stopped = await stop.done;
      console.log(`fault figures (mirror stop): node ${cutNode.nodeId} cut with the MIRROR_PID_RESET of ${stoppedAtCut} of its ${led.length} partitions on its disk; --stop exited ${stopped.code}: ${stopped.out.trim()}`);
      await until('new leaders of the cut node partitions', async () => [...(await ledBy(c, cutNode)).values()].every((l) => l !== cutNode.nodeId && l >= 0), 60_000);
      await sleep(3000);
      c.healCuts();
      await until(
        'every mirrored partition STOPPED',
        async () => {
          const d = await describeMirror(c, other.bootstrap);
          return d.length === MIRRORED_PARTITIONS && d.every((p) => p.state === 'STOPPED');
        },
        120_000,
      );
      const wrote = await client(c, 'write', { bootstrap: c.bootstrap, topic: MIRRORED, partitions: MIRRORED_PARTITIONS, deadlineMs: 60_000 }).done;
      const writes = lines(wrote.out);
      expect(writes.map((l) => l.error ?? 'ok'), wrote.out).toEqual(Array(MIRRORED_PARTITIONS).fill('ok'));

      producer.proc.kill('SIGTERM');
      await producer.done;
      const summary = await finish(c, w, TOPIC, PARTITIONS);
      expect(await converged(c, MIRRORED, MIRRORED_PARTITIONS)).toBe(true);
      const prefixes: number[] = [];
      for (let p = 0; p < MIRRORED_PARTITIONS; p++) {
        const src = partitionBytes(source.dataDir, MIRRORED, p);
        for (const n of c.nodes) {
          const dst = partitionBytes(n.dataDir, MIRRORED, p);
          const at = pidResetAt(dst);
          expect(at, `${MIRRORED}-${p} on node ${n.nodeId}: no MIRROR_PID_RESET`).toBeGreaterThan(0);
          expect(dst.subarray(0, at).equals(src.subarray(0, at)), `${MIRRORED}-${p} on node ${n.nodeId}: not a byte prefix of the source`).toBe(true);
          if (n === c.nodes[0]) prefixes.push(at);
        }
      }
      // Where the new leaders took the cut node's partitions up: the persisted state they found.
      const resumed = led.map((p) =>
        c.nodes
          .filter((n) => n !== cutNode)
          .flatMap((n) => [...n.logs().matchAll(new RegExp(`"msg":"mirror ${MIRROR} ${MIRRORED}-${p}: (STOPPING -> \\w+)"`, 'g'))].map((m) => m[1])),
      );
      console.log(`fault figures (mirror): ${JSON.stringify({ sourceAcked: sourceAcked(), mirroredBytes: prefixes, resumed, ...summary, violations: summary.violations.length })}`);
      expect(summary.violations.map((v) => `${v.kind}: ${v.detail}`)).toEqual([]);
    } finally {
      await cluster?.destroy();
    }
  }, 300_000);
});
