/**
 * Mirror catch-up: a source preloaded with `bytes` of 1 KiB records in some partitions (8 for the
 * 1 GiB rows, 200 for the small-volume ones), copied by
 *   - a Fjord node mirroring it (KIP-1279, `fjord cluster-mirrors --create/--start`),
 *   - MirrorMaker 2 in dedicated mode (org.apache.kafka.connect.mirror.MirrorMaker, what
 *     connect-mirror-maker.sh runs, stock settings) from Kafka to a second Kafka,
 *   - a raw pipe: the source's segment files through `cat | socat` over TCP loopback into
 *     `socat` writing one file, the ceiling of moving those bytes between two processes.
 * Each reports MB/s from the first byte at the destination to the last, time to first byte from
 * the start command, and the destination's CPU-seconds per GB (for MM2, MM2's and its destination
 * broker's together).
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Kafka, logLevel, type Admin } from 'kafkajs';
import { LOG4J2_CONFIG, OUT, ROOT } from '../../test/interop/lib/paths.js';
import { ManagedProcess } from '../../test/interop/lib/process.js';
import { run, tail } from '../../test/interop/lib/run.js';
import { type Broker, KAFKA_JVM_PERFORMANCE_OPTS } from './brokers.js';
import { cpuSeconds, rssPeakSampler } from './proc.js';

export const MIRROR_PARTITIONS = 8;

/**
 * A NODE_OPTIONS entry that CPU-profiles a Node process (a destination node) into
 * `<dir>/fjord-<pid>.cpuprofile` when it exits, the file `node --cpu-prof` writes (Chrome
 * DevTools' format). Node refuses `--cpu-prof` itself in NODE_OPTIONS, so this preloads a module,
 * given inline as a data: URL, that runs the same V8 profiler through node:inspector; the
 * in-process session answers synchronously, so the profile is written inside the 'exit' event.
 */
export function cpuProfileNodeOption(dir: string): string {
  const file = JSON.stringify(join(dir, 'fjord-'));
  const code =
    "import{Session}from'node:inspector';import{writeFileSync}from'node:fs';" +
    "const s=new Session();s.connect();s.post('Profiler.enable');s.post('Profiler.start');" +
    `process.on('exit',()=>s.post('Profiler.stop',(e,r)=>{if(!e)writeFileSync(${file}+process.pid+'.cpuprofile',JSON.stringify(r.profile));}));`;
  // Percent-encoded whole, quotes included: NODE_OPTIONS splits on spaces and reads quotes.
  return `--import=data:text/javascript,${encodeURIComponent(code).replace(/'/g, '%27')}`;
}
/**
 * Between ListOffsets polls of the destination. Each poll costs the destination broker a Metadata
 * and a ListOffsets request, counted in its CPU-seconds, so the interval trades end-time precision
 * (±POLL_MS / 2 on a copy of seconds) against that cost.
 */
const POLL_MS = 25;

export interface CatchUp {
  readonly mbPerSec: number;
  readonly firstByteMs: number;
  readonly seconds: number;
  readonly cpuSecondsPerGb: number;
  readonly peakRssMiB: number;
}

/**
 * MB/s of the bytes that arrived within a catch-up's window, from the first look that saw any to
 * the last byte (the callers leave out what that first look already saw).
 */
export function windowRate(bytes: number, seconds: number): number {
  return bytes / 1e6 / Math.max(seconds, 0.001);
}

/** Polls a broker's end offsets with one admin connection. */
export class OffsetPoller {
  private constructor(private readonly admin: Admin) {}
  static async open(bootstrap: string): Promise<OffsetPoller> {
    // No retries: a poll before the topic exists fails at once and counts 0, instead of kafkajs
    // retrying UNKNOWN_TOPIC_OR_PARTITION with back-off for a second or more, which would place
    // the first byte late.
    const admin = new Kafka({ clientId: 'bench-compare-poll', brokers: [bootstrap], logLevel: logLevel.NOTHING, retry: { retries: 0 } }).admin();
    await admin.connect();
    return new OffsetPoller(admin);
  }
  /** Sum of end offsets, or 0 while the topic does not exist yet. */
  async total(topic: string): Promise<number> {
    try {
      const offs = await this.admin.fetchTopicOffsets(topic);
      return offs.reduce((s, o) => s + Number(o.high), 0);
    } catch {
      return 0;
    }
  }
  /** The topic's partition count, or 0 while it does not exist yet. */
  async partitions(topic: string): Promise<number> {
    try {
      return (await this.admin.fetchTopicOffsets(topic)).length;
    } catch {
      return 0;
    }
  }
  close(): Promise<void> {
    return this.admin.disconnect();
  }
}

/**
 * Waits until `topic` on `dest` holds `target` records, measuring from `startedAt`; `cpuPids`
 * are the processes whose CPU the copy costs, counted from the first byte to the last (so a
 * JVM's start-up is not charged to the copy). An event between two polls is placed at their
 * midpoint, so the poll interval bounds the error of both ends. The rate counts only the bytes
 * that arrived after the first poll that saw any: what that poll already saw came in before the
 * window began (a whole Fetch answer, up to `mirror.fetch.response.max.bytes` per fetch loop,
 * lands at once), and crediting it to the window would overstate a short copy.
 */
async function measureCatchUp(dest: string, topic: string, target: number, bytes: number, startedAt: number, cpuPids: readonly number[], rssPid: number, deadlineMs: number): Promise<CatchUp> {
  const poller = await OffsetPoller.open(dest);
  const cpuNow = (): number => cpuPids.reduce((s, p) => s + cpuSeconds(p), 0);
  const rss = rssPeakSampler(rssPid);
  let first = 0;
  let seenAtFirst = 0;
  let cpu0 = 0;
  let prev = Date.now();
  let end: number;
  try {
    for (;;) {
      const before = Date.now();
      if (before - startedAt > deadlineMs) throw new Error(`catch-up of ${topic} on ${dest} not done after ${deadlineMs} ms`);
      const n = await poller.total(topic);
      const at = (prev + Date.now()) / 2;
      prev = Date.now();
      if (n > 0 && first === 0) {
        first = at;
        seenAtFirst = Math.min(n, target);
        cpu0 = cpuNow();
      }
      if (n >= target) {
        end = at;
        break;
      }
      await new Promise((r) => setTimeout(r, POLL_MS));
    }
  } finally {
    await poller.close();
  }
  const cpu = cpuNow() - cpu0;
  const seconds = (end - first) / 1000;
  if (seenAtFirst >= target) throw new Error(`the whole copy of ${topic} landed between two polls ${POLL_MS} ms apart: no rate to give`);
  // Records are of one size, so the bytes in the window are the records in it times bytes per record.
  const inWindow = (bytes * (target - seenAtFirst)) / target;
  return { mbPerSec: windowRate(inWindow, seconds), firstByteMs: first - startedAt, seconds, cpuSecondsPerGb: cpu / (inWindow / 1e9), peakRssMiB: rss.stop() };
}

/** The segment files of the topic's `partitions` partitions on a broker (what every copy moves). */
export function segmentFiles(broker: Broker, topic: string, partitions: number): string[] {
  const files: string[] = [];
  for (let p = 0; p < partitions; p++) {
    const dir = join(broker.logDir, `${topic}-${p}`);
    for (const f of readdirSync(dir).filter((x) => x.endsWith('.log')).sort()) files.push(join(dir, f));
  }
  return files;
}

export function bytesOf(files: readonly string[]): number {
  return files.reduce((s, f) => s + statSync(f).size, 0);
}

async function fjordCli(dest: string, args: readonly string[]): Promise<void> {
  const r = await run(process.execPath, [join(ROOT, 'bin/fjord.js'), 'cluster-mirrors', '--bootstrap-server', dest, ...args], { timeoutMs: 60_000 });
  if (r.code !== 0) throw new Error(`fjord cluster-mirrors ${args.join(' ')} failed: ${tail(r.stderr + r.stdout, 10)}`);
}

/**
 * Runs `fn` while a Fjord destination mirrors `topic` from `source`; `startedAt` is the moment
 * before `cluster-mirrors --start`, and `fn` runs from then on, beside the command. The mirror
 * runs until the destination is stopped.
 */
export async function withFjordMirror<T>(source: Broker, dest: Broker, topic: string, mirrorConfig: Readonly<Record<string, string>>, fn: (startedAt: number) => Promise<T>): Promise<T> {
  const dir = mkdtempSync(join(tmpdir(), 'fjord-bench-mirror-cfg-'));
  try {
    const cfg = join(dir, 'mirror.properties');
    writeFileSync(cfg, Object.entries({ 'bootstrap.servers': source.bootstrap, ...mirrorConfig }).map(([k, v]) => `${k}=${v}`).join('\n') + '\n');
    await fjordCli(dest.bootstrap, ['--create', '--mirror', 'bench', '--mirror-config', cfg]);
    const startedAt = Date.now();
    // Measured from the command on, not from its answer: the broker answers after its controller
    // write and the partitions' first state writes, and the copy may already be under way then.
    const [, out] = await Promise.all([fjordCli(dest.bootstrap, ['--start', '--mirror', 'bench', '--topics', topic]), fn(startedAt)]);
    return out;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A Fjord destination mirroring `topic` from `source`. */
export function fjordCatchUp(source: Broker, dest: Broker, topic: string, records: number, bytes: number, mirrorConfig: Readonly<Record<string, string>>, deadlineMs: number): Promise<CatchUp> {
  return withFjordMirror(source, dest, topic, mirrorConfig, (startedAt) => measureCatchUp(dest.bootstrap, topic, records, bytes, startedAt, [dest.pid], dest.pid, deadlineMs));
}

function mirrorMakerClasspath(): string {
  const file = join(OUT, 'mirror-maker-4.1.2.classpath');
  if (!existsSync(file)) throw new Error(`${file} is missing: run bash test/interop/setup.sh first`);
  return readFileSync(file, 'utf8').trim();
}

/** The name MirrorMaker 2's default replication policy gives `topic` on the destination. */
export const mirrorMakerTopic = (topic: string): string => `A.${topic}`;

/**
 * Runs `fn` while MirrorMaker 2, dedicated mode, copies `topic` A → B with stock settings (the
 * replication policy prefixes `A.`); `startedAt` is the moment before its JVM is spawned, `pid`
 * its process. MM2 is stopped when `fn` settles.
 */
export async function withMirrorMaker<T>(source: Broker, dest: Broker, topic: string, fn: (pid: number, startedAt: number) => Promise<T>): Promise<T> {
  const dir = mkdtempSync(join(tmpdir(), 'fjord-bench-mm2-'));
  const props = {
    clusters: 'A, B',
    'A.bootstrap.servers': source.bootstrap,
    'B.bootstrap.servers': dest.bootstrap,
    'A->B.enabled': 'true',
    'A->B.topics': topic,
    'B->A.enabled': 'false',
    // A single node cannot hold MM2's default replication factor of 3 for its own topics.
    'replication.factor': '1',
    'checkpoints.topic.replication.factor': '1',
    'heartbeats.topic.replication.factor': '1',
    'offset-syncs.topic.replication.factor': '1',
    'offset.storage.replication.factor': '1',
    'status.storage.replication.factor': '1',
    'config.storage.replication.factor': '1',
  };
  const file = join(dir, 'mm2.properties');
  writeFileSync(file, Object.entries(props).map(([k, v]) => `${k}=${v}`).join('\n') + '\n');
  // connect-mirror-maker.sh: KAFKA_HEAP_OPTS="-Xms256M -Xmx2G".
  const jvm = ['-Xms256M', '-Xmx2G', ...KAFKA_JVM_PERFORMANCE_OPTS, `-Dlog4j2.configurationFile=${LOG4J2_CONFIG}`, '-Dfjord.loglevel=WARN', '-cp', mirrorMakerClasspath()];
  const startedAt = Date.now();
  const mm2 = new ManagedProcess('mirror-maker', 'java', [...jvm, 'org.apache.kafka.connect.mirror.MirrorMaker', file], join(dir, 'mm2.log'));
  try {
    const pid = mm2.pid;
    if (pid === undefined) throw new Error(`MirrorMaker did not start: ${mm2.deadReason() ?? ''}`);
    return await fn(pid, startedAt);
  } catch (e) {
    throw new Error(`${(e as Error).message}\n${mm2.logTail(20)}`);
  } finally {
    await mm2.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** MirrorMaker 2 copying `topic` from a Kafka source to a Kafka destination. */
export function mirrorMakerCatchUp(source: Broker, dest: Broker, topic: string, records: number, bytes: number, deadlineMs: number): Promise<CatchUp> {
  return withMirrorMaker(source, dest, topic, (pid, startedAt) => measureCatchUp(dest.bootstrap, mirrorMakerTopic(topic), records, bytes, startedAt, [pid, dest.pid], pid, deadlineMs));
}

/** The raw pipe: `cat <segments> | socat` → TCP loopback → `socat` → one file. */
export async function rawPipeCatchUp(files: readonly string[], deadlineMs: number): Promise<CatchUp> {
  const bytes = bytesOf(files);
  const dir = mkdtempSync(join(tmpdir(), 'fjord-bench-raw-'));
  const out = join(dir, 'copy');
  const port = 20000 + Math.floor(Math.random() * 20000);
  const block = String(1 << 20);
  try {
    const receiver = spawn('socat', ['-u', '-b', block, `TCP-LISTEN:${port},bind=127.0.0.1,reuseaddr`, `OPEN:${out},creat,trunc,wronly`], { stdio: 'ignore' });
    const received = new Promise<number | null>((r) => receiver.once('exit', (c) => r(c)));
    const pid = receiver.pid;
    if (pid === undefined) throw new Error('socat did not start');
    const cpu0 = cpuSeconds(pid);
    let cpu = 0;
    let first = 0;
    let sizeAtFirst = 0;
    // socat's own retry covers the moment before the listener is up.
    const startedAt = Date.now();
    const quoted = files.map((f) => `'${f}'`).join(' ');
    const sender = run('bash', ['-c', `cat ${quoted} | socat -u -b ${block} STDIN TCP:127.0.0.1:${port},retry=100,interval=0.01`], { timeoutMs: deadlineMs });
    const watch = setInterval(() => {
      try {
        if (first === 0) {
          const size = statSync(out).size;
          if (size > 0) {
            first = Date.now();
            sizeAtFirst = size;
          }
        }
        cpu = cpuSeconds(pid) - cpu0;
      } catch {
        /* not created yet, or exited */
      }
    }, 5);
    const s = await sender;
    await received;
    const end = Date.now();
    clearInterval(watch);
    if (s.code !== 0) throw new Error(`raw pipe sender failed: ${tail(s.stderr)}`);
    const copied = statSync(out).size;
    if (copied !== bytes) throw new Error(`raw pipe copied ${copied} of ${bytes} bytes`);
    if (first === 0) first = startedAt;
    const seconds = (end - first) / 1000;
    // As for the mirrors: only what arrived after the first look that saw bytes counts.
    const inWindow = bytes - sizeAtFirst;
    if (inWindow <= 0) throw new Error('the raw pipe copied everything before its first look: no rate to give');
    return { mbPerSec: windowRate(inWindow, seconds), firstByteMs: first - startedAt, seconds, cpuSecondsPerGb: cpu / (inWindow / 1e9), peakRssMiB: 0 };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
