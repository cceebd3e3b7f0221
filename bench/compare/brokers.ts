/**
 * The two brokers the suite compares, each started the way its users start it: Fjord with
 * `node bin/fjord.js start` and its defaults; Apache Kafka with `kafka.Kafka` and the JVM flags
 * `kafka-server-start.sh` passes (KAFKA_HEAP_OPTS -Xmx1G -Xms1G and kafka-run-class.sh's
 * KAFKA_JVM_PERFORMANCE_OPTS), in KRaft combined mode, with Kafka's stock broker settings. Only
 * what a single node needs differs from stock: listeners, directories, and replication factor 1
 * for the internal topics.
 *
 * Durability: `default` leaves each broker at its defaults (Fjord fsyncs before acknowledging an
 * acks=all write; Kafka leaves flushing to the OS, log.flush.interval.messages = Long.MAX_VALUE).
 * `matched` sets log.flush.interval.messages=1 on both, so both fsync every append.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KAFKA_VERSION, LOG4J2_CONFIG, ROOT, kafkaClasspath } from '../../test/interop/lib/paths.js';
import { ManagedProcess } from '../../test/interop/lib/process.js';
import { freePort, waitServing } from '../../test/interop/lib/net.js';
import { run, tail } from '../../test/interop/lib/run.js';

export type BrokerKind = 'fjord' | 'kafka';
export type Durability = 'default' | 'matched';

export interface Broker {
  readonly kind: BrokerKind;
  readonly bootstrap: string;
  readonly pid: number;
  /** The directory holding the partition directories (`<topic>-<n>`). */
  readonly logDir: string;
  /** null while running; otherwise why it exited, with the end of its log. */
  deadReason(): string | null;
  stop(): Promise<void>;
}

export interface StartOptions {
  readonly durability: Durability;
  /** Extra broker settings (Kafka key names, both brokers). */
  readonly overrides?: Readonly<Record<string, string>>;
}

/** kafka-run-class.sh's KAFKA_JVM_PERFORMANCE_OPTS, as shipped with Kafka 4.1. */
export const KAFKA_JVM_PERFORMANCE_OPTS = [
  '-server',
  '-XX:+UseG1GC',
  '-XX:MaxGCPauseMillis=20',
  '-XX:InitiatingHeapOccupancyPercent=35',
  '-XX:+ExplicitGCInvokesConcurrent',
  '-XX:MaxInlineLevel=15',
  '-Djava.awt.headless=true',
];

/**
 * The server.properties every Kafka broker of the suite shares: PLAINTEXT clients, a CONTROLLER
 * listener, logs and metadata under `dir`, internal topics on one replica.
 */
export function kafkaSingleNodeProps(dir: string): Record<string, string> {
  return {
    'listener.security.protocol.map': 'PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT',
    'controller.listener.names': 'CONTROLLER',
    'inter.broker.listener.name': 'PLAINTEXT',
    'log.dirs': join(dir, 'logs'),
    'metadata.log.dir': join(dir, 'metadata'),
    'offsets.topic.replication.factor': '1',
    'transaction.state.log.replication.factor': '1',
    'transaction.state.log.min.isr': '1',
  };
}

export function durabilityProps(d: Durability): Record<string, string> {
  return d === 'matched' ? { 'log.flush.interval.messages': '1' } : {};
}

/** A Kafka Uuid in text form that does not start with '-' (Kafka's Uuid.randomUuid rule). */
export function clusterId(): string {
  for (;;) {
    const id = randomBytes(16).toString('base64url');
    if (!id.startsWith('-')) return id;
  }
}

export async function startKafka(opts: StartOptions): Promise<Broker> {
  const classpath = kafkaClasspath(KAFKA_VERSION);
  const dir = mkdtempSync(join(tmpdir(), 'fjord-bench-kafka-'));
  const port = await freePort();
  const controllerPort = await freePort();
  const logDir = join(dir, 'logs');
  const props: Record<string, string> = {
    'process.roles': 'broker,controller',
    'node.id': '1',
    'controller.quorum.voters': `1@127.0.0.1:${controllerPort}`,
    listeners: `PLAINTEXT://127.0.0.1:${port},CONTROLLER://127.0.0.1:${controllerPort}`,
    'advertised.listeners': `PLAINTEXT://127.0.0.1:${port}`,
    ...kafkaSingleNodeProps(dir),
    'share.coordinator.state.topic.replication.factor': '1',
    'share.coordinator.state.topic.min.isr': '1',
    'group.initial.rebalance.delay.ms': '0',
    ...durabilityProps(opts.durability),
    ...opts.overrides,
  };
  const propsFile = join(dir, 'server.properties');
  writeFileSync(propsFile, Object.entries(props).map(([k, v]) => `${k}=${v}`).join('\n') + '\n');
  const jvm = ['-Xmx1G', '-Xms1G', ...KAFKA_JVM_PERFORMANCE_OPTS, `-Dlog4j2.configurationFile=${LOG4J2_CONFIG}`, '-Dfjord.loglevel=WARN', '-cp', classpath];
  const format = await run('java', [...jvm, 'kafka.tools.StorageTool', 'format', '-t', clusterId(), '-c', propsFile], { timeoutMs: 120_000 });
  if (format.code !== 0) throw new Error(`kafka-storage format failed (exit ${format.code}):\n${tail(format.stderr)}`);
  const proc = new ManagedProcess('kafka', 'java', [...jvm, 'kafka.Kafka', propsFile], join(dir, 'server.log'));
  return serving('kafka', proc, port, logDir, dir, 120_000);
}

export async function startFjord(opts: StartOptions): Promise<Broker> {
  const dir = mkdtempSync(join(tmpdir(), 'fjord-bench-fjord-'));
  const port = await freePort();
  const logDir = join(dir, 'logs');
  const overrides: Record<string, string> = {
    'offsets.topic.replication.factor': '1',
    'transaction.state.log.replication.factor': '1',
    'transaction.state.log.min.isr': '1',
    'group.initial.rebalance.delay.ms': '0',
    ...durabilityProps(opts.durability),
    ...opts.overrides,
    listeners: `PLAINTEXT://127.0.0.1:${port}`,
    'log.dirs': logDir,
    'node.id': '1',
  };
  const args = [join(ROOT, 'bin/fjord.js'), 'start'];
  for (const [k, v] of Object.entries(overrides)) args.push('--override', `${k}=${v}`);
  const proc = new ManagedProcess('fjord', process.execPath, args, join(dir, 'fjord.log'), { cwd: ROOT });
  return serving('fjord', proc, port, logDir, dir, 60_000);
}

export function startBroker(kind: BrokerKind, opts: StartOptions): Promise<Broker> {
  return kind === 'fjord' ? startFjord(opts) : startKafka(opts);
}

async function serving(kind: BrokerKind, proc: ManagedProcess, port: number, logDir: string, dir: string, deadlineMs: number): Promise<Broker> {
  const stop = async (): Promise<void> => {
    await proc.stop();
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await waitServing('127.0.0.1', port, deadlineMs, () => proc.deadReason());
  } catch (e) {
    const log = proc.logTail();
    await stop();
    throw new Error(`${kind} did not start: ${(e as Error).message}\n${log}`);
  }
  const pid = proc.pid;
  if (pid === undefined) throw new Error(`${kind} has no pid`);
  return { kind, bootstrap: `127.0.0.1:${port}`, pid, logDir, deadReason: () => proc.deadReason(), stop };
}
