/**
 * A Kafka follower catching up, the peer of the mirror's catch-up: a second Kafka 4.1.2 broker
 * (broker role only, node id 2) joins the one-node Kafka source of the mirror rows, and a
 * partition reassignment (AlterPartitionReassignments, what kafka-reassign-partitions.sh sends;
 * no throttle) adds it as a replica of every partition of the preloaded topic. The new replica
 * copies the same bytes from the same leader that the mirror copied, with Kafka's stock fetcher
 * settings (one replica fetcher thread, replica.fetch.max.bytes 1 MiB).
 *
 * Timed like the mirrors (mirror.ts): the first byte is the first look (every POLL_MS) that finds
 * the new replica's segment files non-empty, the end the first Metadata answer that has it in the
 * ISR of every partition; the rate counts the bytes after that first look. CPU is the follower
 * broker's own, from the first byte to the end.
 */
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { Kafka, logLevel } from 'kafkajs';
import { KafkaClient } from '../../src/client/kafka-client.js';
import { KAFKA_VERSION, LOG4J2_CONFIG, kafkaClasspath } from '../../test/interop/lib/paths.js';
import { ManagedProcess } from '../../test/interop/lib/process.js';
import { freePort, waitServing } from '../../test/interop/lib/net.js';
import { run, tail } from '../../test/interop/lib/run.js';
import { type Broker, KAFKA_JVM_PERFORMANCE_OPTS, kafkaSingleNodeProps } from './brokers.js';
import { windowRate, type CatchUp } from './mirror.js';
import { cpuSeconds, rssPeakSampler } from './proc.js';

const FOLLOWER_ID = 2;
const POLL_MS = 25;
/** Between ISR looks while the segment files are still short of the leader's bytes. */
const ISR_EVERY_POLLS = 10;

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

function readProperties(file: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    const i = line.indexOf('=');
    if (i > 0 && !line.startsWith('#')) out[line.slice(0, i).trim()] = line.slice(i + 1).trim();
  }
  return out;
}

/** Bytes of the `.log` segment files of `topic`'s partitions under `logDir` (0 for a partition not created yet). */
function replicaBytes(logDir: string, topic: string, partitions: number): number {
  let sum = 0;
  for (let p = 0; p < partitions; p++) {
    const dir = join(logDir, `${topic}-${p}`);
    if (!existsSync(dir)) continue;
    for (const f of readdirSync(dir)) {
      if (!f.endsWith('.log')) continue;
      try {
        sum += statSync(join(dir, f)).size;
      } catch {
        /* rolled or deleted between the listing and the stat */
      }
    }
  }
  return sum;
}

/**
 * Starts the follower broker in `source`'s cluster: brokers.ts writes the source's
 * server.properties beside its log directory, and its meta.properties holds the cluster id.
 */
async function startFollower(source: Broker, dir: string): Promise<{ proc: ManagedProcess; logDir: string; bootstrap: string }> {
  const src = readProperties(join(dirname(source.logDir), 'server.properties'));
  const clusterId = readProperties(join(source.logDir, 'meta.properties'))['cluster.id'];
  const voters = src['controller.quorum.voters'];
  if (clusterId === undefined || voters === undefined) throw new Error(`follower: no cluster id or controller.quorum.voters for the source in ${dirname(source.logDir)}`);
  const port = await freePort();
  const logDir = join(dir, 'logs');
  const props: Record<string, string> = {
    'process.roles': 'broker',
    'node.id': String(FOLLOWER_ID),
    'controller.quorum.voters': voters,
    listeners: `PLAINTEXT://127.0.0.1:${port}`,
    'advertised.listeners': `PLAINTEXT://127.0.0.1:${port}`,
    ...kafkaSingleNodeProps(dir),
  };
  const propsFile = join(dir, 'server.properties');
  writeFileSync(propsFile, Object.entries(props).map(([k, v]) => `${k}=${v}`).join('\n') + '\n');
  // kafka-server-start.sh's heap and flags, as for every Kafka broker of the suite.
  const jvm = ['-Xmx1G', '-Xms1G', ...KAFKA_JVM_PERFORMANCE_OPTS, `-Dlog4j2.configurationFile=${LOG4J2_CONFIG}`, '-Dfjord.loglevel=WARN', '-cp', kafkaClasspath(KAFKA_VERSION)];
  const format = await run('java', [...jvm, 'kafka.tools.StorageTool', 'format', '-t', clusterId, '-c', propsFile], { timeoutMs: 120_000 });
  if (format.code !== 0) throw new Error(`follower: kafka-storage format failed (exit ${format.code}):\n${tail(format.stderr)}`);
  const proc = new ManagedProcess('kafka-follower', 'java', [...jvm, 'kafka.Kafka', propsFile], join(dir, 'server.log'));
  try {
    await waitServing('127.0.0.1', port, 180_000, () => proc.deadReason());
  } catch (e) {
    await proc.stop();
    throw new Error(`follower did not start: ${(e as Error).message}\n${proc.logTail()}`);
  }
  return { proc, logDir, bootstrap: `127.0.0.1:${port}` };
}

/** Metadata lists a broker once the controller has unfenced it: until then no replica can be placed on it. */
async function untilRegistered(client: KafkaClient, deadlineMs: number): Promise<void> {
  const deadline = Date.now() + deadlineMs;
  for (;;) {
    const md = await client.metadata([]).catch(() => null);
    if (md?.brokers.some((b) => b.nodeId === FOLLOWER_ID) === true) return;
    if (Date.now() > deadline) throw new Error(`follower: broker ${FOLLOWER_ID} not registered after ${deadlineMs} ms`);
    await sleep(200);
  }
}

async function inEveryIsr(client: KafkaClient, topic: string, partitions: number): Promise<boolean> {
  const md = await client.metadata([topic]).catch(() => null);
  const ps = md?.topics[0]?.partitions ?? [];
  return ps.length === partitions && ps.every((p) => p.isrNodes.includes(FOLLOWER_ID));
}

/**
 * A new Kafka replica of `topic` (`partitions` partitions, `bytes` in segment files on the
 * leader, every record of one size) catching up from `source`; the follower is stopped afterwards.
 */
export async function kafkaFollowerCatchUp(source: Broker, topic: string, partitions: number, bytes: number, deadlineMs: number): Promise<CatchUp> {
  const dir = mkdtempSync(join(tmpdir(), 'fjord-bench-follower-'));
  let follower: Awaited<ReturnType<typeof startFollower>> | null = null;
  let rss: { stop(): number } | null = null;
  const client = new KafkaClient({ bootstrapServers: [source.bootstrap], clientId: 'bench-follower', requestTimeoutMs: 30_000, connectTimeoutMs: 5000 });
  const admin = new Kafka({ clientId: 'bench-follower', brokers: [source.bootstrap], logLevel: logLevel.NOTHING }).admin();
  try {
    follower = await startFollower(source, dir);
    await untilRegistered(client, 120_000);
    const pid = follower.proc.pid;
    if (pid === undefined) throw new Error('follower has no pid');
    await admin.connect();
    rss = rssPeakSampler(pid);
    const startedAt = Date.now();
    await admin.alterPartitionReassignments({
      topics: [{ topic, partitionAssignment: Array.from({ length: partitions }, (_, partition) => ({ partition, replicas: [1, FOLLOWER_ID] })) }],
      timeout: 60_000,
    });
    let first = 0;
    let bytesAtFirst = 0;
    let cpu0 = 0;
    let prev = Date.now();
    let end = 0;
    for (let poll = 0; end === 0; poll++) {
      if (Date.now() - startedAt > deadlineMs) throw new Error(`follower: ${topic} not in sync after ${deadlineMs} ms\n${follower.proc.logTail(20)}`);
      const dead = follower.proc.deadReason();
      if (dead !== null) throw new Error(`follower died: ${dead}`);
      const copied = replicaBytes(follower.logDir, topic, partitions);
      const lookIsr = copied >= bytes || poll % ISR_EVERY_POLLS === 0;
      const inSync = lookIsr && (await inEveryIsr(client, topic, partitions));
      // An event between two looks is placed at their midpoint, as mirror.ts places its ends.
      const at = (prev + Date.now()) / 2;
      prev = Date.now();
      if (copied > 0 && first === 0) {
        first = at;
        bytesAtFirst = Math.min(copied, bytes);
        cpu0 = cpuSeconds(pid);
      }
      if (inSync) {
        end = at;
        break;
      }
      await sleep(POLL_MS);
    }
    const cpu = cpuSeconds(pid) - cpu0;
    const peakRssMiB = rss.stop();
    rss = null;
    if (first === 0 || bytesAtFirst >= bytes) throw new Error(`follower: the whole copy of ${topic} landed between two looks ${POLL_MS} ms apart: no rate to give`);
    const inWindow = bytes - bytesAtFirst;
    const seconds = (end - first) / 1000;
    return { mbPerSec: windowRate(inWindow, seconds), firstByteMs: first - startedAt, seconds, cpuSecondsPerGb: cpu / (inWindow / 1e9), peakRssMiB };
  } finally {
    rss?.stop();
    await admin.disconnect().catch(() => undefined);
    client.close();
    await follower?.proc.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
