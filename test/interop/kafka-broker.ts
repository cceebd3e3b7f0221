/**
 * Starts a real single-node Apache Kafka (KRaft, combined broker+controller) from the Maven-resolved
 * kafka_2.13 classpath: formats a temporary data directory, starts `kafka.Kafka` on free loopback
 * ports, waits until ApiVersions answers, and stops it with SIGTERM. Used by every interop test
 * that needs "real Kafka", and reusable as a mirror source.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KAFKA_VERSION, LOG4J2_CONFIG, kafkaClasspath } from './lib/paths.js';
import { ManagedProcess } from './lib/process.js';
import { freePorts, waitServing } from './lib/net.js';
import { run, tail } from './lib/run.js';
import type { Target } from './lib/target.js';

export interface KafkaBrokerOptions {
  /** A version setup.sh resolved (default 4.1.2). */
  readonly version?: string;
  /**
   * Extra server.properties entries; they win over the defaults below. A function gets the
   * chosen ports, for overrides that name them (an extra listener beside PLAINTEXT).
   */
  readonly overrides?: Readonly<Record<string, string>> | ((ports: { port: number; controllerPort: number }) => Readonly<Record<string, string>>);
  /** Keep the data directory after stop (for inspecting segments). */
  readonly keepData?: boolean;
  /**
   * More listeners beside PLAINTEXT (which stays the probe and admin port), each on a free port
   * and advertised on it; their ports are in `KafkaBroker.listenerPorts`. Their security settings
   * go in `overrides` (`listener.name.<name>.*`).
   */
  readonly extraListeners?: readonly { readonly name: string; readonly protocol: string }[];
}

export interface KafkaBroker extends Target {
  readonly version: string;
  readonly logFile: string;
  readonly process: ManagedProcess;
  /** The port of each extra listener, by name. */
  readonly listenerPorts: Readonly<Record<string, number>>;
}

/**
 * Broker settings for a single node: what librdkafka's suite expects of its "default" scenario
 * (auto-create with 4 partitions, a short initial rebalance delay) and replication factor 1 for
 * the internal topics so they can be created at all.
 */
function defaultProperties(port: number, controllerPort: number, dataDir: string): Record<string, string> {
  return {
    'process.roles': 'broker,controller',
    'node.id': '1',
    'controller.quorum.voters': `1@127.0.0.1:${controllerPort}`,
    listeners: `PLAINTEXT://127.0.0.1:${port},CONTROLLER://127.0.0.1:${controllerPort}`,
    'advertised.listeners': `PLAINTEXT://127.0.0.1:${port}`,
    'listener.security.protocol.map': 'PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT',
    'controller.listener.names': 'CONTROLLER',
    'inter.broker.listener.name': 'PLAINTEXT',
    'log.dirs': join(dataDir, 'logs'),
    'metadata.log.dir': join(dataDir, 'metadata'),
    'num.partitions': '4',
    'auto.create.topics.enable': 'true',
    'delete.topic.enable': 'true',
    'offsets.topic.replication.factor': '1',
    'offsets.topic.num.partitions': '10',
    'transaction.state.log.replication.factor': '1',
    'transaction.state.log.min.isr': '1',
    'transaction.state.log.num.partitions': '4',
    'share.coordinator.state.topic.replication.factor': '1',
    'share.coordinator.state.topic.min.isr': '1',
    'group.initial.rebalance.delay.ms': '0',
    // An authorizer that stores ACLs (librdkafka's 0081 creates, describes and deletes them); the
    // anonymous PLAINTEXT principal is a super user, so nothing else is restricted.
    'authorizer.class.name': 'org.apache.kafka.metadata.authorizer.StandardAuthorizer',
    'super.users': 'User:ANONYMOUS',
    'num.network.threads': '2',
    'num.io.threads': '4',
  };
}

/** A Kafka Uuid in its text form; like Kafka's Uuid.randomUuid, never one starting with '-'. */
export function kafkaUuid(): string {
  for (;;) {
    const id = randomBytes(16).toString('base64url');
    if (!id.startsWith('-')) return id;
  }
}

/** The JVM flags every Apache Kafka server process of the harness runs with (./lib/kafka-cluster.ts too). */
export function jvmArgs(classpath: string): string[] {
  return [
    '-Xms256m',
    '-Xmx768m',
    '-XX:+UseG1GC',
    // C1 only: the broker starts in about half the time, and test loads never need C2's peak speed.
    '-XX:TieredStopAtLevel=1',
    '-Djava.awt.headless=true',
    `-Dlog4j2.configurationFile=${LOG4J2_CONFIG}`,
    `-Dfjord.loglevel=${process.env.FJORD_INTEROP_LOG_LEVEL ?? 'WARN'}`,
    '-cp',
    classpath,
  ];
}

/**
 * A port chosen free can be taken by another process before the JVM binds it (seconds later):
 * Kafka then exits with "Address already in use", and the broker is started again on new ports.
 */
const BIND_ATTEMPTS = 3;

export async function startKafkaBroker(opts: KafkaBrokerOptions = {}): Promise<KafkaBroker> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOnce(opts);
    } catch (e) {
      if (attempt >= BIND_ATTEMPTS || !(e as Error).message.includes('Address already in use')) throw e;
      console.log(`[interop] Apache Kafka found a chosen port taken (attempt ${attempt} of ${BIND_ATTEMPTS}); starting it on new ports`);
    }
  }
}

async function startOnce(opts: KafkaBrokerOptions): Promise<KafkaBroker> {
  const version = opts.version ?? KAFKA_VERSION;
  const classpath = kafkaClasspath(version);
  const dataDir = mkdtempSync(join(tmpdir(), `fjord-interop-kafka-${version}-`));
  const [port, controllerPort, ...extraPorts] = (await freePorts(2 + (opts.extraListeners?.length ?? 0))) as [number, number, ...number[]];
  const props = defaultProperties(port, controllerPort, dataDir);
  const listenerPorts: Record<string, number> = {};
  for (const [i, l] of (opts.extraListeners ?? []).entries()) {
    const p = extraPorts[i]!;
    listenerPorts[l.name] = p;
    props.listeners += `,${l.name}://127.0.0.1:${p}`;
    props['advertised.listeners'] += `,${l.name}://127.0.0.1:${p}`;
    props['listener.security.protocol.map'] += `,${l.name}:${l.protocol}`;
  }
  Object.assign(props, typeof opts.overrides === 'function' ? opts.overrides({ port, controllerPort }) : opts.overrides);
  const propsFile = join(dataDir, 'server.properties');
  writeFileSync(propsFile, Object.entries(props).map(([k, v]) => `${k}=${v}`).join('\n') + '\n');

  const format = await run(
    'java',
    [...jvmArgs(classpath), 'kafka.tools.StorageTool', 'format', '-t', kafkaUuid(), '-c', propsFile],
    { timeoutMs: 60_000 },
  );
  if (format.code !== 0) {
    throw new Error(`kafka-storage format failed (exit ${format.code}):\n${tail(format.stdout)}\n${tail(format.stderr)}`);
  }

  const logFile = join(dataDir, 'server.log');
  const proc = new ManagedProcess(`kafka-${version}`, 'java', [...jvmArgs(classpath), 'kafka.Kafka', propsFile], logFile);
  const stop = async (): Promise<void> => {
    await proc.stop();
    if (!opts.keepData) rmSync(dataDir, { recursive: true, force: true });
  };
  try {
    await waitServing('127.0.0.1', port, 90_000, () => proc.deadReason());
  } catch (e) {
    const log = proc.logTail();
    await stop();
    throw new Error(`Apache Kafka ${version} did not start: ${(e as Error).message}\n${log}`);
  }
  return {
    name: `kafka-${version}`,
    kind: 'kafka',
    version,
    host: '127.0.0.1',
    port,
    bootstrap: `127.0.0.1:${port}`,
    dataDir,
    logFile,
    process: proc,
    listenerPorts,
    stop,
  };
}
