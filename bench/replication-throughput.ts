// Produce throughput of a replicated partition against an unreplicated one, on one three-node
// Fjord cluster (one etcd, three processes on loopback) in the same run: acks=all to a topic with
// replication factor 3 (min.insync.replicas=2), then to one with replication factor 1, same
// producer, same batches. Prints both rates and the ratio RF3 / RF1. Then the failover time:
// the RF 3 partition's leader is SIGKILLed and the time until the first acks=all produce succeeds
// again (on the new leader) is printed.
// Run: node bench/run.mjs bench/replication-throughput.ts [--batches=200] [--batch=100] [--size=512]
import { performance } from 'node:perf_hooks';
import { Kafka, logLevel, type Producer } from 'kafkajs';
import { startCluster } from '../test/helpers/cluster.js';

const arg = (name: string, dflt: number): number => {
  const a = process.argv.find((x) => x.startsWith(`--${name}=`));
  return a === undefined ? dflt : Number(a.slice(name.length + 3));
};
const BATCHES = arg('batches', 200);
const BATCH = arg('batch', 100);
const SIZE = arg('size', 512);

async function rate(producer: Producer, topic: string): Promise<number> {
  const value = Buffer.alloc(SIZE, 'x');
  const messages = Array.from({ length: BATCH }, (_, i) => ({ key: String(i), value }));
  // Warm-up: connections, metadata, producer id.
  await producer.send({ topic, acks: -1, messages });
  const t0 = performance.now();
  for (let i = 0; i < BATCHES; i++) await producer.send({ topic, acks: -1, messages });
  return (BATCHES * BATCH) / ((performance.now() - t0) / 1000);
}

const cluster = await startCluster({ nodes: 3, overrides: { 'replica.fetch.wait.max.ms': 500, 'replica.lag.time.max.ms': 10_000 } });
try {
  const kafka = new Kafka({ clientId: 'bench-replication', brokers: cluster.bootstrap, logLevel: logLevel.NOTHING, retry: { retries: 50, initialRetryTime: 50, maxRetryTime: 500 } });
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({
    topics: [
      { topic: 'rf3', numPartitions: 1, replicationFactor: 3, configEntries: [{ name: 'min.insync.replicas', value: '2' }] },
      { topic: 'rf1', numPartitions: 1, replicationFactor: 1 },
    ],
    waitForLeaders: true,
  });
  const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
  await producer.connect();
  const rf3 = await rate(producer, 'rf3');
  const rf1 = await rate(producer, 'rf1');
  console.log(`produce acks=all, ${BATCH} x ${SIZE} B per request, ${BATCHES} requests`);
  console.log(`  RF 3: ${rf3.toFixed(0)} records/s`);
  console.log(`  RF 1: ${rf1.toFixed(0)} records/s`);
  console.log(`  ratio RF3/RF1: ${(rf3 / rf1).toFixed(2)}`);

  const md = await admin.fetchTopicMetadata({ topics: ['rf3'] });
  const leader = md.topics[0]!.partitions[0]!.leader;
  await admin.disconnect();
  const t0 = performance.now();
  await cluster.node(leader).kill();
  await producer.send({ topic: 'rf3', acks: -1, messages: [{ value: 'after failover' }] });
  console.log(`failover (leader SIGKILL -> first acks=all produce acknowledged): ${(performance.now() - t0).toFixed(0)} ms (broker.session.timeout.ms 3000)`);
  await producer.disconnect();
} finally {
  await cluster.destroy();
}
