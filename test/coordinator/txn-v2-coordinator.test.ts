/**
 * The transaction coordinator's transactions V2 (KIP-890 part 2) edges that a client reaches only
 * after tens of thousands of transactions: the epoch bump of EndTxn v5 reaching 32767 moves the
 * producer to a fresh producer id, the markers of that last transaction carry the old id at epoch
 * 32767, a retry of that EndTxn is answered with the new id, and all of it survives a reload of
 * __transaction_state (TransactionLogValue v1).
 */
import { afterEach, expect, it } from 'vitest';
import { GroupCoordinator } from '../../src/coordinator/group-coordinator.js';
import { TxnCoordinator } from '../../src/coordinator/txn-coordinator.js';
import { buildEndTxnMarkerBatch } from '../../src/protocol/control-records.js';
import { ErrorCode } from '../../src/protocol/generated/errors.js';
import { buildRecordBatch } from '../../src/protocol/records.js';
import { testHost, type TestHost } from './harness.js';
import { TempLogs } from './logs.js';

const temps: TempLogs[] = [];
afterEach(async () => {
  for (const t of temps.splice(0)) await t.destroy();
});

const CFG = { 'offsets.topic.num.partitions': '2', 'transaction.state.log.num.partitions': '2' };

async function setup(t: TempLogs, reuse: boolean, nextId: { v: number }) {
  const base = testHost(t.openLog, CFG, reuse ? { __consumer_offsets: 2, __transaction_state: 2 } : {}, { orders: 1 });
  const markers: { producerId: number; epoch: number; commit: boolean }[] = [];
  const host: TestHost = {
    ...base,
    allocateProducerId: async () => nextId.v++,
    async writeTxnMarker(topic, partition, m) {
      const log = await t.raw(topic, partition);
      const r = await log.appendAsLeader(buildEndTxnMarkerBatch({ ...m, timestamp: base.clock.now() }), 0, { requiredAcks: -1, origin: 'coordinator' });
      if (r.errorCode === 0) markers.push({ producerId: m.producerId, epoch: m.producerEpoch, commit: m.commit });
      return r.errorCode;
    },
  };
  const gc = await GroupCoordinator.start(host);
  const tc = await TxnCoordinator.start(host, gc);
  return { gc, tc, markers };
}

async function produce(t: TempLogs, producerId: number, producerEpoch: number, seq: number): Promise<number> {
  const log = await t.raw('orders', 0);
  const batch = buildRecordBatch({ producerId, producerEpoch, baseSequence: seq, isTransactional: true, records: [{ value: Buffer.from(`${producerEpoch}/${seq}`) }] });
  return (await log.appendAsLeader(batch, 0, { requiredAcks: -1 })).errorCode;
}

it('moves a V2 producer to a fresh id when the bumped epoch reaches 32767, and keeps that across a reload', async () => {
  const t = new TempLogs();
  temps.push(t);
  const ids = { v: 1000 };
  const first = await setup(t, false, ids);
  const init = await first.tc.initProducerId('tx-v2', 60000, -1, -1, 5);
  expect(init).toEqual({ errorCode: 0, producerId: 1000, producerEpoch: 0 });
  // Stand in for 32765 earlier V2 transactions: the id's epoch as they would have left it.
  await first.tc.runtime.write('tx-v2', (s) => s.put({ ...s.txns.get('tx-v2')!, producerEpoch: 32765 }, 0));

  expect((await first.tc.addPartitions('tx-v2', 1000, 32765, [{ topic: 'orders', partition: 0 }], 5, 2)).get('orders\u00000')).toBe(0);
  expect(await produce(t, 1000, 32765, 0)).toBe(0);
  expect(await first.tc.endTxn('tx-v2', 1000, 32765, true, 5)).toEqual({ errorCode: 0, producerId: 1000, producerEpoch: 32766 });

  expect((await first.tc.addPartitions('tx-v2', 1000, 32766, [{ topic: 'orders', partition: 0 }], 5, 2)).get('orders\u00000')).toBe(0);
  expect(await produce(t, 1000, 32766, 0)).toBe(0);
  expect(await first.tc.endTxn('tx-v2', 1000, 32766, true, 5)).toEqual({ errorCode: 0, producerId: 1001, producerEpoch: 0 });
  expect(first.markers).toEqual([
    { producerId: 1000, epoch: 32766, commit: true },
    { producerId: 1000, epoch: 32767, commit: true },
  ]);
  // The old id's last epoch is fenced on the data partition and at the coordinator.
  expect(await produce(t, 1000, 32766, 1)).toBe(ErrorCode.INVALID_PRODUCER_EPOCH);
  expect((await first.tc.addPartitions('tx-v2', 1000, 32766, [{ topic: 'orders', partition: 0 }], 5, 2)).get('orders\u00000')).toBe(ErrorCode.INVALID_PRODUCER_ID_MAPPING);
  // A retry of the EndTxn that rotated the id is answered with the new one.
  expect(await first.tc.endTxn('tx-v2', 1000, 32766, true, 5)).toEqual({ errorCode: 0, producerId: 1001, producerEpoch: 0 });
  await first.tc.close();
  await first.gc.close();

  const second = await setup(t, true, ids);
  const m = await second.tc.describe('tx-v2');
  expect({ producerId: m!.producerId, producerEpoch: m!.producerEpoch, state: m!.state, clientTransactionVersion: m!.clientTransactionVersion }).toEqual({ producerId: 1001, producerEpoch: 0, state: 4, clientTransactionVersion: 2 });
  expect(await second.tc.endTxn('tx-v2', 1000, 32766, true, 5)).toEqual({ errorCode: 0, producerId: 1001, producerEpoch: 0 });
  expect(await second.tc.endTxn('tx-v2', 1000, 32766, false, 5)).toMatchObject({ errorCode: ErrorCode.INVALID_TXN_STATE });
  // The new id carries on: a transaction at epoch 0, ended at epoch 1.
  expect((await second.tc.addPartitions('tx-v2', 1001, 0, [{ topic: 'orders', partition: 0 }], 5, 2)).get('orders\u00000')).toBe(0);
  expect(await produce(t, 1001, 0, 0)).toBe(0);
  expect(await second.tc.endTxn('tx-v2', 1001, 0, false, 5)).toEqual({ errorCode: 0, producerId: 1001, producerEpoch: 1 });
  expect(second.markers).toEqual([{ producerId: 1001, epoch: 1, commit: false }]);
  await second.tc.close();
  await second.gc.close();
});
