/**
 * Mirror catch-up throughput: a preloaded source (Apache Kafka, then a Fjord node) mirrored by the
 * MirrorFetcher into Fjord partition logs, beside a raw pipe of the same bytes in the same run
 * (read the source's segment files → TCP loopback → append to a file). Prints MB/s, records/s, the
 * ratio mirror/raw, and the count of records decoded on the mirror path (0 by construction).
 *
 *   node bench/run.mjs bench/mirror-catchup.ts   (MIRROR_BENCH_MB=128, MIRROR_BENCH_REPEATS=3 by default)
 */
import { createWriteStream, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createServer, connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Kafka, logLevel } from 'kafkajs';
import { MirrorFetcher } from '../src/fetcher/mirror-fetcher.js';
import { KafkaClient } from '../src/client/kafka-client.js';
import { KafkaSourceEndpoint } from '../src/fetcher/kafka-source-endpoint.js';
import { logConfig } from '../src/storage/log-config.js';
import { PartitionLog } from '../src/storage/partition-log.js';
import { startKafkaSource as startKafkaBroker } from '../test/mirror/helpers/kafka-source.js';
import { startNode } from '../test/helpers/node.js';

const TOTAL_MB = Number(process.env.MIRROR_BENCH_MB ?? 128);
const PARTITIONS = 4;
const RECORD_BYTES = 512;
const PER_SEND = 250;
const TOPIC = 'bench-mirror';

interface Source {
  name: string;
  bootstrap: string;
  /** Segment files of the topic, for the raw pipe. */
  segments(): string[];
  stop(): Promise<unknown>;
}

async function preload(bootstrap: string): Promise<number> {
  const kafka = new Kafka({ clientId: 'bench', brokers: [bootstrap], logLevel: logLevel.NOTHING });
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({ topics: [{ topic: TOPIC, numPartitions: PARTITIONS, replicationFactor: 1 }], waitForLeaders: true });
  await admin.disconnect();
  const producer = kafka.producer({ allowAutoTopicCreation: false });
  await producer.connect();
  const value = Buffer.alloc(RECORD_BYTES, 0x61);
  const sends = Math.ceil((TOTAL_MB * 1024 * 1024) / (RECORD_BYTES * PER_SEND));
  let records = 0;
  for (let i = 0; i < sends; i++) {
    const partition = i % PARTITIONS;
    await producer.send({ topic: TOPIC, acks: -1, messages: Array.from({ length: PER_SEND }, () => ({ partition, value })) });
    records += PER_SEND;
  }
  await producer.disconnect();
  return records;
}

async function mirrorOnce(source: Source, records: number): Promise<{ seconds: number; bytes: number; decoded: number; batches: number }> {
  const dir = mkdtempSync(join(tmpdir(), 'fjord-bench-mirror-'));
  const client = new KafkaClient({ bootstrapServers: [source.bootstrap] });
  const md = await client.metadata([TOPIC]);
  const topicId = md.topics[0]?.topicId ?? '';
  const logs = new Map<number, PartitionLog>();
  for (let p = 0; p < PARTITIONS; p++) logs.set(p, await PartitionLog.open({ dir: join(dir, `${TOPIC}-${p}`), topicId, config: logConfig() }));
  const fetcher = new MirrorFetcher(
    new KafkaSourceEndpoint(client),
    {
      log: (tp) => logs.get(tp.partition),
      destinationLeaderEpoch: () => 1_000,
      onEpochFenced: () => undefined,
      requestEpochBump: () => undefined,
      onPartitionFailed: (tp, err) => console.error(`partition ${tp.partition} failed: ${err.message}`),
    },
    { maxWaitMs: 100 },
  );
  const t0 = process.hrtime.bigint();
  fetcher.addPartitions([...logs.keys()].map((partition) => ({ topic: TOPIC, topicId, partition })));
  const total = () => [...logs.values()].reduce((n, l) => n + l.logEndOffset, 0);
  while (total() < records) await new Promise((r) => setTimeout(r, 5));
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
  await fetcher.close();
  client.close();
  for (const l of logs.values()) await l.close();
  rmSync(dir, { recursive: true, force: true });
  return { seconds, bytes: fetcher.stats.bytesAppended, decoded: fetcher.stats.recordsDecoded, batches: fetcher.stats.batchesAppended };
}

/** The same bytes through the simplest path: read segment files → TCP loopback → append to a file. */
async function rawPipe(files: readonly string[]): Promise<{ seconds: number; bytes: number }> {
  const dir = mkdtempSync(join(tmpdir(), 'fjord-bench-pipe-'));
  const out = createWriteStream(join(dir, 'sink.log'));
  let received = 0;
  const server = createServer((sock) => {
    sock.on('data', (chunk: Buffer) => {
      received += chunk.length;
      if (!out.write(chunk)) {
        sock.pause();
        out.once('drain', () => sock.resume());
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  const expected = files.reduce((n, f) => n + statSync(f).size, 0);
  const t0 = process.hrtime.bigint();
  const sock = connect(port, '127.0.0.1');
  await new Promise<void>((r) => sock.once('connect', r));
  for (const f of files) {
    const buf = readFileSync(f);
    if (!sock.write(buf)) await new Promise((r) => sock.once('drain', r));
  }
  sock.end();
  while (received < expected) await new Promise((r) => setTimeout(r, 1));
  await new Promise<void>((r) => out.end(r));
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
  server.close();
  rmSync(dir, { recursive: true, force: true });
  return { seconds, bytes: expected };
}

function segmentsUnder(logsDir: string): string[] {
  const out: string[] = [];
  for (let p = 0; p < PARTITIONS; p++) {
    const d = join(logsDir, `${TOPIC}-${p}`);
    for (const f of readdirSync(d)) if (f.endsWith('.log')) out.push(join(d, f));
  }
  return out;
}

const REPEATS = Number(process.env.MIRROR_BENCH_REPEATS ?? 3);

function median<T>(runs: T[], key: (t: T) => number): T {
  return [...runs].sort((x, y) => key(x) - key(y))[Math.floor(runs.length / 2)] as T;
}

async function benchSource(source: Source): Promise<void> {
  const records = await preload(source.bootstrap);
  // Each measurement repeated; the median run is printed (the machine is shared).
  const mirrors = [];
  const pipes = [];
  for (let i = 0; i < REPEATS; i++) {
    mirrors.push(await mirrorOnce(source, records));
    pipes.push(await rawPipe(source.segments()));
  }
  const mirror = median(mirrors, (m) => m.seconds);
  const pipe = median(pipes, (p) => p.seconds);
  const mb = (b: number) => b / (1024 * 1024);
  console.log(`${source.name} → Fjord: ${records} records, ${mb(mirror.bytes).toFixed(1)} MiB in ${mirror.batches} batches (median of ${REPEATS})`);
  console.log(`  mirror catch-up : ${(mb(mirror.bytes) / mirror.seconds).toFixed(1)} MiB/s, ${Math.round(records / mirror.seconds)} records/s (${mirror.seconds.toFixed(2)} s)`);
  console.log(`  raw pipe        : ${(mb(pipe.bytes) / pipe.seconds).toFixed(1)} MiB/s (${pipe.seconds.toFixed(2)} s for ${mb(pipe.bytes).toFixed(1)} MiB)`);
  console.log(`  ratio mirror/raw throughput: ${(mb(mirror.bytes) / mirror.seconds / (mb(pipe.bytes) / pipe.seconds)).toFixed(2)}`);
  console.log(`  records decoded on the mirror path: ${mirror.decoded}`);
}

const kafka = await startKafkaBroker();
try {
  await benchSource({ name: `Apache Kafka ${kafka.version}`, bootstrap: kafka.bootstrap, segments: () => segmentsUnder(join(kafka.dataDir, 'logs')), stop: () => kafka.stop() });
} finally {
  await kafka.stop();
}

try {
  const node = await startNode();
  try {
    await benchSource({ name: 'Fjord', bootstrap: node.bootstrap, segments: () => segmentsUnder(node.dataDir), stop: () => node.stop() });
  } finally {
    await node.destroy();
  }
} catch (e) {
  console.log(`Fjord → Fjord: not run (${(e as Error).message.split('\n')[0]})`);
}
