/**
 * The cluster rows (`--sections cluster`): three local Fjord nodes on one etcd beside a
 * three-node Apache Kafka 4.1.2 in KRaft combined mode (each node broker and controller voter,
 * started as brokers.ts starts one), both with their stock session timeouts
 * (broker.session.timeout.ms 9000, broker.heartbeat.interval.ms 2000). On each: produce with
 * ProducerPerformance to a replication-factor 3 topic (min.insync.replicas=2, acks=all), consume
 * it with ConsumerPerformance, and the failover time: SIGKILL of a partition leader that is not
 * the active controller → the first acks=all produce acknowledged after it, by a kafkajs
 * idempotent producer sending one record at a time.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { Kafka, logLevel } from 'kafkajs';
import { KAFKA_VERSION, LOG4J2_CONFIG, kafkaClasspath } from '../../test/interop/lib/paths.js';
import { ManagedProcess } from '../../test/interop/lib/process.js';
import { freePort, waitServing } from '../../test/interop/lib/net.js';
import { run, tail } from '../../test/interop/lib/run.js';
import { startCluster } from '../../test/helpers/cluster.js';
import { KAFKA_JVM_PERFORMANCE_OPTS, clusterId, durabilityProps, type BrokerKind, type Durability } from './brokers.js';
import { consumerPerformance, producerPerformance } from './perf-tools.js';
import { cpuSeconds } from './proc.js';
import { recordSizeLabel, type Results } from './report.js';

/** Stock on both brokers: Kafka's defaults, which Fjord's keys share. */
const SESSION = { 'broker.session.timeout.ms': '9000', 'broker.heartbeat.interval.ms': '2000' };

export interface ClusterUnderTest {
  readonly kind: BrokerKind;
  readonly bootstrap: string;
  /** Pids of the live nodes, by node id. */
  pids(): Map<number, number>;
  kill(nodeId: number): Promise<void>;
  stop(): Promise<void>;
}

export async function startFjordCluster(durability: Durability): Promise<ClusterUnderTest> {
  const c = await startCluster({ nodes: 3, overrides: { ...SESSION, ...durabilityProps(durability) } });
  return {
    kind: 'fjord',
    bootstrap: c.bootstrap.join(','),
    pids: () => new Map(c.nodes.filter((n) => n.running?.process.pid !== undefined).map((n) => [n.nodeId, n.running!.process.pid!])),
    kill: (id) => c.node(id).kill(),
    stop: () => c.destroy(),
  };
}

export async function startKafkaCluster(durability: Durability): Promise<ClusterUnderTest> {
  const classpath = kafkaClasspath(KAFKA_VERSION);
  const dir = mkdtempSync(join(tmpdir(), 'fjord-bench-kafka-cluster-'));
  const ids = [1, 2, 3];
  const ports = await Promise.all(ids.map(() => freePort()));
  const controllerPorts = await Promise.all(ids.map(() => freePort()));
  const voters = ids.map((id, i) => `${id}@127.0.0.1:${controllerPorts[i]}`).join(',');
  const jvm = ['-Xmx1G', '-Xms1G', ...KAFKA_JVM_PERFORMANCE_OPTS, `-Dlog4j2.configurationFile=${LOG4J2_CONFIG}`, '-Dfjord.loglevel=WARN', '-cp', classpath];
  const cid = clusterId();
  const procs = new Map<number, ManagedProcess>();
  const stop = async (): Promise<void> => {
    await Promise.all([...procs.values()].map((p) => p.stop()));
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    for (const [i, id] of ids.entries()) {
      const props: Record<string, string> = {
        'process.roles': 'broker,controller',
        'node.id': String(id),
        'controller.quorum.voters': voters,
        listeners: `PLAINTEXT://127.0.0.1:${ports[i]},CONTROLLER://127.0.0.1:${controllerPorts[i]}`,
        'advertised.listeners': `PLAINTEXT://127.0.0.1:${ports[i]}`,
        'listener.security.protocol.map': 'PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT',
        'controller.listener.names': 'CONTROLLER',
        'inter.broker.listener.name': 'PLAINTEXT',
        'log.dirs': join(dir, `logs-${id}`),
        'metadata.log.dir': join(dir, `metadata-${id}`),
        'group.initial.rebalance.delay.ms': '0',
        ...SESSION,
        ...durabilityProps(durability),
      };
      const propsFile = join(dir, `server-${id}.properties`);
      writeFileSync(propsFile, Object.entries(props).map(([k, v]) => `${k}=${v}`).join('\n') + '\n');
      const format = await run('java', [...jvm, 'kafka.tools.StorageTool', 'format', '-t', cid, '-c', propsFile], { timeoutMs: 120_000 });
      if (format.code !== 0) throw new Error(`kafka-storage format failed (exit ${format.code}):\n${tail(format.stderr)}`);
      procs.set(id, new ManagedProcess(`kafka-${id}`, 'java', [...jvm, 'kafka.Kafka', propsFile], join(dir, `server-${id}.log`)));
    }
    // The voters elect a controller only once a majority is up, so wait for all three together.
    await Promise.all(ids.map((id, i) => waitServing('127.0.0.1', ports[i]!, 180_000, () => procs.get(id)!.deadReason())));
  } catch (e) {
    await stop();
    throw e;
  }
  return {
    kind: 'kafka',
    bootstrap: ports.map((p) => `127.0.0.1:${p}`).join(','),
    pids: () => new Map([...procs].filter(([, p]) => p.deadReason() === null && p.pid !== undefined).map(([id, p]) => [id, p.pid!])),
    async kill(id) {
      const p = procs.get(id);
      if (p?.pid !== undefined) process.kill(p.pid, 'SIGKILL');
      await p?.stop();
    },
    stop,
  };
}

const kafkaOf = (bootstrap: string): InstanceType<typeof Kafka> =>
  new Kafka({ clientId: 'bench-cluster', brokers: bootstrap.split(','), logLevel: logLevel.NOTHING, retry: { retries: 50, initialRetryTime: 50, maxRetryTime: 200 } });

/** An RF 3 topic with min.insync.replicas=2; `first` leads every partition when given. Returns the controller id. */
async function createRf3Topic(bootstrap: string, topic: string, partitions: number, first?: (controller: number) => number): Promise<number> {
  const admin = kafkaOf(bootstrap).admin();
  await admin.connect();
  try {
    const { controller } = await admin.describeCluster();
    const lead = first?.(controller ?? -1);
    const replicaAssignment = lead === undefined ? undefined : Array.from({ length: partitions }, (_, partition) => ({ partition, replicas: [lead, ...[1, 2, 3].filter((id) => id !== lead)] }));
    await admin
      .createTopics({ topics: [{ topic, ...(replicaAssignment ? { replicaAssignment } : { numPartitions: partitions, replicationFactor: 3 }), configEntries: [{ name: 'min.insync.replicas', value: '2' }] }], waitForLeaders: true, timeout: 120_000 })
      .catch(() => undefined);
    const deadline = Date.now() + 120_000;
    for (;;) {
      const md = await admin.fetchTopicMetadata({ topics: [topic] }).catch(() => null);
      const ps = md?.topics[0]?.partitions ?? [];
      if (ps.length === partitions && ps.every((p) => p.isr.length === 3 && p.leader >= 0 && (lead === undefined || p.leader === lead))) return controller ?? -1;
      if (Date.now() > deadline) throw new Error(`topic ${topic} not fully replicated after 120 s`);
      await new Promise((r) => setTimeout(r, 200));
    }
  } finally {
    await admin.disconnect();
  }
}

const sumCpu = (c: ClusterUnderTest): number => [...c.pids().values()].reduce((s, pid) => s + cpuSeconds(pid), 0);

/** SIGKILL of the failover topic's leader → first acknowledged acks=all produce, in ms. */
async function failoverMs(c: ClusterUnderTest): Promise<number> {
  const topic = 'failover';
  let leader = -1;
  await createRf3Topic(c.bootstrap, topic, 1, (controller) => (leader = [1, 2, 3].find((id) => id !== controller)!));
  const producer = kafkaOf(c.bootstrap).producer({ idempotent: true, maxInFlightRequests: 1, metadataMaxAge: 1000 });
  await producer.connect();
  try {
    for (let i = 0; i < 50; i++) await producer.send({ topic, acks: -1, messages: [{ value: 'warm' }] });
    let killedAt = 0;
    let firstAfter = 0;
    const sending = (async () => {
      while (firstAfter === 0) {
        try {
          await producer.send({ topic, acks: -1, messages: [{ value: 'x' }] });
          if (killedAt > 0) firstAfter = performance.now();
        } catch {
          // retries exhausted during the outage: send again at once
        }
      }
    })();
    await new Promise((r) => setTimeout(r, 500));
    killedAt = performance.now();
    await c.kill(leader);
    await sending;
    return firstAfter - killedAt;
  } finally {
    await producer.disconnect().catch(() => undefined);
  }
}

export async function clusterRows(c: ClusterUnderTest, produceMb: number, durability: Durability, results: Results): Promise<void> {
  const s = c.kind === 'fjord' ? 'fjord' : 'peer';
  for (const size of [100, 1024]) {
    const topic = `rf3-${size}`;
    await createRf3Topic(c.bootstrap, topic, 8);
    const records = Math.round((produceMb * 1e6) / size);
    const label = recordSizeLabel(size);
    let cpu0 = sumCpu(c);
    const p = await producerPerformance(c.bootstrap, { topic, records, recordSize: size, acks: 'all', compression: 'none', throughput: -1 });
    const mb = (records * size) / 1e6;
    results.add({ name: `3 nodes: produce ${label} acks=all RF 3 8p`, unit: 'rec/s', peer: 'kafka ×3', higherIsBetter: true, durability }, s, p.recordsPerSec, (sumCpu(c) - cpu0) / mb);
    cpu0 = sumCpu(c);
    const r = await consumerPerformance(c.bootstrap, topic, records);
    results.add({ name: `3 nodes: consume ${label} RF 3 8p (fetch.MB.sec)`, unit: 'MB/s', peer: 'kafka ×3', higherIsBetter: true, durability }, s, r.fetchMbPerSec, (sumCpu(c) - cpu0) / r.mb);
  }
  results.add({ name: '3 nodes: failover, leader SIGKILL → first acks=all produce (session timeout 9 s)', unit: 'ms', peer: 'kafka ×3', higherIsBetter: false, durability }, s, await failoverMs(c));
}
