/**
 * Produce and consume throughput over SASL_SSL (SCRAM-SHA-512, TLS 1.3) beside PLAINTEXT on one
 * in-process node, with kafkajs as the client: the same records, the same batch sizes, one
 * listener after the other. Prints MB/s for each and the SASL_SSL / PLAINTEXT ratio.
 */
import { Kafka, logLevel, type KafkaConfig } from 'kafkajs';
import { startSecureNode } from '../test/server/secure-node.js';
import { makeTestPki } from '../test/server/tls-fixtures.js';
import { addScramUser } from '../test/auth/sasl-helpers.js';

const BATCHES = Number(process.env['SECURITY_BENCH_BATCHES'] ?? 200);
const PER_BATCH = 100;
const VALUE = Buffer.alloc(1000, 'x');
const MB = (BATCHES * PER_BATCH * VALUE.length) / 1e6;

async function measure(config: KafkaConfig, topic: string): Promise<{ produce: number; consume: number }> {
  const kafka = new Kafka({ ...config, logLevel: logLevel.NOTHING });
  const producer = kafka.producer({ allowAutoTopicCreation: true });
  await producer.connect();
  const messages = Array.from({ length: PER_BATCH }, () => ({ value: VALUE }));
  await producer.send({ topic, messages: [{ value: 'warm-up' }] });
  const t = process.hrtime.bigint();
  for (let i = 0; i < BATCHES; i++) await producer.send({ topic, acks: 1, messages });
  const produceS = Number(process.hrtime.bigint() - t) / 1e9;
  await producer.disconnect();
  const consumer = kafka.consumer({ groupId: `bench-${topic}`, maxBytes: 10 * 1024 * 1024 });
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  const total = BATCHES * PER_BATCH + 1;
  let seen = 0;
  // Timed from the first batch: the group join (and, the first time, __consumer_offsets) is not throughput.
  let first: bigint | null = null;
  let firstCount = 0;
  await new Promise<void>((resolve, reject) => {
    consumer.run({ eachBatch: async ({ batch }) => {
      if (first === null) {
        first = process.hrtime.bigint();
        firstCount = batch.messages.length;
      }
      seen += batch.messages.length;
      if (seen >= total) resolve();
    } }).catch(reject);
  });
  const consumeS = Number(process.hrtime.bigint() - (first ?? process.hrtime.bigint())) / 1e9;
  await consumer.disconnect();
  const consumedMb = ((total - firstCount) * VALUE.length) / 1e6;
  return { produce: MB / produceS, consume: consumedMb / consumeS };
}

const pki = makeTestPki();
const node = await startSecureNode({
  listeners: 'PLAINTEXT://127.0.0.1:0,SASL_SSL://127.0.0.1:0',
  'sasl.enabled.mechanisms': 'SCRAM-SHA-512',
  'ssl.keystore.type': 'PEM',
  'ssl.keystore.location': pki.server.pemFile,
});
try {
  await addScramUser(node.port('PLAINTEXT'), 'bench', 'bench-secret', 2);
  const plainConfig: KafkaConfig = { clientId: 'bench', brokers: [`127.0.0.1:${node.port('PLAINTEXT')}`] };
  const secureConfig: KafkaConfig = {
    clientId: 'bench',
    brokers: [`127.0.0.1:${node.port('SASL_SSL')}`],
    ssl: { ca: [pki.caPem], servername: 'localhost' },
    sasl: { mechanism: 'scram-sha-512', username: 'bench', password: 'bench-secret' },
  };
  // A first round of each warms the node (JIT, first segments, __consumer_offsets); the second is reported.
  await measure(plainConfig, 'warm-plaintext');
  await measure(secureConfig, 'warm-sasl-ssl');
  const plain = await measure(plainConfig, 'bench-plaintext');
  const secure = await measure(secureConfig, 'bench-sasl-ssl');
  const f = (n: number): string => n.toFixed(1).padStart(7);
  console.log(`security-throughput: ${MB.toFixed(0)} MB of 1 KB records, kafkajs, one node`);
  console.log(`  produce  PLAINTEXT ${f(plain.produce)} MB/s   SASL_SSL ${f(secure.produce)} MB/s   ratio ${(secure.produce / plain.produce).toFixed(2)}`);
  console.log(`  consume  PLAINTEXT ${f(plain.consume)} MB/s   SASL_SSL ${f(secure.consume)} MB/s   ratio ${(secure.consume / plain.consume).toFixed(2)}`);
} finally {
  await node.close();
  pki.cleanup();
}
