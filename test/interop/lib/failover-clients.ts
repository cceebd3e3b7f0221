/**
 * Clients that keep producing and consuming while a cluster loses a node, all with one shape:
 * an idempotent acks=all producer sends the values 0, 1, 2, ... to one topic, a consumer in a
 * group reads them, `progress()` is the latest count, and `stop()` ends producing, lets the
 * consumer catch up and returns what was acknowledged and consumed. The Java client
 * (fjord.interop.ClusterFailover) and confluent-kafka (python/cluster_failover.py) run as child
 * processes speaking JSON lines; kafkajs runs in this process.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import kafkajs from 'kafkajs';
import { LOG4J2_CONFIG, ROOT, VENV_PYTHON, clientsClasspath } from './paths.js';
import { tail } from './run.js';

const { Kafka, logLevel } = kafkajs;

export interface Progress {
  readonly acked: number;
  readonly consumed: number;
  /** The highest value the consumer has seen, -1 before the first. */
  readonly maxConsumed: number;
}

export interface FailoverOutcome {
  /** Every value the producer had acknowledged, ascending. */
  readonly acked: number[];
  /** Every value the consumer received, in order, duplicates included (a group is at-least-once). */
  readonly consumed: number[];
  /** Sends that failed, as the client named them. */
  readonly errors: string[];
}

export interface FailoverClient {
  progress(): Progress;
  stop(): Promise<FailoverOutcome>;
  /** Ends the client without waiting for anything (a failed test's cleanup). */
  abort(): void;
}

export interface FailoverTarget {
  readonly bootstrap: string;
  readonly topic: string;
  readonly group: string;
  /** Milliseconds between two sends. */
  readonly paceMs: number;
}

/** A child process printing progress lines and, after "stop" on its stdin, one outcome line. */
function jsonLinesClient(cmd: string, args: readonly string[]): FailoverClient {
  const child = spawn(cmd, args, { stdio: ['pipe', 'pipe', 'pipe'] });
  let progress: Progress = { acked: 0, consumed: 0, maxConsumed: -1 };
  let stdout = '';
  let stderr = '';
  let final: Record<string, unknown> | null = null;
  child.stdout.on('data', (b: Buffer) => {
    stdout += b.toString();
    let nl: number;
    while ((nl = stdout.indexOf('\n')) >= 0) {
      const line = stdout.slice(0, nl).trim();
      stdout = stdout.slice(nl + 1);
      if (!line.startsWith('{')) continue;
      const obj = JSON.parse(line) as Record<string, unknown>;
      if (obj.progress === true) progress = obj as unknown as Progress;
      else final = obj;
    }
  });
  child.stderr.on('data', (b: Buffer) => {
    stderr = (stderr + b.toString()).slice(-20_000);
  });
  child.stdin.on('error', () => undefined);
  const exited = new Promise<number | null>((r) => child.once('close', (code) => r(code)));
  return {
    progress: () => progress,
    async stop() {
      child.stdin.end('stop\n');
      const timer = setTimeout(() => child.kill('SIGKILL'), 120_000);
      const code = await exited;
      clearTimeout(timer);
      const f = final as Record<string, unknown> | null;
      if (code !== 0 || f === null || 'error' in f) {
        throw new Error(`${cmd} client failed (exit ${code}): ${f ? `${String(f.error)}: ${String(f.message)}` : 'no outcome line'}\n${tail(stderr, 20)}`);
      }
      return f as unknown as FailoverOutcome;
    },
    abort() {
      if (child.exitCode === null) child.kill('SIGKILL');
    },
  };
}

/** The Java client (kafka-clients 4.1.2): KafkaProducer with enable.idempotence, acks=all; KafkaConsumer in a group. */
export function javaFailoverClient(t: FailoverTarget): FailoverClient {
  return jsonLinesClient('java', [
    '-Xmx256m', '-XX:+UseSerialGC', '-XX:TieredStopAtLevel=1',
    `-Dlog4j2.configurationFile=${LOG4J2_CONFIG}`, `-Dfjord.loglevel=${process.env.FJORD_INTEROP_LOG_LEVEL ?? 'ERROR'}`,
    '-cp', clientsClasspath(), 'fjord.interop.ClusterFailover',
    `bootstrap=${t.bootstrap}`, `topic=${t.topic}`, `group=${t.group}`, `pace.ms=${t.paceMs}`,
  ]);
}

/** librdkafka through confluent-kafka (Python): the idempotent producer and a group consumer. */
export function librdkafkaFailoverClient(t: FailoverTarget): FailoverClient {
  return jsonLinesClient(VENV_PYTHON, [join(ROOT, 'test/interop/python/cluster_failover.py'), t.bootstrap, t.topic, t.group, String(t.paceMs)]);
}

/** kafkajs 2.2.4 in this process: an idempotent producer (one request in flight) and a group consumer. */
export function kafkajsFailoverClient(t: FailoverTarget): FailoverClient {
  // Retries long enough to ride out a leader's loss (one broker session timeout plus an election).
  const kafka = new Kafka({
    clientId: 'cluster-clients-kafkajs',
    brokers: t.bootstrap.split(','),
    logLevel: logLevel.NOTHING,
    connectionTimeout: 2000,
    requestTimeout: 10_000,
    retry: { retries: 30, initialRetryTime: 100, maxRetryTime: 1000 },
  });
  const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1, metadataMaxAge: 2000 });
  const consumer = kafka.consumer({ groupId: t.group, sessionTimeout: 10_000, heartbeatInterval: 1000, metadataMaxAge: 2000, maxWaitTimeInMs: 200 });
  const acked: number[] = [];
  const consumed: number[] = [];
  const errors: string[] = [];
  const seen = new Set<number>();
  let maxConsumed = -1;
  let stopping = false;
  const run = (async () => {
    await producer.connect();
    await consumer.connect();
    await consumer.subscribe({ topic: t.topic, fromBeginning: true });
    await consumer.run({
      autoCommitInterval: 200,
      eachMessage: async ({ message }) => {
        const v = Number(message.value!.toString());
        consumed.push(v);
        seen.add(v);
        maxConsumed = Math.max(maxConsumed, v);
      },
    });
    for (let seq = 0; !stopping; seq++) {
      try {
        await producer.send({ topic: t.topic, acks: -1, messages: [{ value: String(seq) }] });
        acked.push(seq);
      } catch (err) {
        errors.push(`${seq}:${(err as Error).name}`);
      }
      await new Promise((r) => setTimeout(r, t.paceMs));
    }
  })();
  return {
    progress: () => ({ acked: acked.length, consumed: consumed.length, maxConsumed }),
    async stop() {
      stopping = true;
      try {
        await run;
        const deadline = Date.now() + 30_000;
        while (!acked.every((v) => seen.has(v)) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
      } finally {
        await consumer.disconnect().catch(() => undefined);
        await producer.disconnect().catch(() => undefined);
      }
      return { acked: [...acked], consumed: [...consumed], errors: [...errors] };
    },
    abort() {
      stopping = true;
      void consumer.disconnect().catch(() => undefined);
      void producer.disconnect().catch(() => undefined);
    },
  };
}

/** Every value in the topic's partitions from offset 0 to the high watermark, read by a fresh kafkajs consumer. */
export async function readAllValues(bootstrap: string, topic: string): Promise<number[]> {
  const kafka = new Kafka({ clientId: 'cluster-clients-reader', brokers: bootstrap.split(','), logLevel: logLevel.NOTHING, retry: { retries: 20, initialRetryTime: 100, maxRetryTime: 1000 } });
  const admin = kafka.admin();
  await admin.connect();
  const ends = await admin.fetchTopicOffsets(topic);
  await admin.disconnect();
  const want = new Map(ends.map((e) => [e.partition, Number(e.high)]));
  const values: number[] = [];
  const consumer = kafka.consumer({ groupId: `reader-${topic}-${Date.now()}`, maxWaitTimeInMs: 200 });
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  const done = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`reading ${topic} timed out`)), 60_000);
    const check = (): void => {
      if ([...want.values()].every((n) => n <= 0)) {
        clearTimeout(timer);
        resolve();
      }
    };
    check();
    void consumer.run({
      eachMessage: async ({ partition, message }) => {
        values.push(Number(message.value!.toString()));
        const left = want.get(partition) ?? 0;
        if (Number(message.offset) + 1 >= left) want.set(partition, 0);
        check();
      },
    });
  });
  try {
    await done;
  } finally {
    await consumer.disconnect();
  }
  return values;
}
