/**
 * Clients that keep producing and consuming while a cluster loses a node, all with one shape:
 * an idempotent acks=all producer sends the values 0, 1, 2, ... to one topic, a consumer in a
 * group reads them, `progress()` is the latest count, and `stop()` ends producing, lets the
 * consumer catch up and returns what was acknowledged and consumed. The Java client
 * (fjord.interop.ClusterFailover) and confluent-kafka (python/cluster_failover.py) run as child
 * processes speaking JSON lines; kafkajs runs in this process. What is in the log afterwards is
 * read with kcat.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import kafkajs from 'kafkajs';
import { LOG4J2_CONFIG, ROOT, VENV_PYTHON, clientsClasspath } from './paths.js';
import { run, tail } from './run.js';

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
  /** Values of transactions the producer aborted (transactional runs only). */
  readonly aborted?: number[];
}

export interface FailoverClient {
  progress(): Progress;
  stop(): Promise<FailoverOutcome>;
  /** Ends the client without waiting for anything (a failed test's cleanup). */
  abort(): void;
  /** Its latest progress and what it last printed or failed with, for a timed-out wait's message. */
  explain(): string;
}

/** `wait`, failing with `client.explain()` appended to its error (what the client was doing then). */
export async function explained<T>(client: FailoverClient, wait: Promise<T>): Promise<T> {
  try {
    return await wait;
  } catch (err) {
    throw new Error(`${(err as Error).message}\n${client.explain()}`, { cause: err });
  }
}

export interface FailoverTarget {
  readonly bootstrap: string;
  readonly topic: string;
  readonly group: string;
  /** Milliseconds between two sends. */
  readonly paceMs: number;
  /** Java only: write transactions of ten values with this transactional.id, consume read_committed. */
  readonly transactionalId?: string;
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
    explain: () => {
      // A client that ended by itself printed its outcome: the errors it stopped on say why.
      const f = final as Record<string, unknown> | null;
      const outcome = f === null ? '' : `; its outcome: ${JSON.stringify({ error: f.error, message: f.message, errors: f.errors, aborted: f.aborted })}`;
      return `${cmd} client progress ${JSON.stringify(progress)}, exit ${String(child.exitCode)}${outcome}; its stderr ends:\n${tail(stderr, 20)}`;
    },
  };
}

/**
 * The Java client (kafka-clients 4.1.2, or `kafkaClientsVersion`): KafkaProducer with
 * enable.idempotence, acks=all; KafkaConsumer in a group.
 */
export function javaFailoverClient(t: FailoverTarget, kafkaClientsVersion?: string): FailoverClient {
  return jsonLinesClient('java', [
    '-Xmx256m', '-XX:+UseSerialGC', '-XX:TieredStopAtLevel=1',
    `-Dlog4j2.configurationFile=${LOG4J2_CONFIG}`, `-Dfjord.loglevel=${process.env.FJORD_INTEROP_LOG_LEVEL ?? 'ERROR'}`,
    '-cp', clientsClasspath(kafkaClientsVersion), 'fjord.interop.ClusterFailover',
    `bootstrap=${t.bootstrap}`, `topic=${t.topic}`, `group=${t.group}`, `pace.ms=${t.paceMs}`,
    ...(t.transactionalId === undefined ? [] : [`transactional.id=${t.transactionalId}`]),
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
    explain: () => `kafkajs client acked ${acked.length}, consumed ${consumed.length}, max ${maxConsumed}; last errors: ${errors.slice(-10).join(', ')}`,
  };
}

/**
 * Every value in the topic from offset 0 to the end of each partition, read by kcat (librdkafka,
 * read_committed: aborted transactions are skipped, control records are not values).
 */
export async function readAllValues(bootstrap: string, topic: string): Promise<number[]> {
  const r = await run('kcat', ['-C', '-b', bootstrap, '-t', topic, '-o', 'beginning', '-e', '-q', '-f', '%s\n', '-X', 'isolation.level=read_committed', '-X', 'socket.connection.setup.timeout.ms=3000'], { timeoutMs: 60_000 });
  if (r.code !== 0) throw new Error(`kcat reading ${topic} failed (exit ${r.code}):\n${tail(r.stderr, 15)}`);
  return r.stdout.split('\n').filter((l) => l !== '').map(Number);
}
