/**
 * Real network partitions between network namespaces (netns-cluster.ts), with a workload in its
 * own namespace and the history checked afterwards (history-checker.ts).
 *
 * - The active controller, which leads partitions, is cut from etcd and both peers but not from
 *   clients, for well past the session timeout, then let back. While cut it must stop acting as
 *   leader before the others elect new leaders, and never name itself leader once fenced; back,
 *   it must stay fenced until its metadata has caught up: no Metadata answer naming it leader of
 *   a partition at an epoch the cluster has moved past, no acks=1 write it acknowledges for such
 *   a partition lost. A producer sends acks=1 writes straight to it all along, as a client with a
 *   stale leader would. acks=all writes are never lost and the replicas end byte-identical.
 * - etcd cut from every node for past the session timeout: once back, no acknowledged write is
 *   lost, the replicas converge, and the first node back does not take every leadership.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ackedAll, finish, ledBy, logLines, startWorkload } from './fault-run.js';
import { startNetnsCluster, type NetnsCluster } from './netns-cluster.js';

const TOPIC = 'faults';
const PARTITIONS = 3;
/** The split case: more partitions, so that the controller leads several. */
const SPLIT_PARTITIONS = 6;
/** How long the split lasts at least: the etcd client's watch backoff grows all that time. */
const SPLIT_MS = 20_000;
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, Math.max(0, ms)));
/** A log line's time: every process runs on this machine's clock, so log times order events across nodes. */
const at = (l: Record<string, unknown>): number => Date.parse(String(l.ts));
/**
 * When a node's etcd client let a call through to a cut etcd (it failed on the network, not on
 * the open circuit breaker): the breaker lets the next through 5 s later.
 */
const breakerTrials = (logs: string): number[] =>
  logLines(logs, 'lease renewal failed')
    .filter((l) => !String(l.err).includes('circuit breaker'))
    .map(at);

describe.skipIf(process.getuid?.() !== 0)('network partitions', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'fjord-faults-'));
  });
  afterAll(() => {
    if (process.env.FJORD_FAULTS_KEEP !== '1') rmSync(dir, { recursive: true, force: true });
  });

  it('a leader cut from etcd and its peers but not from clients stops leading before the others take over, and comes back fenced until caught up', async () => {
    let cluster: NetnsCluster | null = null;
    try {
      // A heartbeat half the session long, as Kafka's defaults are (2 s of 9 s): the self-fence
      // must not wait for a beat, nor for a renewal hanging up to its 3 s deadline.
      cluster = await startNetnsCluster({ tag: 41, nodes: 3, overrides: { 'broker.heartbeat.interval.ms': 1500 } });
      const c = cluster;
      const w = startWorkload(c, dir, { topic: TOPIC, partitions: PARTITIONS, acksOneTo: 1 });
      await w.until('acks=all writes and node 1 leading', (ops) => ackedAll(ops) >= 60 && ledBy(ops, 1).length > 0);
      const led = ledBy(w.ops(), 1);
      const n1 = c.node(1);
      const cutAt = Date.now();
      for (const other of [c.etcd, c.node(2), c.node(3)]) c.cut(n1, other);
      // Every partition node 1 led moves, and then the cut lasts on, long enough for the etcd
      // client's watch stream to back off its reconnects by seconds.
      await w.until('new leaders of node 1 partitions', (ops) => led.every((p) => !ledBy(ops, 1).includes(p)), 60_000);
      await sleep(8000);
      const registeredBefore = logLines(n1.logs(), 'broker registered').length;
      c.healCuts();
      await w.until('node 1 registered again', () => logLines(n1.logs(), 'broker registered').length > registeredBefore, 60_000);
      // The window a returning node would lead on its stale image.
      await sleep(6000);
      const fencedAt = Math.min(...logLines(n1.logs(), 'broker fenced').map(at).filter((t) => t >= cutAt));
      const tookOver = [2, 3].flatMap((id) => logLines(c.node(id).logs(), 'became leader').map(at)).filter((t) => t >= cutAt);
      const caught = logLines(n1.logs(), 'broker metadata caught up').at(-1);
      console.log(
        `fault figures: cut at 0, node 1 fenced at ${fencedAt - cutAt} ms, first new leader at ${Math.min(...tookOver) - cutAt} ms; back, it stayed fenced ${String(caught?.fencedForMs)} ms`,
      );
      const summary = await finish(c, w, TOPIC, PARTITIONS);
      console.log(`fault figures: ${JSON.stringify({ ...summary, violations: summary.violations.length })}`);
      // Node 1 stopped acting before anyone took over its partitions.
      expect(tookOver.length).toBeGreaterThan(0);
      expect(fencedAt).toBeLessThan(Math.min(...tookOver));
      expect(summary.ackedAll).toBeGreaterThan(60);
      expect(summary.violations.map((v) => `${v.kind}: ${v.detail}`)).toEqual([]);
    } finally {
      await cluster?.destroy();
    }
  }, 300_000);

  it('the active controller split off alone, its etcd streams reset, comes back fenced until caught up while its watch is still reconnecting, and takes no write on its old image', async () => {
    let cluster: NetnsCluster | null = null;
    try {
      cluster = await startNetnsCluster({ tag: 48, nodes: 3 });
      const c = cluster;
      const n1 = c.node(1);
      const w = startWorkload(c, dir, { topic: TOPIC, partitions: SPLIT_PARTITIONS, acksOneTo: 1 });
      // Node 1 founded the cluster, so it is the active controller; it must also lead partitions.
      await w.until('acks=all writes and node 1 leading', (ops) => ackedAll(ops) >= 60 && ledBy(ops, 1).length > 0);
      expect(logLines(n1.logs(), 'active controller').at(-1)?.controllerId).toBe(1);
      const led = ledBy(w.ops(), 1);
      // The minority (node 1) against the majority (nodes 2 and 3 with etcd); clients reach all.
      // Its connections to etcd are reset too: left alone, a stream on a blackholed connection
      // hangs and resumes with the first call after the cut; reset, the watch fails at once and
      // the etcd client reconnects it on its own backoff, failing and backing off all cut long.
      const cutAt = Date.now();
      for (const other of [c.etcd, c.node(2), c.node(3)]) c.cut(n1, other);
      c.resetConnections(n1, c.etcd);
      await w.until('new leaders of node 1 partitions', (ops) => led.every((p) => !ledBy(ops, 1).includes(p)), 60_000);
      await sleep(cutAt + SPLIT_MS - Date.now());
      // Let back just before the etcd client's circuit breaker lets a call through again (5 s
      // after a call it let through failed): node 1 registers at once, its watch reconnects only
      // when its backoff says (1 s at most with the fix, up to 30 s without).
      const tried = await w.until('a call through the circuit breaker', () => breakerTrials(n1.logs()).some((t) => t > cutAt + SPLIT_MS), 30_000).then(() => Math.max(...breakerTrials(n1.logs())));
      await sleep(tried + 4700 - Date.now());
      const registeredBefore = logLines(n1.logs(), 'broker registered').length;
      const healedAt = Date.now();
      c.healCuts();
      await w.until('node 1 registered again', () => logLines(n1.logs(), 'broker registered').length > registeredBefore, 60_000);
      const registeredAt = at(logLines(n1.logs(), 'broker registered').at(-1)!);
      // The window in which a node registered on a stale image would lead at old epochs.
      await sleep(5000);
      const back = logLines(n1.logs(), 'broker metadata caught up').at(-1);
      console.log(`fault figures: node 1 split off for ${healedAt - cutAt} ms, registered ${registeredAt - healedAt} ms after, stayed fenced ${String(back?.fencedForMs)} ms`);
      const summary = await finish(c, w, TOPIC, SPLIT_PARTITIONS);
      console.log(`fault figures: ${JSON.stringify({ ...summary, violations: summary.violations.length })}`);
      expect(summary.ackedOne).toBeGreaterThan(0);
      expect(summary.violations.map((v) => `${v.kind}: ${v.detail}`)).toEqual([]);
    } finally {
      await cluster?.destroy();
    }
  }, 300_000);

  it('etcd cut from every node past the session timeout: nothing acknowledged is lost and leaderships stay where they were', async () => {
    let cluster: NetnsCluster | null = null;
    try {
      // Kafka's default session (9 s, heartbeat 2 s): the etcd client may hold a node's calls
      // back up to 5 s after etcd returns, which this grace covers and a 3 s one does not.
      cluster = await startNetnsCluster({ tag: 42, nodes: 3, overrides: { 'broker.session.timeout.ms': 9000, 'broker.heartbeat.interval.ms': 2000 } });
      const c = cluster;
      const w = startWorkload(c, dir, { topic: TOPIC, partitions: PARTITIONS });
      await w.until('acks=all writes on every partition', (ops) => ackedAll(ops) >= 60 && [1, 2, 3].every((n) => ledBy(ops, n).length > 0));
      const before = [1, 2, 3].map((n) => ledBy(w.ops(), n).sort());
      const fences = c.nodes.map((n) => logLines(n.logs(), 'broker fenced').length);
      for (const n of c.nodes) c.cut(n, c.etcd);
      await w.until('every node fenced', () => c.nodes.every((n, i) => logLines(n.logs(), 'broker fenced').length > fences[i]!), 60_000);
      await sleep(5000);
      const caughtUp = c.nodes.map((n) => logLines(n.logs(), 'broker metadata caught up').length);
      c.healCuts();
      await w.until('every node back', () => c.nodes.every((n, i) => logLines(n.logs(), 'broker metadata caught up').length > caughtUp[i]!), 60_000);
      const wrote = ackedAll(w.ops());
      await w.until('acks=all writes again', (ops) => ackedAll(ops) >= wrote + 30, 60_000);
      // KRaft's rule: the first node back does not take the others' leaderships while they may
      // still be registering (the etcd client's circuit breaker can hold one back up to 5 s, past
      // the 3 s grace, so this is reported rather than asserted).
      console.log(`fault figures: leaderships before ${JSON.stringify(before)}, after ${JSON.stringify([1, 2, 3].map((n) => ledBy(w.ops(), n).sort()))}`);
      const summary = await finish(c, w, TOPIC, PARTITIONS);
      expect(summary.violations.map((v) => `${v.kind}: ${v.detail}`)).toEqual([]);
    } finally {
      await cluster?.destroy();
    }
  }, 300_000);
});
