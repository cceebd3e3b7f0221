/**
 * Kafka's own performance tools (org.apache.kafka.tools.ProducerPerformance and
 * ConsumerPerformance, what kafka-producer-perf-test.sh / kafka-consumer-perf-test.sh run), with
 * the JVM flags those scripts use (-Xmx512M and KAFKA_JVM_PERFORMANCE_OPTS), and kcat as an
 * end-to-end consumer. The same client runs against both brokers, so its cost is the same on both
 * sides of a ratio.
 */
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { Kafka, logLevel } from 'kafkajs';
import { LOG4J2_CONFIG, clientsClasspath } from '../../test/interop/lib/paths.js';
import { run, tail, type RunResult } from '../../test/interop/lib/run.js';
import { KAFKA_JVM_PERFORMANCE_OPTS } from './brokers.js';

const PRODUCER_PERF = 'org.apache.kafka.tools.ProducerPerformance';
const CONSUMER_PERF = 'org.apache.kafka.tools.ConsumerPerformance';

function toolJvm(): string[] {
  return ['-Xmx512M', ...KAFKA_JVM_PERFORMANCE_OPTS, `-Dlog4j2.configurationFile=${LOG4J2_CONFIG}`, '-Dfjord.loglevel=ERROR', '-cp', clientsClasspath()];
}

function mustSucceed(what: string, r: RunResult): RunResult {
  if (r.code !== 0) throw new Error(`${what} failed (exit ${r.code}${r.timedOut ? ', timed out' : ''}):\n${tail(r.stdout, 10)}\n${tail(r.stderr, 10)}`);
  return r;
}

export async function createTopic(bootstrap: string, topic: string, partitions: number): Promise<void> {
  const admin = new Kafka({ clientId: 'bench-compare', brokers: [bootstrap], logLevel: logLevel.NOTHING }).admin();
  await admin.connect();
  try {
    try {
      await admin.createTopics({ topics: [{ topic, numPartitions: partitions, replicationFactor: 1 }], waitForLeaders: true, timeout: 120_000 });
    } catch {
      // kafkajs's wait for leaders gives up on an UNKNOWN_TOPIC_OR_PARTITION while a KRaft broker
      // is still applying the new topic's metadata; wait for every partition's offsets instead.
    }
    const deadline = Date.now() + 120_000;
    for (;;) {
      const offs = await admin.fetchTopicOffsets(topic).catch(() => []);
      if (offs.length === partitions) break;
      if (Date.now() > deadline) throw new Error(`topic ${topic} not ready with ${partitions} partitions after 120 s`);
      await new Promise((r) => setTimeout(r, 100));
    }
  } finally {
    await admin.disconnect();
  }
}

/** Sum of the partitions' end offsets (ListOffsets latest). */
export async function endOffsets(bootstrap: string, topic: string): Promise<number[]> {
  const admin = new Kafka({ clientId: 'bench-compare', brokers: [bootstrap], logLevel: logLevel.NOTHING, retry: { retries: 2 } }).admin();
  await admin.connect();
  try {
    const offs = await admin.fetchTopicOffsets(topic);
    return offs.sort((a, b) => a.partition - b.partition).map((o) => Number(o.high));
  } finally {
    await admin.disconnect();
  }
}

/**
 * A payload file for ProducerPerformance --payload-file: text records of about `size` bytes that
 * compress the way log lines do (repeated field names, a small vocabulary), for the lz4 rows.
 */
export function writeCompressiblePayloads(file: string, size: number): void {
  const words = ['order', 'created', 'customer', 'region', 'eu-west', 'us-east', 'status', 'paid', 'shipped', 'sku', 'quantity', 'price'];
  const lines: string[] = [];
  for (let i = 0; i < 1000; i++) {
    let s = `{"id":${i},"ts":"2026-12-01T12:00:${String(i % 60).padStart(2, '0')}Z"`;
    let j = i;
    while (s.length < size - 2) {
      s += `,"${words[j % words.length]}":"${words[(j * 7 + 3) % words.length]}-${j % 97}"`;
      j++;
    }
    lines.push((s.slice(0, size - 1) + '}').padEnd(size, ' '));
  }
  writeFileSync(file, lines.join('\n'));
}

export interface ProduceResult {
  readonly records: number;
  readonly recordsPerSec: number;
  readonly mbPerSec: number;
  readonly avgMs: number;
  readonly maxMs: number;
  readonly p50Ms: number;
  readonly p95Ms: number;
  readonly p99Ms: number;
  readonly p999Ms: number;
}

export interface ProduceOptions {
  readonly topic: string;
  readonly records: number;
  readonly recordSize: number;
  readonly acks: '1' | 'all';
  readonly compression: 'none' | 'lz4';
  /** records/s; -1 = as fast as possible. */
  readonly throughput: number;
  /** ProducerPerformance --payload-file (compressible rows). */
  readonly payloadFile?: string;
}

/** `N records sent, R records/sec (M MB/sec), A ms avg latency, X ms max latency, a ms 50th, b ms 95th, c ms 99th, d ms 99.9th.` */
export function parseProducerSummary(out: string): ProduceResult {
  const line = out.trim().split('\n').reverse().find((l) => / records sent, /.test(l)) ?? '';
  const m = /^(\d+) records sent, ([\d.]+) records\/sec \(([\d.]+) MB\/sec\), ([\d.]+) ms avg latency, ([\d.]+) ms max latency, (\d+) ms 50th, (\d+) ms 95th, (\d+) ms 99th, (\d+) ms 99\.9th/.exec(line);
  if (m === null) throw new Error(`no ProducerPerformance summary in:\n${tail(out, 5)}`);
  const n = (i: number): number => Number(m[i]);
  return { records: n(1), recordsPerSec: n(2), mbPerSec: n(3), avgMs: n(4), maxMs: n(5), p50Ms: n(6), p95Ms: n(7), p99Ms: n(8), p999Ms: n(9) };
}

export async function producerPerformance(bootstrap: string, o: ProduceOptions, timeoutMs = 600_000): Promise<ProduceResult> {
  const payload = o.payloadFile === undefined ? ['--record-size', String(o.recordSize)] : ['--payload-file', o.payloadFile];
  const args = [
    ...toolJvm(), PRODUCER_PERF, '--topic', o.topic, '--num-records', String(o.records), ...payload, '--throughput', String(o.throughput),
    '--producer-props', `bootstrap.servers=${bootstrap}`, `acks=${o.acks}`, `compression.type=${o.compression}`,
  ];
  const r = mustSucceed('ProducerPerformance', await run('java', args, { timeoutMs }));
  return parseProducerSummary(r.stdout);
}

/**
 * A background writer: ProducerPerformance at a fixed rate (records for an hour of it, more
 * than any run needs; its latency sampling is sized by the count), stopped by `stop()` (SIGTERM).
 */
export function backgroundProducer(bootstrap: string, o: Omit<ProduceOptions, 'records'>): { stop(): Promise<void> } {
  const args = [
    ...toolJvm(), PRODUCER_PERF, '--topic', o.topic, '--num-records', String(o.throughput * 3600), '--record-size', String(o.recordSize),
    '--throughput', String(o.throughput), '--producer-props', `bootstrap.servers=${bootstrap}`, `acks=${o.acks}`, `compression.type=${o.compression}`,
  ];
  const child = spawn('java', args, { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  return {
    async stop(): Promise<void> {
      if (child.exitCode !== null) throw new Error(`the background ProducerPerformance exited early (${child.exitCode}):\n${tail(stderr, 10)}`);
      child.kill('SIGTERM');
      await exited;
    },
  };
}

export interface ConsumeResult {
  readonly mb: number;
  readonly records: number;
  /** fetch.MB.sec: MB/s after the group join (rebalance time excluded), what the tool calls the fetch rate. */
  readonly fetchMbPerSec: number;
  readonly fetchRecordsPerSec: number;
}

/** ConsumerPerformance's CSV: start.time, end.time, data.consumed.in.MB, MB.sec, data.consumed.in.nMsg, nMsg.sec, rebalance.time.ms, fetch.time.ms, fetch.MB.sec, fetch.nMsg.sec */
export function parseConsumerSummary(out: string): ConsumeResult {
  const lines = out.trim().split('\n');
  const h = lines.findIndex((l) => l.startsWith('start.time'));
  const cols = (lines[h + 1] ?? '').split(',').map((s) => Number(s.trim()));
  if (h < 0 || cols.length < 10) throw new Error(`no ConsumerPerformance summary in:\n${tail(out, 5)}`);
  return { mb: cols[2] ?? 0, records: cols[4] ?? 0, fetchMbPerSec: cols[8] ?? 0, fetchRecordsPerSec: cols[9] ?? 0 };
}

export async function consumerPerformance(bootstrap: string, topic: string, records: number, timeoutMs = 600_000): Promise<ConsumeResult> {
  const args = [...toolJvm(), CONSUMER_PERF, '--bootstrap-server', bootstrap, '--topic', topic, '--messages', String(records), '--timeout', '30000'];
  const r = mustSucceed('ConsumerPerformance', await run('java', args, { timeoutMs }));
  const res = parseConsumerSummary(r.stdout);
  if (res.records < records) throw new Error(`ConsumerPerformance read ${res.records} of ${records} records`);
  return res;
}

/**
 * An end-to-end consumer: kcat from the end of `topic`, unbuffered, printing each record's
 * CreateTime; the latency of a record is the time it is printed here minus the time the producer
 * stamped on it (same machine, same clock).
 */
export function endToEndConsumer(bootstrap: string, topic: string): { ready: Promise<void>; stop(): Promise<number[]> } {
  const child = spawn('kcat', ['-C', '-b', bootstrap, '-t', topic, '-o', 'end', '-u', '-q', '-f', '%T\\n', '-X', 'fetch.wait.max.ms=100'], { stdio: ['ignore', 'pipe', 'pipe'] });
  const latencies: number[] = [];
  createInterface({ input: child.stdout }).on('line', (l) => {
    const ts = Number(l);
    if (ts > 0) latencies.push(Date.now() - ts);
  });
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  // kcat has no "assigned" signal on -q; give it its metadata round trip by waiting for the
  // topic's end offsets to be known to the broker (the producer starts after `ready`).
  const ready = new Promise<void>((r) => setTimeout(r, 2000));
  return {
    ready,
    async stop(): Promise<number[]> {
      child.kill('SIGTERM');
      await exited;
      return latencies;
    },
  };
}

export interface KcatConsumeResult {
  readonly records: number;
  readonly seconds: number;
}

/**
 * kcat (librdkafka) reading `topic` from the beginning to its end (`-e`), printing nothing but a
 * newline per record: a consumer far cheaper than the JVM's, so the broker's side of the fetch
 * path shows more. Timed from the start of the process to its exit (metadata round trip included).
 */
export function kcatConsume(bootstrap: string, topic: string, timeoutMs = 600_000): Promise<KcatConsumeResult> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn('kcat', ['-C', '-b', bootstrap, '-t', topic, '-o', 'beginning', '-e', '-q', '-f', '\\n'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let records = 0;
    let stderr = '';
    child.stdout.on('data', (b: Buffer) => {
      for (let i = b.indexOf(10); i >= 0; i = b.indexOf(10, i + 1)) records++;
    });
    child.stderr.on('data', (b: Buffer) => {
      stderr = (stderr + b.toString()).slice(-4000);
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.once('error', reject);
    child.once('exit', (code) => {
      clearTimeout(timer);
      if (code !== 0) reject(new Error(`kcat consume failed (exit ${code}):\n${tail(stderr, 10)}`));
      else resolve({ records, seconds: (performance.now() - started) / 1000 });
    });
  });
}
