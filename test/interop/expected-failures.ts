/**
 * Scenarios known to fail against Fjord, each with the reason. The harness asserts that each one
 * still fails; one that starts passing fails its test with "now passes, remove from the list", so
 * this list only ever shrinks as the node grows. Keys are `<client>/<scenario>`.
 */
const NODE_NOT_SERVING =
  'the Fjord node does not start and serve the Kafka protocol yet (bin/fjord.js start: broker node in progress)';

export const EXPECTED_FAILURES: Readonly<Record<string, string>> = {
  'java/cluster': NODE_NOT_SERVING,
  'java/produce-acks1-none': NODE_NOT_SERVING,
  'java/produce-acks0-gzip': NODE_NOT_SERVING,
  'java/produce-acksall-snappy': NODE_NOT_SERVING,
  'java/produce-idempotent-lz4': NODE_NOT_SERVING,
  'java/produce-idempotent-zstd': NODE_NOT_SERVING,
  'java/transactions': NODE_NOT_SERVING,
  'java/group-classic': NODE_NOT_SERVING,
  'java/group-consumer': NODE_NOT_SERVING,
  'java/admin': NODE_NOT_SERVING,
  'java-tools/kafka-topics': NODE_NOT_SERVING,
  'java-tools/console-producer-consumer': NODE_NOT_SERVING,
  'java-tools/kafka-consumer-groups': NODE_NOT_SERVING,
  'java-tools/perf-test': NODE_NOT_SERVING,
  'python/confluent-kafka': NODE_NOT_SERVING,
  'python/kafka-python': NODE_NOT_SERVING,
  'kcat/produce-consume': NODE_NOT_SERVING,
  'kcat/metadata': NODE_NOT_SERVING,
};

/** librdkafka test numbers (from the allow-list in librdkafka-tests.ts) expected to fail against Fjord. */
export const LIBRDKAFKA_EXPECTED_FAILURES: Readonly<Record<string, string>> = {
  '*': NODE_NOT_SERVING,
};
