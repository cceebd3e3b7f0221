/**
 * Mirror catch-up over a high-latency link: a Fjord source preloaded with 1 KiB records in 8
 * partitions (`--partitions`), mirrored into a fresh Fjord destination (`fjord cluster-mirrors --create/--start`)
 * through ./compare/delay-proxy.ts, which adds a fixed one-way delay to every chunk in both
 * directions. The source advertises the proxy's address, so every connection the destination's
 * mirror opens to it (bootstrap and the partition leader) crosses the delayed link; the
 * benchmark's own offset polls go straight to the destination.
 *
 * Cases, per one-way delay (0, 5, 25 ms by default), each into a fresh destination, for every
 * `mirror.num.replica.fetchers` in `--fetchers` (default 1,4: four fetch loops, each its own
 * session and connection, partitions spread as Kafka's AbstractFetcherManager.getFetcherId does)
 * and every `mirror.fetch.pipeline.max.bytes` in `--pipeline` (default 0, -1 and 10485760: each
 * answer appended before the next Fetch; the default, where the fetcher turns the overlap on by
 * itself from the round trip it measures; or the next Fetch sent while up to 10 MiB wait for
 * their appends).
 * Each prints MB/s from the first mirrored byte to the last and from the `--start` command to
 * the last byte (the start's own round trips cross the link too), each divided by the same
 * settings' figure at 0 ms in the same round; the connections the destination opened to
 * the source; and the proxy's measured one-way hold time (timers fire late on a loaded
 * machine, so the delay actually added is shown beside the one asked for).
 *
 * `--link netns` replaces the proxy with a real delayed IP link (./netns/link.ts): the source runs
 * in network namespace fjsrc at 10.77.0.1, each destination in fjdst at 10.77.0.2, and the only
 * path between them is a TUN pair joined by ./netns/main.go, which holds every packet for the
 * one-way delay. The kernels' own TCP runs over it, so the sender's window and ACK clock see the
 * round trip, as over a WAN. Each case first measures the link's round trip with ping, and the
 * hold column is per packet, source → destination. Needs root, iproute2, /dev/net/tun and Go.
 *
 *   node bench/run.mjs bench/mirror-latency.ts [--mb 64] [--partitions 8] [--delays 0,5,25] [--fetchers 1,4] [--pipeline=0,-1,10485760] [--rounds 1]
 *     [--mirror-config key=value]...   (a mirror setting for every case, e.g. mirror.fetch.wait.max.ms=50)
 *     [--link proxy|netns] [--mtu 9000] [--rate bits/s]   (netns: the TUN devices' MTU; a rate cap per direction)
 *     [--cpu-prof DIR]   (each destination node writes DIR/fjord-<pid>.cpuprofile when it stops)
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { Kafka, logLevel } from 'kafkajs';
import { type Broker, startFjord } from './compare/brokers.js';
import { DelayProxy, type HoldStats } from './compare/delay-proxy.js';
import { bytesOf, cpuProfileNodeOption, fjordCatchUp, MIRROR_PARTITIONS, segmentFiles, type CatchUp } from './compare/mirror.js';
import { createTopic, endOffsets } from './compare/perf-tools.js';
import { DST_ADDR, DST_NS, DelayLink, SRC_ADDR, SRC_NS, buildDelayLink, setupNamespaces, startFjordIn, teardownNamespaces } from './netns/link.js';

const { values: flags } = parseArgs({
  options: {
    mb: { type: 'string', default: '64' },
    partitions: { type: 'string', default: String(MIRROR_PARTITIONS) },
    delays: { type: 'string', default: '0,5,25' },
    fetchers: { type: 'string', default: '1,4' },
    pipeline: { type: 'string', default: '0,-1,10485760' },
    rounds: { type: 'string', default: '1' },
    'mirror-config': { type: 'string', multiple: true, default: [] },
    link: { type: 'string', default: 'proxy' },
    mtu: { type: 'string', default: '9000' },
    rate: { type: 'string', default: '0' },
    'cpu-prof': { type: 'string', default: '' },
  },
});
const MB = Number(flags.mb);
const PARTITIONS = Number(flags.partitions);
const DELAYS = flags.delays.split(',').map(Number);
const FETCHERS = flags.fetchers.split(',').map(Number);
const PIPELINE = flags.pipeline.split(',').map(Number);
const ROUNDS = Number(flags.rounds);
const LINK = flags.link;
if (LINK !== 'proxy' && LINK !== 'netns') throw new Error(`--link ${LINK}: proxy or netns`);
const MTU = Number(flags.mtu);
const RATE = Number(flags.rate);
/** `--cpu-prof DIR`: each destination node writes a CPU profile into DIR when it stops. */
const CPU_PROF_DIR = flags['cpu-prof'];
/** Mirror settings for every case (`--mirror-config key=value`, repeatable), e.g. mirror.fetch.wait.max.ms. */
const MIRROR_CONFIG: Record<string, string> = Object.fromEntries(flags['mirror-config'].map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]));
const TOPIC = 'mirror-latency-src';
const RECORD_BYTES = 1024;
const DEADLINE_MS = 15 * 60_000;

const log = (msg: string): void => console.error(`[mirror-latency ${new Date().toISOString().slice(11, 19)}] ${msg}`);

/** `records` 1 KiB records, acks=1, spread over the partitions, several requests in flight. */
async function preload(bootstrap: string, records: number): Promise<void> {
  const kafka = new Kafka({ clientId: 'mirror-latency-preload', brokers: [bootstrap], logLevel: logLevel.NOTHING });
  const producer = kafka.producer({ allowAutoTopicCreation: false });
  await producer.connect();
  try {
    const value = Buffer.alloc(RECORD_BYTES, 'x');
    const perRequest = 256;
    const inFlight = 8;
    let sent = 0;
    let p = 0;
    const next = async (): Promise<void> => {
      while (sent < records) {
        const n = Math.min(perRequest, records - sent);
        sent += n;
        const partition = p++ % PARTITIONS;
        await producer.send({ topic: TOPIC, acks: 1, messages: Array.from({ length: n }, () => ({ value, partition })) });
      }
    };
    await Promise.all(Array.from({ length: inFlight }, next));
  } finally {
    await producer.disconnect();
  }
}

interface Case {
  readonly delayMs: number;
  readonly fetchers: number;
  /** mirror.fetch.pipeline.max.bytes of the case. */
  readonly pipeline: number;
  readonly round: number;
  readonly result: CatchUp;
  readonly hold: HoldStats;
  /** netns link: ping's average round trip across the link just before the case, ms. */
  readonly rttMs?: number;
}

/** How a case reaches the source: through the delaying proxy, or over the namespaces' delayed link. */
interface Link {
  readonly description: string;
  runCase(delayMs: number, fetchers: number, pipeline: number, records: number, bytes: number): Promise<{ result: CatchUp; hold: HoldStats; rttMs?: number }>;
}

/**
 * Runs `start` with the profiling preload of `--cpu-prof` added to NODE_OPTIONS: the destination
 * node is spawned inside it and takes the environment then, so the source and the CLI commands
 * run without it.
 */
async function withDestNodeOptions<T>(start: () => Promise<T>): Promise<T> {
  if (CPU_PROF_DIR === '') return start();
  mkdirSync(CPU_PROF_DIR, { recursive: true });
  const saved = process.env.NODE_OPTIONS;
  process.env.NODE_OPTIONS = `${saved ?? ''} ${cpuProfileNodeOption(resolve(CPU_PROF_DIR))}`.trim();
  try {
    return await start();
  } finally {
    if (saved === undefined) delete process.env.NODE_OPTIONS;
    else process.env.NODE_OPTIONS = saved;
  }
}

async function runProxyCase(source: Broker, proxy: DelayProxy, delayMs: number, fetchers: number, pipeline: number, records: number, bytes: number): Promise<{ result: CatchUp; hold: Case['hold'] }> {
  const dest = await withDestNodeOptions(() => startFjord({ durability: 'default', overrides: { 'mirror.num.replica.fetchers': String(fetchers) } }));
  try {
    proxy.setDelayMs(delayMs);
    proxy.takeHoldStats();
    const viaProxy: Broker = { ...source, bootstrap: proxy.address };
    const result = await fjordCatchUp(viaProxy, dest, TOPIC, records, bytes, { ...MIRROR_CONFIG, 'mirror.fetch.pipeline.max.bytes': String(pipeline) }, DEADLINE_MS);
    return { result, hold: proxy.takeHoldStats() };
  } finally {
    await dest.stop();
    // The destination's connections are gone with it; the next case starts on an idle link.
    proxy.setDelayMs(0);
  }
}

/** Average round trip of 5 pings from the destination's namespace to the source, ms. */
function pingRttMs(): number {
  const out = execFileSync('ip', ['netns', 'exec', DST_NS, 'ping', '-q', '-c', '5', '-i', '0.2', SRC_ADDR], { encoding: 'utf8' });
  const m = /= [\d.]+\/([\d.]+)\//.exec(out);
  if (m?.[1] === undefined) throw new Error(`cannot read ping's round trip from: ${out}`);
  return Number(m[1]);
}

async function runNetnsCase(source: Broker, delayMs: number, fetchers: number, pipeline: number, records: number, bytes: number): Promise<{ result: CatchUp; hold: HoldStats; rttMs: number }> {
  const link = await DelayLink.start(delayMs, RATE > 0 ? { rateBitsPerSec: RATE } : {});
  let stats;
  let result: CatchUp;
  let rttMs: number;
  try {
    rttMs = pingRttMs();
    const dest = await withDestNodeOptions(() => startFjordIn(DST_NS, DST_ADDR, 'default', { 'mirror.num.replica.fetchers': String(fetchers) }));
    try {
      result = await fjordCatchUp(source, dest, TOPIC, records, bytes, { ...MIRROR_CONFIG, 'mirror.fetch.pipeline.max.bytes': String(pipeline) }, DEADLINE_MS);
    } finally {
      await dest.stop();
    }
  } finally {
    stats = await link.stop();
  }
  const toDest = stats.find((s) => s.direction === 'a→b');
  const toSource = stats.find((s) => s.direction === 'b→a');
  if (toDest === undefined || toSource === undefined) throw new Error(`delaylink reported ${JSON.stringify(stats)}`);
  if (toDest.dropped + toSource.dropped > 0) log(`  the link dropped ${toDest.dropped} packet(s) to the destination, ${toSource.dropped} to the source`);
  return { result, rttMs, hold: { connections: toSource.connections, chunks: toDest.packets, p50: toDest.heldP50Ms, p99: toDest.heldP99Ms } };
}

function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? (s[m] ?? 0) : ((s[m - 1] ?? 0) + (s[m] ?? 0)) / 2;
}

/** MB/s from the `--start` command to the last mirrored byte: start-up round trips included. */
function wholeMbPerSec(c: CatchUp, bytes: number): number {
  return bytes / 1e6 / ((c.firstByteMs + c.seconds * 1000) / 1000);
}

function report(cases: readonly Case[], bytes: number, load: readonly number[], link: string): void {
  const fmt = (x: number, d = 1): string => x.toFixed(d);
  const per = (xs: readonly number[], d = 1): string => `${xs.map((x) => fmt(x, d)).join(', ')} (**${fmt(median(xs), d)}**)`;
  /** Each case's figure divided by that of the case `base` picks in the same round. */
  const ratios = (mine: readonly Case[], base: (c: Case) => Case | undefined, f: (c: Case) => number): number[] =>
    mine.map((c) => {
      const b = base(c);
      return b === undefined ? NaN : f(c) / f(b);
    });
  console.log(`mirror-latency: Fjord → Fjord catch-up, ${fmt(bytes / 2 ** 20, 0)} MiB of segment files, ${PARTITIONS} partitions, 1 KiB records, ${ROUNDS} round(s), ${cpus().length} CPUs`);
  console.log(`load average (1 min) before / after: ${load.map((x) => x.toFixed(2)).join(' / ')}; mirror config: ${JSON.stringify(MIRROR_CONFIG)}`);
  console.log(`link: ${link}`);
  console.log('per round, then the median in bold; ratios are against the same settings at 0 ms in the same round\n');
  const rtt = LINK === 'netns' ? ' ping RTT ms |' : '';
  console.log(`| one-way delay |${rtt} held p50 / p99 ms | mirror.num.replica.fetchers | mirror.fetch.pipeline.max.bytes | connections to the source | catch-up MB/s (first → last byte) | ÷ 0 ms | MB/s from --start | ÷ 0 ms | time to first byte ms | CPU-s/GB |`);
  console.log(`|---|${rtt === '' ? '' : '---|'}---|---|---|---|---|---|---|---|---|---|`);
  const catchUp = (c: Case): number => c.result.mbPerSec;
  const whole = (c: Case): number => wholeMbPerSec(c.result, bytes);
  for (const d of DELAYS) {
    for (const f of FETCHERS) {
      for (const pb of PIPELINE) {
      const mine = cases.filter((c) => c.delayMs === d && c.fetchers === f && c.pipeline === pb);
      if (mine.length === 0) continue;
      const zero = (c: Case): Case | undefined => cases.find((b) => b.delayMs === 0 && b.fetchers === f && b.pipeline === pb && b.round === c.round);
      const held = mine.map((c) => `${fmt(c.hold.p50)} / ${fmt(c.hold.p99)}`).join(', ');
      const row = [
        `${d} ms`,
        ...(LINK === 'netns' ? [mine.map((c) => fmt(c.rttMs ?? NaN)).join(', ')] : []),
        held,
        String(f),
        String(pb),
        mine.map((c) => String(c.hold.connections)).join(', '),
        per(mine.map(catchUp)),
        per(ratios(mine, zero, catchUp), 2),
        per(mine.map(whole)),
        per(ratios(mine, zero, whole), 2),
        per(mine.map((c) => c.result.firstByteMs), 0),
        per(mine.map((c) => c.result.cpuSecondsPerGb), 2),
      ];
      console.log(`| ${row.join(' | ')} |`);
      }
    }
  }
  // Every setting against the first one (by default 1 fetcher, no overlap), same delay and round.
  const [f0, p0] = [FETCHERS[0] ?? 1, PIPELINE[0] ?? 0];
  for (const f of FETCHERS) {
    for (const pb of PIPELINE) {
      if (f === f0 && pb === p0) continue;
      const parts = DELAYS.map((d) => {
        const mine = cases.filter((c) => c.delayMs === d && c.fetchers === f && c.pipeline === pb);
        const rs = ratios(mine, (c) => cases.find((b) => b.delayMs === d && b.fetchers === f0 && b.pipeline === p0 && b.round === c.round), whole);
        return `${d} ms ${fmt(median(rs), 2)}`;
      });
      console.log(`\n${f} fetcher(s), pipeline ${pb} ÷ ${f0} fetcher(s), pipeline ${p0}, MB/s from --start, same delay and round (median): ${parts.join(', ')}`);
    }
  }
}

async function proxyLink(): Promise<{ link: Link; source: Broker; preloadVia: string; close(): Promise<void> }> {
  const proxy = await DelayProxy.listen();
  const source = await startFjord({ durability: 'default', overrides: { 'advertised.listeners': `PLAINTEXT://${proxy.address}` } });
  const [host, port] = source.bootstrap.split(':');
  proxy.setTarget(host ?? '127.0.0.1', Number(port));
  return {
    source,
    preloadVia: proxy.address,
    link: {
      description: 'delaying TCP proxy on loopback (fixed one-way delay per chunk, both directions, bandwidth not limited)',
      runCase: (d, f, p, r, b) => runProxyCase(source, proxy, d, f, p, r, b),
    },
    close: async () => {
      await source.stop();
      await proxy.close();
    },
  };
}

async function netnsLink(): Promise<{ link: Link; source: Broker; preloadVia: string; close(): Promise<void> }> {
  buildDelayLink();
  // The namespaces go on any exit, a failed set-up included; a signal ends the run the same way.
  process.once('exit', teardownNamespaces);
  for (const sig of ['SIGINT', 'SIGTERM'] as const) process.once(sig, () => process.exit(130));
  setupNamespaces(MTU);
  const source = await startFjordIn(SRC_NS, SRC_ADDR, 'default');
  const rate = RATE > 0 ? `capped at ${RATE / 1e6} Mbit/s per direction` : 'bandwidth not limited';
  return {
    source,
    preloadVia: source.bootstrap,
    link: {
      description: `TUN pair between network namespaces ${SRC_NS} (${SRC_ADDR}) and ${DST_NS} (${DST_ADDR}), every IP packet held for the one-way delay in both directions, MTU ${MTU}, ${rate}; kernel TCP end to end`,
      runCase: (d, f, p, r, b) => runNetnsCase(source, d, f, p, r, b),
    },
    close: async () => {
      await source.stop();
      teardownNamespaces();
    },
  };
}

async function main(): Promise<void> {
  const load0 = loadavg()[0] ?? 0;
  const { link, source, preloadVia, close } = LINK === 'netns' ? await netnsLink() : await proxyLink();
  const cases: Case[] = [];
  try {
    const records = Math.round((MB * 2 ** 20) / RECORD_BYTES);
    log(`preloading ${MB} MiB (${records} records) into the source`);
    await createTopic(source.bootstrap, TOPIC, PARTITIONS);
    await preload(preloadVia, records);
    const total = (await endOffsets(source.bootstrap, TOPIC)).reduce((s, x) => s + x, 0);
    if (total !== records) throw new Error(`preload wrote ${total} of ${records} records`);
    const bytes = bytesOf(segmentFiles(source, TOPIC, PARTITIONS));
    for (let round = 0; round < ROUNDS; round++) {
      // Alternate the order of the delays between rounds, so drift in the machine's load does not
      // always favour the same case.
      const delays = round % 2 === 0 ? DELAYS : [...DELAYS].reverse();
      for (const delayMs of delays) {
        for (const fetchers of FETCHERS) {
          for (const pipeline of PIPELINE) {
            log(`round ${round + 1}: ${delayMs} ms one-way, ${fetchers} fetcher(s), pipeline ${pipeline}`);
            const { result, hold, rttMs } = await link.runCase(delayMs, fetchers, pipeline, records, bytes);
            log(`  ${result.mbPerSec.toFixed(1)} MB/s first → last byte, ${wholeMbPerSec(result, bytes).toFixed(1)} MB/s from --start, ${hold.connections} connection(s)${rttMs === undefined ? '' : `, ping ${rttMs.toFixed(1)} ms`}`);
            cases.push({ delayMs, fetchers, pipeline, round, result, hold, ...(rttMs === undefined ? {} : { rttMs }) });
          }
        }
      }
    }
    report(cases, bytes, [load0, loadavg()[0] ?? 0], link.description);
  } finally {
    await close();
  }
}

await main();
