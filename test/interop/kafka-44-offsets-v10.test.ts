/**
 * OffsetCommit v10 and OffsetFetch v10 (topics by id), over raw requests, against Apache Kafka
 * 4.4.0 and against Fjord: the exchange of test/broker/offsets-v10-wire.ts. Kafka's answers are
 * the expected ones; Fjord's must equal them.
 */
import { afterAll, beforeAll, describe } from 'vitest';
import { WireClient } from '../broker/wire.js';
import { checkOffsetsV10, runOffsetsV10, type OffsetsV10Observation } from '../broker/offsets-v10-wire.js';
import { startKafkaBroker, type KafkaBroker } from './kafka-broker.js';
import { KAFKA_NEWEST_VERSION } from './lib/paths.js';
import { differentialTests, useFjordNode, type Scenario } from './lib/scenario.js';
import type { Target } from './lib/target.js';

let kafka: KafkaBroker | undefined;
beforeAll(async () => {
  kafka = await startKafkaBroker({ version: KAFKA_NEWEST_VERSION });
}, 180_000);
afterAll(async () => {
  await kafka?.stop();
});
const kafka44 = (): Target => {
  if (kafka === undefined) throw new Error(`Apache Kafka ${KAFKA_NEWEST_VERSION} did not start`);
  return kafka;
};
const fjord = useFjordNode();

const scenario: Scenario<OffsetsV10Observation> = {
  id: 'raw/kafka-4.4-offsets-v10',
  timeoutMs: 90_000,
  async run(target, topic) {
    const c = await WireClient.connect(target.port);
    try {
      return await runOffsetsV10(c, topic);
    } finally {
      c.close();
    }
  },
  check: checkOffsetsV10,
};

describe(`Kafka ${KAFKA_NEWEST_VERSION} OffsetCommit/OffsetFetch v10 (raw protocol)`, () => {
  differentialTests(scenario, kafka44, fjord);
});
