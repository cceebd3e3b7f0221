/**
 * A bounded soak: `npm run chaos -- --minutes N [--seed S] [--faults a,b] [--tag T]` (only the
 * fault kinds named; T the namespaces' tag, 90 by default, so that two runs can share a machine). A three-node netns cluster
 * (netns-cluster.ts) runs the workload (workload.ts) while faults picked at random from the list
 * below come and go; at the end the history is checked (history-checker.ts) and a summary
 * printed: acknowledged writes, the faults injected, and every violation with the seed that
 * reproduces the run. Exits 1 when there is a violation.
 *
 * Faults: a node cut from etcd and its peers but not from clients; a node cut from everything
 * (minority/majority split); etcd cut from every node; a one-way cut (a node's packets to etcd
 * dropped, etcd's to it delivered); a flapping link (down and up every 1-3 s); a node paused
 * (SIGSTOP) past the session timeout and resumed; a mirror failover and failback: beside the
 * workload a source node takes writes that the cluster mirrors (mirror-run.ts), and this fault
 * stops the mirrored topic (`fjord cluster-mirrors --stop`) with a node cut from etcd, its peers
 * and the source meanwhile, checks every partition STOPPED, a byte prefix of the source and
 * writable, then starts mirroring it again. At the end the mirrored topic must have caught up
 * with the source byte for byte on every replica.
 */
import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { converged, finish, startWorkload } from './fault-run.js';
import { partitionBytes } from './history-checker.js';
import { MirrorRun, notSourcePrefix } from './mirror-run.js';
import { startNetnsCluster, type NetnsCluster } from './netns-cluster.js';

const TOPIC = 'chaos';
const PARTITIONS = 3;
const MIRRORED = 'mirrored';
const MIRRORED_PARTITIONS = 6;
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

/** mulberry32: a small seeded generator, so a seed replays the same fault sequence. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

type Fault = (c: NetnsCluster, node: number, ms: number, rand: () => number) => Promise<void>;

/** The mirror beside the workload, and what its checks found. */
let mirror: MirrorRun | null = null;
const mirrorViolations: string[] = [];

/** A failed mirror check: recorded, and the fault ends there. */
async function check(what: string, fn: () => Promise<unknown>): Promise<boolean> {
  try {
    await fn();
    return true;
  } catch (err) {
    mirrorViolations.push(`${what}: ${err instanceof Error ? err.message : String(err)}`);
    return false;
  }
}

const FAULTS: Record<string, Fault> = {
  'leader-isolated': async (c, n, ms) => {
    for (const o of [c.etcd, ...c.nodes.filter((x) => x.nodeId !== n)]) c.cut(c.node(n), o);
    await sleep(ms);
    c.healCuts();
  },
  'minority-split': async (c, n, ms) => {
    for (const o of [c.etcd, c.client, ...c.nodes.filter((x) => x.nodeId !== n)]) c.cut(c.node(n), o);
    await sleep(ms);
    c.healCuts();
  },
  'etcd-cut-from-all': async (c, _n, ms) => {
    for (const x of c.nodes) c.cut(x, c.etcd);
    await sleep(ms);
    c.healCuts();
  },
  'one-way-to-etcd': async (c, n, ms) => {
    c.cutOneWay(c.node(n), c.etcd);
    await sleep(ms);
    c.healCuts();
  },
  'flapping-link': async (c, n, ms, rand) => {
    const end = Date.now() + ms;
    while (Date.now() < end) {
      c.linkDown(c.node(n));
      await sleep(1000 + rand() * 2000);
      c.linkUp(c.node(n));
      await sleep(1000 + rand() * 2000);
    }
  },
  'paused-past-session': async (c, n, ms) => {
    c.node(n).pause();
    await sleep(Math.max(ms, 4000));
    c.node(n).resume();
  },
  'mirror-failover-failback': async (c, n, ms) => {
    const m = mirror!;
    const cut = c.node(n);
    const other = c.nodes.find((x) => x !== cut)!;
    const stop = m.cli(other.bootstrap, ['--stop', '--mirror', m.mirror, '--topics', m.topic, '--timeout', '120']);
    for (const o of [c.etcd, m.source, ...c.nodes.filter((x) => x !== cut)]) c.cut(cut, o);
    await sleep(ms);
    c.healCuts();
    const stopped = await stop.done;
    if (stopped.code !== 0) mirrorViolations.push(`--stop exited ${stopped.code}: ${stopped.out.trim()}`);
    if (!(await check('after the stop', () => m.untilAll(other.bootstrap, 'STOPPED', 120_000)))) return;
    if (!(await converged(c, m.topic, m.partitions))) mirrorViolations.push(`${m.topic}: replicas differ after the stop`);
    mirrorViolations.push(...notSourcePrefix(c, m.source, m.topic, m.partitions, true));
    mirrorViolations.push(...(await m.writeEach(60_000)).map((e) => `a write after the stop failed: ${e}`));
    // Failback: mirroring again cuts the writes made here since the stop.
    if (!(await check('--start after the stop', () => m.start(other.bootstrap)))) return;
    await check('mirroring again', () => m.untilAll(other.bootstrap, 'MIRRORING', 120_000));
  },
};

async function main(): Promise<void> {
  const minutes = Number(arg('minutes') ?? '5');
  const seed = Number(arg('seed') ?? String(Math.floor(Math.random() * 2 ** 31)));
  const rand = rng(seed);
  const dir = mkdtempSync(join(tmpdir(), 'fjord-chaos-'));
  const injected = new Map<string, number>();
  let cluster: NetnsCluster | null = null;
  let failed = false;
  const onSignal = (): void => {
    void cluster?.destroy().finally(() => process.exit(130));
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    console.log(`chaos: ${minutes} min, seed ${seed}`);
    cluster = await startNetnsCluster({
      tag: Number(arg('tag') ?? '90'),
      nodes: 3,
      sources: 1,
      overrides: { 'default.replication.factor': 3, 'mirror.metadata.refresh.interval.ms': 1000, 'mirror.failed.retry.initial.backoff.ms': 200, 'mirror.failed.retry.max.backoff.ms': 1000 },
    });
    const c = cluster;
    const m = new MirrorRun(c, c.sources[0]!, 'dr', MIRRORED, MIRRORED_PARTITIONS);
    mirror = m;
    await m.startSource(200);
    const w = startWorkload(c, dir, { topic: TOPIC, partitions: PARTITIONS, acksOneTo: 1 + Math.floor(rand() * 3) });
    await m.create(dir, c.node(1).bootstrap);
    await m.untilAll(c.node(1).bootstrap, 'MIRRORING', 120_000);
    const end = Date.now() + minutes * 60_000;
    const names = arg('faults')?.split(',') ?? Object.keys(FAULTS);
    for (const n of names) if (FAULTS[n] === undefined) throw new Error(`unknown fault ${n}; known: ${Object.keys(FAULTS).join(', ')}`);
    while (Date.now() < end) {
      const name = names[Math.floor(rand() * names.length)]!;
      const node = 1 + Math.floor(rand() * 3);
      const ms = 2000 + Math.floor(rand() * 10_000);
      console.log(`chaos: ${new Date().toISOString()} ${name} node ${node} for ${ms} ms`);
      await FAULTS[name]!(c, node, ms, rand);
      injected.set(name, (injected.get(name) ?? 0) + 1);
      // Quiet time: the cluster heals before the next fault.
      await sleep(3000 + Math.floor(rand() * 7000));
    }
    const summary = await finish(c, w, TOPIC, PARTITIONS);
    // The mirror catches up with the source once it stops taking writes: every replica its bytes.
    const sourceAcked = m.sourceAcked();
    await m.stopSource();
    if (await check('caught up at the end', () => m.untilAll(c.node(1).bootstrap, 'MIRRORING', 180_000, (p) => p.lag === 0))) {
      if (!(await converged(c, MIRRORED, MIRRORED_PARTITIONS))) mirrorViolations.push(`${MIRRORED}: replicas differ at the end`);
      for (let p = 0; p < MIRRORED_PARTITIONS; p++) {
        if (!partitionBytes(c.nodes[0]!.dataDir, MIRRORED, p).equals(partitionBytes(m.source.dataDir, MIRRORED, p))) mirrorViolations.push(`${MIRRORED}-${p}: differs from the source at the end`);
      }
    }
    console.log(
      JSON.stringify(
        {
          seed,
          minutes,
          ackedAll: summary.ackedAll,
          ackedOne: summary.ackedOne,
          ackedIdempotent: summary.ackedIdempotent,
          refused: summary.refused,
          metadataAnswers: summary.metadataAnswers,
          consumed: summary.consumed,
          commits: summary.commits,
          transactions: summary.transactions,
          faults: Object.fromEntries(injected),
          mirror: { sourceAcked, violations: mirrorViolations.map((detail) => ({ detail, seed })) },
          violations: summary.violations.map((v) => ({ ...v, seed })),
        },
        null,
        2,
      ),
    );
    failed = summary.violations.length > 0 || mirrorViolations.length > 0;
    if (failed) {
      // Kept for diagnosis: the history, each node's log and its partition directories.
      for (const n of c.nodes) {
        writeFileSync(join(dir, `node-${n.nodeId}.log`), n.logs());
        cpSync(n.dataDir, join(dir, `data-${n.nodeId}`), { recursive: true });
      }
      console.log(`chaos: history, node logs and data kept in ${dir}`);
    }
  } finally {
    await cluster?.destroy();
    if (!failed) rmSync(dir, { recursive: true, force: true });
  }
  process.exit(failed ? 1 : 0);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
