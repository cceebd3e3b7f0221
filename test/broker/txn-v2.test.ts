/**
 * Transactions V2 (KIP-890 part 2) against a real node over raw requests: transaction.version
 * finalized at 2, Produce v12 and TxnOffsetCommit v5 adding partitions without
 * AddPartitionsToTxn/AddOffsetsToTxn, EndTxn v5 bumping and returning the epoch, the old epoch
 * fenced (INVALID_PRODUCER_EPOCH) once the markers carry the new one, and the V2 retry of an
 * EndTxn answered. The same exchange runs against Apache Kafka 4.4 in
 * test/interop/kafka-44-protocol.test.ts.
 */
import { afterAll, beforeAll, it } from 'vitest';
import { startNode, type RunningNode } from '../helpers/node.js';
import { checkTxnV2, runTxnV2 } from './txn-v2-wire.js';
import { WireClient } from './wire.js';

let node: RunningNode;
beforeAll(async () => {
  node = await startNode({ overrides: { 'num.partitions': 1, 'transaction.state.log.num.partitions': 2, 'offsets.topic.num.partitions': 2 } });
}, 120_000);
afterAll(async () => {
  await node?.destroy();
});

it('runs V2 transactions: implicit partitions, epoch bump per EndTxn, old epoch fenced', async () => {
  const c = await WireClient.connect(node.port);
  try {
    checkTxnV2(await runTxnV2(c, 'txn-v2'));
  } finally {
    c.close();
  }
}, 60_000);
