/**
 * Starts Apache Kafka as a mirror source with the interop harness's launcher, trying a second
 * time when the first start fails: the launcher's random cluster id can begin with '-', which
 * kafka-storage's argument parser takes for an option (about one start in 64).
 */
import { startKafkaBroker, type KafkaBroker, type KafkaBrokerOptions } from '../../interop/kafka-broker.js';

export async function startKafkaSource(opts: KafkaBrokerOptions = {}): Promise<KafkaBroker> {
  try {
    return await startKafkaBroker(opts);
  } catch {
    return startKafkaBroker(opts);
  }
}

export type { KafkaBroker };
