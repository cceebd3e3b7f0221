/**
 * Transactions V2 (KIP-890 part 2) over raw requests, against Apache Kafka 4.4.0 and against
 * Fjord: the exchange of test/broker/txn-v2-wire.ts (Produce v12 and TxnOffsetCommit v5 without
 * AddPartitionsToTxn/AddOffsetsToTxn, EndTxn v5 epoch bumps, the old epoch fenced, retries and
 * empty aborts). Kafka's answers are the expected ones; Fjord's must equal them.
 */
import { afterAll, beforeAll, describe } from 'vitest';
import { WireClient } from '../broker/wire.js';
import { checkTxnV2, runTxnV2, type TxnV2Observation } from '../broker/txn-v2-wire.js';
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

const scenario: Scenario<TxnV2Observation> = {
  id: 'raw/kafka-4.4-transactions-v2',
  timeoutMs: 120_000,
  async run(target, topic) {
    const c = await WireClient.connect(target.port);
    try {
      return await runTxnV2(c, topic);
    } finally {
      c.close();
    }
  },
  check: checkTxnV2,
};

describe(`Kafka ${KAFKA_NEWEST_VERSION} transactions V2 (raw protocol)`, () => {
  differentialTests(scenario, kafka44, fjord);
});
