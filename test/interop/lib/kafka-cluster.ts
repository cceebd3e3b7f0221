/**
 * Starts a real multi-broker Apache Kafka cluster (KRaft) from the Maven-resolved kafka_2.13
 * classpath: one controller-only node, so the quorum survives any broker being down, and
 * `brokers` broker-only nodes on free loopback ports. Every node is formatted and started in
 * parallel with the JVM settings of ../kafka-broker.ts. A broker can be killed (SIGKILL, as a
 * crash), stopped (SIGTERM, a controlled shutdown) and started again on its data directory, for
 * leader failover and unclean leader election scenarios.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { jvmArgs, kafkaUuid } from '../kafka-broker.js';
import { KAFKA_VERSION, kafkaClasspath } from './paths.js';
import { ManagedProcess } from './process.js';
import { freePort, waitServing } from './net.js';
import { run, tail } from './run.js';

export interface KafkaClusterOptions {
  readonly brokers?: number;
  readonly version?: string;
  /** Extra server.properties entries for every broker; they win over the defaults below. */
  readonly brokerOverrides?: Readonly<Record<string, string>>;
  /**
   * Feature levels the cluster is formatted with (`kafka-storage format --feature`), e.g.
   * `eligible.leader.replicas.version=0` for Kafka's pre-KIP-966 unclean election rules.
   */
  readonly features?: readonly string[];
}

export interface KafkaClusterBroker {
  readonly nodeId: number;
  readonly port: number;
  /** The broker's `log.dirs`: `<logDir>/<topic>-<partition>/` holds its segments. */
  readonly logDir: string;
  readonly running: boolean;
}

export interface KafkaCluster {
  readonly version: string;
  readonly bootstrap: string;
  readonly brokers: readonly KafkaClusterBroker[];
  broker(nodeId: number): KafkaClusterBroker;
  /** SIGKILL: the broker dies at once, as in a crash (kill -9). */
  kill(nodeId: number): Promise<void>;
  /** SIGTERM: a controlled shutdown (the controller moves leadership away first). */
  stopBroker(nodeId: number): Promise<void>;
  /** Starts a stopped broker again on its data directory and waits until it serves. */
  startBroker(nodeId: number): Promise<void>;
  stop(): Promise<void>;
}

const CONTROLLER_ID = 100;

interface Node {
  readonly nodeId: number;
  readonly port: number;
  readonly propsFile: string;
  readonly logDir: string;
  readonly logFile: string;
  proc: ManagedProcess | null;
}

function props(entries: Record<string, string>): string {
  return Object.entries(entries).map(([k, v]) => `${k}=${v}`).join('\n') + '\n';
}

export async function startKafkaCluster(opts: KafkaClusterOptions = {}): Promise<KafkaCluster> {
  const version = opts.version ?? KAFKA_VERSION;
  const classpath = kafkaClasspath(version);
  const root = mkdtempSync(join(tmpdir(), `fjord-interop-kafka-cluster-${version}-`));
  const controllerPort = await freePort();
  const voters = `${CONTROLLER_ID}@127.0.0.1:${controllerPort}`;
  const common = {
    'controller.quorum.voters': voters,
    'controller.listener.names': 'CONTROLLER',
    'listener.security.protocol.map': 'PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT',
  };
  const nodes: Node[] = [];
  const controllerDir = join(root, 'controller');
  mkdirSync(controllerDir);
  nodes.push({
    nodeId: CONTROLLER_ID,
    port: controllerPort,
    propsFile: join(controllerDir, 'server.properties'),
    logDir: join(controllerDir, 'metadata'),
    logFile: join(controllerDir, 'server.log'),
    proc: null,
  });
  writeFileSync(
    nodes[0]!.propsFile,
    props({
      ...common,
      'process.roles': 'controller',
      'node.id': String(CONTROLLER_ID),
      listeners: `CONTROLLER://127.0.0.1:${controllerPort}`,
      'log.dirs': join(controllerDir, 'metadata'),
      // A killed broker is fenced (and leaves the ISR) after this long without a heartbeat.
      'broker.session.timeout.ms': '3000',
    }),
  );
  for (let id = 1; id <= (opts.brokers ?? 3); id++) {
    const dir = join(root, `broker-${id}`);
    mkdirSync(dir);
    const port = await freePort();
    const node: Node = { nodeId: id, port, propsFile: join(dir, 'server.properties'), logDir: join(dir, 'logs'), logFile: join(dir, 'server.log'), proc: null };
    nodes.push(node);
    writeFileSync(
      node.propsFile,
      props({
        ...common,
        'process.roles': 'broker',
        'node.id': String(id),
        listeners: `PLAINTEXT://127.0.0.1:${port}`,
        'advertised.listeners': `PLAINTEXT://127.0.0.1:${port}`,
        'inter.broker.listener.name': 'PLAINTEXT',
        'log.dirs': node.logDir,
        'metadata.log.dir': join(dir, 'metadata'),
        'broker.heartbeat.interval.ms': '500',
        'offsets.topic.replication.factor': '1',
        'transaction.state.log.replication.factor': '1',
        'transaction.state.log.min.isr': '1',
        'share.coordinator.state.topic.replication.factor': '1',
        'share.coordinator.state.topic.min.isr': '1',
        'group.initial.rebalance.delay.ms': '0',
        'auto.create.topics.enable': 'false',
        'num.network.threads': '2',
        'num.io.threads': '2',
        ...opts.brokerOverrides,
      }),
    );
  }

  const clusterId = kafkaUuid();
  const featureArgs = (opts.features ?? []).flatMap((f) => ['--feature', f]);
  const formats = await Promise.all(
    nodes.map((n) => run('java', [...jvmArgs(classpath), 'kafka.tools.StorageTool', 'format', '-t', clusterId, '-c', n.propsFile, ...featureArgs], { timeoutMs: 90_000 })),
  );
  const badFormat = formats.findIndex((f) => f.code !== 0);
  if (badFormat >= 0) {
    rmSync(root, { recursive: true, force: true });
    const f = formats[badFormat]!;
    throw new Error(`kafka-storage format of node ${nodes[badFormat]!.nodeId} failed (exit ${f.code}):\n${tail(f.stdout)}\n${tail(f.stderr)}`);
  }

  const start = async (n: Node): Promise<void> => {
    n.proc = new ManagedProcess(`kafka-${version}-node-${n.nodeId}`, 'java', [...jvmArgs(classpath), 'kafka.Kafka', n.propsFile], n.logFile);
    const proc = n.proc;
    await waitServing('127.0.0.1', n.port, 120_000, () => proc.deadReason());
  };
  const halt = async (n: Node, signal: 'SIGKILL' | 'SIGTERM'): Promise<void> => {
    const proc = n.proc;
    if (proc === null) return;
    n.proc = null;
    if (signal === 'SIGKILL' && proc.pid !== undefined && proc.deadReason() === null) process.kill(proc.pid, 'SIGKILL');
    await proc.stop();
  };
  // The cluster's data is thrown away: no controlled shutdown needed.
  const stopAll = async (): Promise<void> => {
    await Promise.all(nodes.map((n) => halt(n, 'SIGKILL')));
    rmSync(root, { recursive: true, force: true });
  };
  try {
    // The controller answers ApiVersions before the brokers register; the brokers are started
    // with it and serve once it is up.
    await Promise.all(nodes.map((n) => start(n)));
  } catch (e) {
    const logs = nodes.map((n) => `node ${n.nodeId}: ${n.proc?.logTail(15) ?? ''}`).join('\n');
    await stopAll();
    throw new Error(`Apache Kafka ${version} cluster did not start: ${(e as Error).message}\n${logs}`);
  }
  const brokerNodes = nodes.filter((n) => n.nodeId !== CONTROLLER_ID);
  const byId = (nodeId: number): Node => {
    const n = brokerNodes.find((x) => x.nodeId === nodeId);
    if (n === undefined) throw new Error(`no broker ${nodeId}`);
    return n;
  };
  const view = (n: Node): KafkaClusterBroker => ({
    nodeId: n.nodeId,
    port: n.port,
    logDir: n.logDir,
    get running() {
      return n.proc !== null && n.proc.deadReason() === null;
    },
  });
  return {
    version,
    bootstrap: brokerNodes.map((n) => `127.0.0.1:${n.port}`).join(','),
    brokers: brokerNodes.map(view),
    broker: (nodeId) => view(byId(nodeId)),
    kill: (nodeId) => halt(byId(nodeId), 'SIGKILL'),
    stopBroker: (nodeId) => halt(byId(nodeId), 'SIGTERM'),
    startBroker: (nodeId) => start(byId(nodeId)),
    stop: stopAll,
  };
}
