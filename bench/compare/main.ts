/**
 * `npm run bench:compare`: Fjord beside Apache Kafka (and MirrorMaker 2, and a raw pipe), started
 * by this script, alternated for several rounds, measured with Kafka's own perf tools. Prints a
 * Markdown table and writes the figures as JSON.
 *
 *   npm run bench:compare -- --quick            a few minutes: 256 MiB mirror, fewer rows
 *   npm run bench:compare                       the full table BENCHMARKS.md reports
 *   flags: --rounds N  --sections produce,consume,latency,mirror,rss  --durability default,matched
 *          --produce-mb N  --consume-mb N  --mirror-mb N  --mirror-config key=value (repeatable)  --out file.json
 *          --mirror-small-mb N (the 200-partition catch-up)  --mirror-lag-seconds N (the steady-state lag rows)
 *          --warm-memory-gib N|auto (free memory touched before each mirror round, ./warm-memory.ts; 0 = off)
 *          --latency-rates 5000,20000  --latency-seconds N  --bulk-writer on|off|only
 *          --broker-warm-up-mb N (written, not measured, to each broker before its produce/consume/latency rows; 0 = off)
 *   --sections cluster (not in the default list): RF 3 on three Fjord nodes vs three Kafka nodes,
 *          and failover time (cluster.ts); --cluster-mb N per produce row (default 50)
 *   --sections scale (not in the default list): a mirror's --start and --stop times at many small
 *          partitions on one node and on three (scale.ts), beside Fjord's failover goals as the peer
 *          column; --scale-partitions 1000,10000 (default 1000), 20 partitions per topic
 *   --sections scale-loss (not in the default list): node loss at scale (node-loss.ts): the same
 *          partitions at RF 3 (min.insync.replicas 2) on three Fjord nodes and on three Kafka nodes;
 *          SIGKILL of the non-controller node leading the most of them → every partition led by a
 *          live node and acknowledging an acks=all write, Kafka as the peer, goal Fjord ÷ Kafka ≤ 1.0;
 *          follows --scale-partitions
 *   the mirror section's 8-partition Kafka source also gets a Kafka follower (follower.ts): a second
 *          Kafka broker joins the source and a reassignment adds it as a replica of every partition;
 *          its catch-up rate beside the Kafka → Fjord one of the same round and bytes, goal ≥ 1.0;
 *          --mirror-peers raw,mm2,follower (the default) chooses the catch-up rows' peers
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { type Broker, type BrokerKind, type Durability, startBroker } from './brokers.js';
import { clusterRows, startFjordCluster, startKafkaCluster } from './cluster.js';
import { kafkaFollowerCatchUp } from './follower.js';
import { measureNodeLoss } from './node-loss.js';
import { measureScale, SCALE_GOALS_MS, SCALE_IDLE_GOALS, SCALE_PARTITIONS_PER_TOPIC } from './scale.js';
import { bytesOf, fjordCatchUp, MIRROR_PARTITIONS, mirrorMakerCatchUp, rawPipeCatchUp, segmentFiles, type CatchUp } from './mirror.js';
import { LAG_PARTITIONS, LAG_RATE, LAG_RECORD_SIZE, mirrorLag, type LagMirror } from './mirror-lag.js';
import { createTopic, endOffsets, producerPerformance } from './perf-tools.js';
import { percentile, Results, recordSizeLabel, type RowSpec } from './report.js';
import { consumeOnly, idleRss, latency, produceAndConsume, type Sizes, warmUpBroker } from './scenarios.js';
import { warmMemory, warmTarget, type WarmUp } from './warm-memory.js';

const { values: flags } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    rounds: { type: 'string' },
    sections: { type: 'string' },
    durability: { type: 'string' },
    'produce-mb': { type: 'string' },
    'mirror-mb': { type: 'string' },
    'mirror-small-mb': { type: 'string' },
    'mirror-lag-seconds': { type: 'string' },
    'consume-mb': { type: 'string' },
    'mirror-config': { type: 'string', multiple: true },
    'mirror-peers': { type: 'string' },
    'warm-memory-gib': { type: 'string' },
    'cluster-mb': { type: 'string' },
    'scale-partitions': { type: 'string' },
    'broker-warm-up-mb': { type: 'string' },
    'latency-rates': { type: 'string' },
    'latency-seconds': { type: 'string' },
    'bulk-writer': { type: 'string' },
    partitions: { type: 'string' },
    'record-sizes': { type: 'string' },
    acks: { type: 'string' },
    compressions: { type: 'string' },
    out: { type: 'string' },
  },
});

const quick = flags.quick === true;
const rounds = Number(flags.rounds ?? 3);
const sections = new Set((flags.sections ?? 'produce,latency,mirror,rss').split(','));
const durabilities = (flags.durability ?? (quick ? 'default' : 'default,matched')).split(',') as Durability[];
const baseSizes: Sizes = quick
  ? { produceMb: Number(flags['produce-mb'] ?? 50), partitions: [8], recordSizes: [100, 1024], acks: ['1', 'all'], compressions: ['none'], latencyRates: [20_000], latencySeconds: 5, bulkWriter: false, idlePartitions: [1000] }
  : { produceMb: Number(flags['produce-mb'] ?? 200), partitions: [1, 8, 200], recordSizes: [100, 1024], acks: ['1', 'all'], compressions: ['none', 'lz4'], latencyRates: [5_000, 20_000, 50_000], latencySeconds: 15, bulkWriter: true, idlePartitions: [1000, 10_000] };
// --latency-rates 5000,20000 replaces the fixed-rate list; --bulk-writer on|off|only adds (or
// drops, or runs alone) the 20k rec/s row beside the bulk writer; --latency-seconds the length.
const latencyRates = flags['latency-rates'];
const bulkWriter = flags['bulk-writer'];
if (bulkWriter !== undefined && !['on', 'off', 'only'].includes(bulkWriter)) throw new Error('--bulk-writer takes on, off or only');
const sizes: Sizes = {
  ...baseSizes,
  ...(latencyRates === undefined ? {} : { latencyRates: latencyRates.split(',').map(Number) }),
  ...(bulkWriter === undefined ? {} : { bulkWriter: bulkWriter !== 'off' }),
  ...(bulkWriter === 'only' ? { latencyRates: [] } : {}),
  ...(flags['latency-seconds'] === undefined ? {} : { latencySeconds: Number(flags['latency-seconds']) }),
  // --partitions 1,8 --record-sizes 1024 --acks all --compressions lz4: one corner of the produce matrix.
  ...(flags.partitions === undefined ? {} : { partitions: flags.partitions.split(',').map(Number) }),
  ...(flags['record-sizes'] === undefined ? {} : { recordSizes: flags['record-sizes'].split(',').map(Number) }),
  ...(flags.acks === undefined ? {} : { acks: flags.acks.split(',') as Sizes['acks'] }),
  ...(flags.compressions === undefined ? {} : { compressions: flags.compressions.split(',') as Sizes['compressions'] }),
};
const consumeMb = Number(flags['consume-mb'] ?? (quick ? 200 : 1000));
const mirrorBytes = Number(flags['mirror-mb'] ?? (quick ? 256 : 1024)) * 1024 * 1024;
/** The small-volume catch-up: this much over SMALL_MIRROR_PARTITIONS partitions. */
const mirrorSmallBytes = Number(flags['mirror-small-mb'] ?? (quick ? 32 : 64)) * 1024 * 1024;
const SMALL_MIRROR_PARTITIONS = 200;
const mirrorLagSeconds = Number(flags['mirror-lag-seconds'] ?? (quick ? 15 : 30));
const mirrorConfig: Record<string, string> = {};
for (const kv of flags['mirror-config'] ?? []) {
  const i = kv.indexOf('=');
  mirrorConfig[kv.slice(0, i)] = kv.slice(i + 1);
}
const mirrorPeers = new Set((flags['mirror-peers'] ?? 'raw,mm2,follower').split(','));
/** GiB of free memory touched before each mirror round (./warm-memory.ts); `auto` = all but a margin, 0 = off. */
const warmMemoryFlag = flags['warm-memory-gib'] ?? 'auto';
const warmUps: WarmUp[] = [];
const clusterMb = Number(flags['cluster-mb'] ?? 50);
const scalePartitions = (flags['scale-partitions'] ?? '1000').split(',').map(Number);
/** MB each broker takes before its measured rows, so that no row runs on a cold JIT (./scenarios.ts warmUpBroker). */
const brokerWarmUpMb = Number(flags['broker-warm-up-mb'] ?? (quick ? 50 : 200));
const outFile = flags.out ?? join(process.cwd(), `bench-compare-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);

const results = new Results();
const log = (msg: string): void => console.error(`[bench:compare ${new Date().toISOString().slice(11, 19)}] ${msg}`);

async function withBroker<T>(kind: BrokerKind, durability: Durability, fn: (b: Broker) => Promise<T>): Promise<T> {
  const b = await startBroker(kind, { durability });
  try {
    return await fn(b);
  } catch (e) {
    const dead = b.deadReason();
    throw dead === null ? e : new Error(`${(e as Error).message}\n${kind} died: ${dead}`);
  } finally {
    await b.stop();
  }
}

/** Kafka first in odd rounds, Fjord first in even ones. */
function order(round: number): BrokerKind[] {
  return round % 2 === 0 ? ['fjord', 'kafka'] : ['kafka', 'fjord'];
}

async function brokerRounds(round: number, payloadDir: string): Promise<void> {
  for (const durability of durabilities) {
    for (const kind of order(round)) {
      if (!sections.has('produce') && !sections.has('latency') && !sections.has('consume')) continue;
      log(`round ${round + 1}: ${kind}, durability ${durability}: produce/consume/latency`);
      await withBroker(kind, durability, async (b) => {
        if (brokerWarmUpMb > 0) await warmUpBroker(b, brokerWarmUpMb);
        if (sections.has('produce')) await produceAndConsume(b, sizes, durability, results, payloadDir);
        if (sections.has('consume')) await consumeOnly(b, sizes, consumeMb, durability, results);
        if (sections.has('latency')) await latency(b, sizes, durability, results);
      });
    }
  }
  if (sections.has('rss')) {
    for (const n of sizes.idlePartitions) {
      for (const kind of order(round)) {
        log(`round ${round + 1}: ${kind}: idle RSS at ${n} partitions`);
        await withBroker(kind, 'default', (b) => idleRss(b, n, 'default', results));
      }
    }
  }
}

const MIRROR_TOPIC = 'mirror-src';

/** 1 KiB records, acks=1, to `partitions` partitions, until `bytes` of record data. */
async function preload(b: Broker, partitions: number, bytes: number): Promise<{ records: number; bytes: number; files: string[] }> {
  await createTopic(b.bootstrap, MIRROR_TOPIC, partitions);
  const records = Math.round(bytes / 1024);
  await producerPerformance(b.bootstrap, { topic: MIRROR_TOPIC, records, recordSize: 1024, acks: '1', compression: 'none', throughput: -1 });
  const total = (await endOffsets(b.bootstrap, MIRROR_TOPIC)).reduce((s, x) => s + x, 0);
  if (total !== records) throw new Error(`preload wrote ${total} of ${records} records`);
  // Let the broker finish writing what it acknowledged before the segment files are read.
  const files = segmentFiles(b, MIRROR_TOPIC, partitions);
  return { records, bytes: bytesOf(files), files };
}

function addMirror(name: string, peer: string, fjord: CatchUp, other: CatchUp): void {
  const spec = (what: string, unit: string, higher: boolean): RowSpec => ({ name: `${name}: ${what}`, unit, peer, higherIsBetter: higher, durability: 'default' });
  results.add(spec('catch-up', 'MB/s', true), 'fjord', fjord.mbPerSec, fjord.cpuSecondsPerGb, 'CPU-s/GB');
  results.add(spec('catch-up', 'MB/s', true), 'peer', other.mbPerSec, other.cpuSecondsPerGb, 'CPU-s/GB');
  results.add(spec('time to first byte', 'ms', false), 'fjord', fjord.firstByteMs);
  results.add(spec('time to first byte', 'ms', false), 'peer', other.firstByteMs);
  if (other.peakRssMiB > 0) {
    results.add(spec('peak RSS during catch-up', 'MiB', false), 'fjord', fjord.peakRssMiB);
    results.add(spec('peak RSS during catch-up', 'MiB', false), 'peer', other.peakRssMiB);
  }
}

const MIRROR_DEADLINE_MS = 30 * 60_000;

/** "1 GiB", "0.25 GiB" for the catch-up rows (the names BENCHMARKS.md has), "64 MiB" below 1/8 GiB. */
function sizeLabel(bytes: number): string {
  if (bytes < 2 ** 27) return `${Math.round(bytes / 2 ** 20)} MiB`;
  return `${(bytes / 2 ** 30).toFixed(bytes >= 2 ** 30 ? 0 : 2)} GiB`;
}

/**
 * Kafka → Fjord catch-up of `bytes` in `partitions` partitions against the raw pipe of the same
 * segment files, and against MM2 Kafka → Kafka, Fjord first in even rounds.
 */
async function kafkaSourceCatchUp(round: number, partitions: number, bytes: number): Promise<void> {
  const size = sizeLabel(bytes);
  await withBroker('kafka', 'default', async (kafkaSrc) => {
    log(`round ${round + 1}: mirror: preloading ${size} in ${partitions} partitions into Kafka`);
    const src = await preload(kafkaSrc, partitions, bytes);
    log(`round ${round + 1}: mirror: raw pipe of Kafka's segment files`);
    const raw = await rawPipeCatchUp(src.files, MIRROR_DEADLINE_MS);
    const runFjord = (): Promise<CatchUp> => withBroker('fjord', 'default', (dest) => fjordCatchUp(kafkaSrc, dest, MIRROR_TOPIC, src.records, src.bytes, mirrorConfig, MIRROR_DEADLINE_MS));
    const runMm2 = (): Promise<CatchUp> => withBroker('kafka', 'default', (dest) => mirrorMakerCatchUp(kafkaSrc, dest, MIRROR_TOPIC, src.records, src.bytes, MIRROR_DEADLINE_MS));
    let kf: CatchUp;
    let mm2: CatchUp | null = null;
    if (!mirrorPeers.has('mm2')) {
      kf = await runFjord();
    } else if (round % 2 === 0) {
      log(`round ${round + 1}: mirror: Kafka → Fjord, then MM2`);
      kf = await runFjord();
      mm2 = await runMm2();
    } else {
      log(`round ${round + 1}: mirror: MM2, then Kafka → Fjord`);
      mm2 = await runMm2();
      kf = await runFjord();
    }
    addMirror(`mirror ${size} ${partitions}p Kafka → Fjord`, 'raw pipe', kf, raw);
    if (mm2 !== null) addMirror(`mirror ${size} ${partitions}p Kafka → Fjord vs MM2 Kafka → Kafka`, 'mm2', kf, mm2);
    if (partitions === MIRROR_PARTITIONS && mirrorPeers.has('follower')) {
      // Last, so that the source the mirrors read is a one-node cluster throughout.
      log(`round ${round + 1}: mirror: a Kafka follower added by reassignment`);
      const follower = await kafkaFollowerCatchUp(kafkaSrc, MIRROR_TOPIC, partitions, src.bytes, MIRROR_DEADLINE_MS);
      const spec: RowSpec = { name: `mirror catch-up vs Kafka follower, ${partitions} partitions, ${size} (goal Fjord ÷ follower ≥ 1.0)`, unit: 'MB/s', peer: 'kafka follower', higherIsBetter: true, durability: 'default' };
      results.add(spec, 'fjord', kf.mbPerSec, kf.cpuSecondsPerGb, 'CPU-s/GB');
      results.add(spec, 'peer', follower.mbPerSec, follower.cpuSecondsPerGb, 'CPU-s/GB');
    }
  });
}

async function fjordSourceCatchUp(round: number): Promise<void> {
  const size = sizeLabel(mirrorBytes);
  await withBroker('fjord', 'default', async (fjordSrc) => {
    log(`round ${round + 1}: mirror: preloading ${size} into Fjord`);
    const src = await preload(fjordSrc, MIRROR_PARTITIONS, mirrorBytes);
    const raw = await rawPipeCatchUp(src.files, MIRROR_DEADLINE_MS);
    log(`round ${round + 1}: mirror: Fjord → Fjord`);
    const ff = await withBroker('fjord', 'default', (dest) => fjordCatchUp(fjordSrc, dest, MIRROR_TOPIC, src.records, src.bytes, mirrorConfig, MIRROR_DEADLINE_MS));
    addMirror(`mirror ${size} ${MIRROR_PARTITIONS}p Fjord → Fjord`, 'raw pipe', ff, raw);
  });
}

/**
 * Steady-state lag at LAG_RATE records/s on a Kafka source: a Fjord destination mirroring it and
 * MM2 into a second Kafka, each on a fresh topic of the same source, Fjord first in even rounds.
 */
async function mirrorLagRows(round: number): Promise<void> {
  const mirrors: LagMirror[] = !mirrorPeers.has('mm2') ? ['fjord'] : round % 2 === 0 ? ['fjord', 'mm2'] : ['mm2', 'fjord'];
  const lags = new Map<LagMirror, number[]>();
  await withBroker('kafka', 'default', async (kafkaSrc) => {
    for (const m of mirrors) {
      log(`round ${round + 1}: mirror: lag at ${LAG_RATE} rec/s, Kafka → ${m === 'fjord' ? 'Fjord' : 'MM2 → Kafka'}, ${mirrorLagSeconds} s`);
      lags.set(m, await withBroker(m === 'fjord' ? 'fjord' : 'kafka', 'default', (dest) => mirrorLag(kafkaSrc, dest, m, mirrorConfig, mirrorLagSeconds, 10 * 60_000)));
    }
  });
  const label = `mirror lag at ${LAG_RATE / 1000}k rec/s ${recordSizeLabel(LAG_RECORD_SIZE)} ${LAG_PARTITIONS}p Kafka → Fjord vs MM2 Kafka → Kafka`;
  for (const p of [50, 99]) {
    const spec: RowSpec = { name: `${label}: p${p}`, unit: 'ms', peer: 'mm2', higherIsBetter: false, durability: 'default' };
    for (const [m, xs] of lags) results.add(spec, m === 'fjord' ? 'fjord' : 'peer', percentile(xs, p));
  }
}

/** The mirror section's sub-steps; a failure of one is recorded and the next still runs. */
async function mirrorRound(round: number): Promise<void> {
  const r = `round ${round + 1} mirror`;
  const big = sizeLabel(mirrorBytes);
  await attempt(`${r} memory warm-up`, async () => {
    const w = await warmMemory(warmTarget(warmMemoryFlag));
    warmUps.push(w);
    if (w.gib > 0) log(`round ${round + 1}: mirror: touched ${w.gib} GiB of free memory in ${w.seconds.toFixed(1)} s (${w.gbPerSec.toFixed(2)} GB/s)`);
  });
  await attempt(`${r} ${big} ${MIRROR_PARTITIONS}p Kafka source`, () => kafkaSourceCatchUp(round, MIRROR_PARTITIONS, mirrorBytes));
  await attempt(`${r} ${big} ${MIRROR_PARTITIONS}p Fjord source`, () => fjordSourceCatchUp(round));
  await attempt(`${r} ${sizeLabel(mirrorSmallBytes)} ${SMALL_MIRROR_PARTITIONS}p Kafka source`, () => kafkaSourceCatchUp(round, SMALL_MIRROR_PARTITIONS, mirrorSmallBytes));
  await attempt(`${r} lag`, () => mirrorLagRows(round));
}

/**
 * The scale rows: a fresh source and destination per figure; the peer column is the goal (the
 * issue states it for 10,000 partitions, so a smaller run must meet it too), NaN where none is set.
 */
async function scaleRound(): Promise<void> {
  for (const partitions of scalePartitions) {
    for (const nodes of [1, 3] as const) {
      const where = nodes === 1 ? 'one node' : 'three nodes (etcd, RF 3)';
      const r = await measureScale({ nodes, topics: Math.max(1, Math.round(partitions / SCALE_PARTITIONS_PER_TOPIC)), partitionsPerTopic: SCALE_PARTITIONS_PER_TOPIC });
      const goals = SCALE_GOALS_MS[nodes];
      const spec = (what: string): RowSpec => ({ name: `scale ${where}, ${partitions} partitions: ${what}`, unit: 'ms', peer: 'goal', higherIsBetter: false, durability: 'default' });
      results.add(spec('--start to all MIRRORING, lag 0'), 'fjord', r.startMs);
      results.add(spec('--start to all MIRRORING, lag 0'), 'peer', goals.start);
      results.add(spec('--stop to all STOPPED (writable)'), 'fjord', r.stopMs);
      results.add(spec('--stop to all STOPPED (writable)'), 'peer', goals.stop);
      results.add(spec('StopMirrorTopics answered'), 'fjord', r.stopAnswerMs);
      results.add(spec('StopMirrorTopics answered'), 'peer', NaN);
      const idle = (what: string, unit: string): RowSpec => ({ ...spec(what), unit });
      results.add(idle('idle mirror, busiest node CPU', '% core'), 'fjord', r.idleCpuPercent);
      results.add(idle('idle mirror, busiest node CPU', '% core'), 'peer', SCALE_IDLE_GOALS.cpuPercent);
      results.add(idle('idle mirror, largest node RSS', 'MiB'), 'fjord', r.idleRssMiB);
      results.add(idle('idle mirror, largest node RSS', 'MiB'), 'peer', SCALE_IDLE_GOALS.rssMiB);
    }
  }
}

/**
 * The node-loss rows: per partition count, each side's three nodes started fresh, Kafka first in
 * odd rounds; a round's figures are recorded only when both sides measured, so rounds stay paired.
 */
async function scaleLossRound(round: number): Promise<void> {
  for (const partitions of scalePartitions) {
    const ms = new Map<BrokerKind, number>();
    for (const kind of order(round)) {
      log(`round ${round + 1}: ${kind} ×3: node loss at ${partitions} partitions`);
      const c = await (kind === 'fjord' ? startFjordCluster('default') : startKafkaCluster('default'));
      try {
        const r = await measureNodeLoss(c, partitions, SCALE_PARTITIONS_PER_TOPIC);
        log(`round ${round + 1}: ${kind} ×3: node ${r.killed} (leading ${r.led} of ${partitions}; controller ${r.controller}) killed; all led and writable after ${Math.round(r.ms)} ms, ${r.passes} passes`);
        ms.set(kind, r.ms);
      } finally {
        await c.stop();
      }
    }
    const spec: RowSpec = { name: `scale three nodes, ${partitions} partitions: node loss to every partition led and writable (goal Fjord ÷ Kafka ≤ 1.0)`, unit: 'ms', peer: 'kafka ×3', higherIsBetter: false, durability: 'default' };
    results.add(spec, 'fjord', ms.get('fjord')!);
    results.add(spec, 'peer', ms.get('kafka')!);
  }
}

/** The cluster rows: each side's three nodes started fresh, Kafka first in odd rounds. */
async function clusterRound(round: number): Promise<void> {
  for (const durability of durabilities) {
    for (const kind of order(round)) {
      log(`round ${round + 1}: ${kind} ×3, durability ${durability}: RF 3 produce/consume, failover`);
      const c = await (kind === 'fjord' ? startFjordCluster(durability) : startKafkaCluster(durability));
      try {
        await clusterRows(c, clusterMb, durability, results);
      } finally {
        await c.stop();
      }
    }
  }
}

const failures: string[] = [];

/** One round of one section; a failure is reported and the run goes on with the next. */
async function attempt(what: string, fn: () => Promise<void>): Promise<void> {
  try {
    await fn();
  } catch (e) {
    const msg = `${what} failed: ${(e as Error).message}`;
    failures.push(msg);
    log(msg);
  }
}

function writeJson(started: number): { minutes: number; machine: Record<string, unknown> } {
  const machine = { cpus: cpus().length, cpuModel: cpus()[0]?.model ?? '', memGiB: Math.round(totalmem() / 2 ** 30), node: process.version };
  const meta = { date: new Date().toISOString(), minutes: (Date.now() - started) / 60_000, quick, rounds, durabilities, sizes, brokerWarmUpMb, mirrorBytes, mirrorSmallBytes, mirrorLagSeconds, mirrorConfig, warmUps, machine, failures };
  writeFileSync(outFile, JSON.stringify({ meta, rows: results.toJson() }, null, 2) + '\n');
  return meta;
}

async function main(): Promise<void> {
  const payloadDir = mkdtempSync(join(tmpdir(), 'fjord-bench-payload-'));
  const started = Date.now();
  try {
    for (let round = 0; round < rounds; round++) {
      await attempt(`round ${round + 1} brokers`, () => brokerRounds(round, payloadDir));
      if (sections.has('mirror')) await mirrorRound(round);
      if (sections.has('cluster')) await attempt(`round ${round + 1} cluster`, () => clusterRound(round));
      if (sections.has('scale')) await attempt(`round ${round + 1} scale`, () => scaleRound());
      if (sections.has('scale-loss')) await attempt(`round ${round + 1} scale-loss`, () => scaleLossRound(round));
      // Written after every round, so an interrupted run keeps what it measured.
      writeJson(started);
    }
  } finally {
    rmSync(payloadDir, { recursive: true, force: true });
  }
  const meta = writeJson(started);
  const machine = meta.machine as { cpus: number; cpuModel: string };
  if (failures.length > 0) console.log(`failures:\n${failures.map((f) => `- ${f}`).join('\n')}\n`);
  console.log(`Fjord vs Apache Kafka 4.1.2 — ${rounds} rounds, ${machine.cpus} CPUs (${machine.cpuModel}), ${meta.minutes.toFixed(1)} min\n`);
  console.log('durability: default = each broker\'s defaults (Fjord fsyncs acks=all writes, Kafka does not); matched = log.flush.interval.messages=1 on both\n');
  console.log(results.table());
  console.log(`\nJSON: ${outFile}`);
}

await main();
