/**
 * The scale rows (`--sections scale`): how long a mirror of many small partitions takes to start
 * and to stop, on one Fjord node and on three (one etcd, RF 3), as an operator sees it. The
 * source is one Fjord node holding `topics × partitionsPerTopic` partitions with one small record
 * each. `--start` is timed from the StartMirrorTopics request to every partition MIRRORING with
 * lag 0; `--stop` from the StopMirrorTopics request to every partition STOPPED (writable), both
 * read with DescribeClusterMirrors every 250 ms as `--describe` would.
 *
 * Run alone: `node bench/run.mjs bench/compare/scale.ts --nodes 3 --topics 50 --partitions 20`.
 */
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { Kafka, logLevel } from 'kafkajs';
import { MirrorAdmin } from '../../src/admin/mirror-admin.js';
import { cpuSeconds, rssMiB } from './proc.js';
import { startCluster, type RunningCluster } from '../../test/helpers/cluster.js';
import { startNode, type RunningNode } from '../../test/helpers/node.js';

const MIRROR = 'scale';
/** Partitions per topic in the scale rows (the goals' estate: 10,000 partitions over 500 topics). */
export const SCALE_PARTITIONS_PER_TOPIC = 20;

/**
 * Fjord's failover goals on a 2-core machine, stated for 10,000 partitions: three nodes stop in 5 s and
 * start (all MIRRORING, lag 0) in 20 s; one node stops in 2 s (no start goal is set for it).
 */
export const SCALE_GOALS_MS: Readonly<Record<1 | 3, { readonly start: number; readonly stop: number }>> = {
  1: { start: NaN, stop: 2000 },
  3: { start: 20_000, stop: 5000 },
};

/** Fjord's idle goals for a mirror of 10,000 caught-up partitions, per node: 5 % of a core and 400 MiB. */
export const SCALE_IDLE_GOALS = { cpuPercent: 5, rssMiB: 400 } as const;
/** The idle window: a settle after the start, then the measured span. */
const IDLE_SETTLE_MS = 5000;
const IDLE_SPAN_MS = 10_000;

/** Stock session timeouts, as the cluster rows use (the test helpers' 3 s would fence nodes of a loaded machine). */
const SESSION = { 'broker.session.timeout.ms': 9000, 'broker.heartbeat.interval.ms': 2000 };
const POLL_MS = 250;

export interface ScaleCase {
  /** Destination nodes: 1 (a node alone) or 3 (etcd, RF 3). */
  readonly nodes: 1 | 3;
  readonly topics: number;
  readonly partitionsPerTopic: number;
}

export interface ScaleTimes {
  readonly startMs: number;
  readonly stopMs: number;
  /** The busiest destination node's CPU over an idle span of the caught-up mirror, in % of one core. */
  readonly idleCpuPercent: number;
  /** The largest destination node's resident memory at the end of that span, in MiB. */
  readonly idleRssMiB: number;
  /** How long the StopMirrorTopics request itself took to answer. */
  readonly stopAnswerMs: number;
  /** Each destination node's CPU-seconds (user + system, from /proc) from the stop request to every partition STOPPED. */
  readonly stopCpuS: readonly number[];
  /**
   * The stop's window on the machine's monotonic clock, in µs (the clock of a `.cpuprofile`'s
   * timestamps), so ./profile-top.ts can read a destination's profile over the stop alone.
   */
  readonly stopWindowUs: readonly [number, number];
  /** Each destination node's log (its stderr), for timing analysis. */
  readonly logs: readonly string[];
}

async function countIn(admin: MirrorAdmin, state: string, lagZero: boolean): Promise<number> {
  const [m] = await admin.describeClusterMirrors([MIRROR]);
  return (m?.partitions ?? []).filter((p) => p.state === state && (!lagZero || p.lag === 0)).length;
}

async function until(what: string, timeoutMs: number, done: () => Promise<boolean>): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    if (await done().catch(() => false)) return;
    if (performance.now() > deadline) throw new Error(`scale: ${what} not reached within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
}

/** One round: a fresh source and destination, start then stop; everything is removed afterwards. */
export async function measureScale(c: ScaleCase, overrides: Record<string, string | number> = {}): Promise<ScaleTimes> {
  const total = c.topics * c.partitionsPerTopic;
  const topics = Array.from({ length: c.topics }, (_, i) => `scale-${String(i).padStart(4, '0')}`);
  let source: RunningNode | null = null;
  let one: RunningNode | null = null;
  let three: RunningCluster | null = null;
  const admins: MirrorAdmin[] = [];
  try {
    source = await startNode();
    if (c.nodes === 1) one = await startNode({ overrides });
    else three = await startCluster({ nodes: 3, overrides: { ...SESSION, 'default.replication.factor': 3, 'mirror.state.topic.replication.factor': 3, 'min.insync.replicas': 2, ...overrides } });
    const bootstrap = one !== null ? [one.bootstrap] : three!.bootstrap;
    const kafka = new Kafka({ clientId: 'bench-scale', brokers: [source.bootstrap], logLevel: logLevel.NOTHING });
    const a = kafka.admin();
    await a.connect();
    for (let i = 0; i < topics.length; i += 50) {
      await a.createTopics({ topics: topics.slice(i, i + 50).map((topic) => ({ topic, numPartitions: c.partitionsPerTopic })), waitForLeaders: true, timeout: 120_000 });
    }
    await a.disconnect();
    const p = kafka.producer({ allowAutoTopicCreation: false });
    await p.connect();
    for (let i = 0; i < topics.length; i += 50) {
      await p.sendBatch({ acks: -1, topicMessages: topics.slice(i, i + 50).map((topic) => ({ topic, messages: Array.from({ length: c.partitionsPerTopic }, (_, partition) => ({ partition, value: 'x' })) })) });
    }
    await p.disconnect();
    const admin = new MirrorAdmin({ bootstrapServers: bootstrap, requestTimeoutMs: 300_000 });
    admins.push(admin);
    await admin.createClusterMirror(MIRROR, { 'bootstrap.servers': source.bootstrap });

    const t0 = performance.now();
    await admin.startMirrorTopics(MIRROR, topics);
    await until('every partition MIRRORING with lag 0', 600_000, async () => (await countIn(admin, 'MIRRORING', true)) === total);
    const startMs = performance.now() - t0;

    const pids = one !== null ? [one.process.pid ?? 0] : three!.nodes.map((n) => n.running?.process.pid ?? 0);
    // Idle: every partition caught up, nothing produced; what the mirror costs to keep.
    await new Promise((r) => setTimeout(r, IDLE_SETTLE_MS));
    const idle0 = pids.map(cpuSeconds);
    await new Promise((r) => setTimeout(r, IDLE_SPAN_MS));
    const idleCpuPercent = Math.max(...pids.map((pid, i) => ((cpuSeconds(pid) - (idle0[i] ?? 0)) * 100_000) / IDLE_SPAN_MS));
    const idleRssMiB = Math.max(...pids.map(rssMiB));

    const cpu0 = pids.map(cpuSeconds);
    const t1 = performance.now();
    const w0 = Number(process.hrtime.bigint() / 1000n);
    await admin.stopMirrorTopics(MIRROR, topics);
    const stopAnswerMs = performance.now() - t1;
    await until('every partition STOPPED', 600_000, async () => (await countIn(admin, 'STOPPED', false)) === total);
    const stopMs = performance.now() - t1;
    const stopWindowUs = [w0, Number(process.hrtime.bigint() / 1000n)] as const;
    const stopCpuS = pids.map((pid, i) => cpuSeconds(pid) - (cpu0[i] ?? 0));
    const logs = one !== null ? [one.logs()] : three!.nodes.map((n) => n.logs());
    return { startMs, idleCpuPercent, idleRssMiB, stopMs, stopAnswerMs, stopCpuS, stopWindowUs, logs };
  } finally {
    for (const a of admins) a.close();
    await source?.destroy();
    await one?.destroy();
    await three?.destroy();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseArgs({ options: { nodes: { type: 'string', default: '3' }, topics: { type: 'string', default: '50' }, partitions: { type: 'string', default: '20' }, logs: { type: 'string' } } });
  const r = await measureScale({ nodes: Number(values.nodes) === 1 ? 1 : 3, topics: Number(values.topics), partitionsPerTopic: Number(values.partitions) });
  console.log(JSON.stringify({ startMs: Math.round(r.startMs), idleCpuPercent: Number(r.idleCpuPercent.toFixed(1)), idleRssMiB: Math.round(r.idleRssMiB), stopMs: Math.round(r.stopMs), stopAnswerMs: Math.round(r.stopAnswerMs), stopCpuS: r.stopCpuS.map((s) => Number(s.toFixed(2))), stopWindowUs: r.stopWindowUs }));
  if (values.logs !== undefined) {
    const { writeFileSync } = await import('node:fs');
    r.logs.forEach((l, i) => writeFileSync(`${values.logs}.node${i + 1}.log`, l));
  }
}
