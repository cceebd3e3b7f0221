/**
 * Starts Apache Kafka as a mirror source with the interop harness's launcher, trying a second
 * time when the first start fails: the launcher's random cluster id can begin with '-', which
 * kafka-storage's argument parser takes for an option (about one start in 64).
 */
import { Kafka, logLevel } from 'kafkajs';
import { startKafkaBroker, type KafkaBroker, type KafkaBrokerOptions } from '../../interop/kafka-broker.js';

export async function startKafkaSource(opts: KafkaBrokerOptions = {}): Promise<KafkaBroker> {
  try {
    return await startKafkaBroker(opts);
  } catch {
    return startKafkaBroker(opts);
  }
}

export type { KafkaBroker };

/** Creates a one-partition topic on the source and writes `values` to it with acks=all. */
export async function createSourceTopic(bootstrap: string, topic: string, values: readonly string[]): Promise<void> {
  const client = new Kafka({ clientId: `source-${topic}`, brokers: [bootstrap], logLevel: logLevel.NOTHING });
  const admin = client.admin();
  await admin.connect();
  await admin.createTopics({ topics: [{ topic, numPartitions: 1, replicationFactor: 1 }], waitForLeaders: true });
  await admin.disconnect();
  const producer = client.producer({ allowAutoTopicCreation: false });
  await producer.connect();
  await producer.send({ topic, acks: -1, messages: values.map((value) => ({ partition: 0, value })) });
  await producer.disconnect();
}
