import { afterEach, describe, expect, it } from 'vitest';
import { GroupCoordinator } from '../../src/coordinator/group-coordinator.js';
import { TxnCoordinator } from '../../src/coordinator/txn-coordinator.js';
import { buildEndTxnMarkerBatch, controlTypeOf } from '../../src/protocol/control-records.js';
import { buildRecordBatch } from '../../src/protocol/records.js';
import { RecordBatchView } from '../../src/protocol/record-batch.js';
import { testHost } from './harness.js';
import type { TestHost } from './harness.js';
import { TempLogs } from './logs.js';
import { waitFor } from '../helpers/wait.js';
import { ErrorCode } from '../../src/protocol/generated/errors.js';

const temps: TempLogs[] = [];
afterEach(async () => {
  for (const t of temps.splice(0)) await t.destroy();
});

const CFG = { 'offsets.topic.num.partitions': '2', 'transaction.state.log.num.partitions': '2' };

async function setup(reuse?: TempLogs) {
  const t = reuse ?? new TempLogs();
  if (!reuse) temps.push(t);
  const base = testHost(t.openLog, CFG, reuse ? { __consumer_offsets: 2, __transaction_state: 2 } : {}, { orders: 2 });
  let nextId = 1000;
  const markers: { topic: string; partition: number; commit: boolean; epoch: number }[] = [];
  const host: TestHost = {
    ...base,
    allocateProducerId: async () => nextId++,
    async writeTxnMarker(topic, partition, m) {
      const log = await t.raw(topic, partition);
      const r = await log.appendAsLeader(buildEndTxnMarkerBatch({ ...m, timestamp: base.clock.now() }), 0, { requiredAcks: -1, origin: 'coordinator' });
      if (r.errorCode === 0) markers.push({ topic, partition, commit: m.commit, epoch: m.producerEpoch });
      return r.errorCode;
    },
  };
  const gc = await GroupCoordinator.start(host);
  const tc = await TxnCoordinator.start(host, gc);
  return { t, host, gc, tc, markers };
}

/** A transactional batch from the producer, appended to orders-<p> as a client's Produce would. */
async function produce(t: TempLogs, p: number, producerId: number, producerEpoch: number, seq: number, value: string) {
  const log = await t.raw('orders', p);
  const batch = buildRecordBatch({ producerId, producerEpoch, baseSequence: seq, isTransactional: true, records: [{ value: Buffer.from(value) }] });
  const r = await log.appendAsLeader(batch, 0, { requiredAcks: -1 });
  expect(r.errorCode).toBe(0);
}

describe('transaction coordinator', () => {
  it('commits: markers on data and offsets partitions, offsets become visible, LSO moves', async () => {
    const { t, gc, tc, markers } = await setup();
    const init = await tc.initProducerId('tx-1', 60000, -1, -1, 4);
    expect(init).toEqual({ errorCode: 0, producerId: 1000, producerEpoch: 0 });
    const again = await tc.initProducerId('tx-1', 60000, -1, -1, 4);
    expect(again).toEqual({ errorCode: 0, producerId: 1000, producerEpoch: 1 });
    const { producerId: pid, producerEpoch: epoch } = again;

    const added = await tc.addPartitions('tx-1', pid, epoch, [{ topic: 'orders', partition: 0 }, { topic: 'orders', partition: 1 }], 3);
    expect([...added.values()]).toEqual([0, 0]);
    await produce(t, 0, pid, epoch, 0, 'a');
    await produce(t, 1, pid, epoch, 0, 'b');
    expect((await t.raw('orders', 0)).lastStableOffset).toBe(0); // the open transaction holds the LSO
    expect(await tc.addOffsets('tx-1', pid, epoch, 'g', 3)).toBe(0);
    const committed = await gc.txnCommitOffsets({ groupId: 'g', producerId: pid, producerEpoch: epoch, generationIdOrMemberEpoch: -1, memberId: '', groupInstanceId: null, topics: [{ name: 'src', partitions: [{ partitionIndex: 0, committedOffset: 7n, committedLeaderEpoch: -1, committedMetadata: null }] }] });
    expect(committed[0]!.partitions[0]!.errorCode).toBe(0);
    expect((await gc.fetchOffsets('g', null)).topics).toEqual([]);
    expect((await gc.fetchOffsets('g', [{ name: 'src', partitionIndexes: [0] }], null, -1, true)).topics[0]!.partitions[0]!.errorCode).toBe(88);

    expect((await tc.endTxn('tx-1', pid, epoch, true, 3)).errorCode).toBe(0);
    expect(markers.map((m) => [m.topic, m.partition, m.commit])).toEqual(expect.arrayContaining([['orders', 0, true], ['orders', 1, true]]));
    expect((await gc.fetchOffsets('g', null)).topics[0]!.partitions[0]!.committedOffset).toBe(7n);
    const log0 = await t.raw('orders', 0);
    expect(log0.lastStableOffset).toBe(2);
    const tail = await log0.readToBuffer({ fetchOffset: 1, maxOffset: 2, maxBytes: 1 << 16, minOneMessage: true });
    expect(controlTypeOf(new RecordBatchView(tail.records))).toBe(1); // COMMIT
    expect((await tc.describe('tx-1'))!.state).toBe(4);
    // A retried EndTxn of a completed commit succeeds; an abort of it does not.
    expect((await tc.endTxn('tx-1', pid, epoch, true, 3)).errorCode).toBe(0);
    expect((await tc.endTxn('tx-1', pid, epoch, false, 3)).errorCode).toBe(ErrorCode.INVALID_TXN_STATE);
    await tc.close();
    await gc.close();
  });

  it('aborts: pending offsets are dropped; a new epoch fences the old producer', async () => {
    const { t, gc, tc, markers } = await setup();
    const { producerId: pid, producerEpoch: epoch } = await tc.initProducerId('tx-2', 60000, -1, -1, 4);
    await tc.addPartitions('tx-2', pid, epoch, [{ topic: 'orders', partition: 0 }], 3);
    await produce(t, 0, pid, epoch, 0, 'x');
    await tc.addOffsets('tx-2', pid, epoch, 'g2', 3);
    await gc.txnCommitOffsets({ groupId: 'g2', producerId: pid, producerEpoch: epoch, generationIdOrMemberEpoch: -1, memberId: '', groupInstanceId: null, topics: [{ name: 'src', partitions: [{ partitionIndex: 0, committedOffset: 9n, committedLeaderEpoch: -1, committedMetadata: null }] }] });
    expect((await tc.endTxn('tx-2', pid, epoch, false, 3)).errorCode).toBe(0);
    expect(markers).toEqual([{ topic: 'orders', partition: 0, commit: false, epoch }]);
    expect((await gc.fetchOffsets('g2', null)).topics).toEqual([]);

    // A second producer with the same transactional id fences the first.
    const next = await tc.initProducerId('tx-2', 60000, -1, -1, 4);
    expect(next.producerEpoch).toBe(epoch + 1);
    const stale = await tc.addPartitions('tx-2', pid, epoch, [{ topic: 'orders', partition: 1 }], 3);
    expect([...stale.values()]).toEqual([ErrorCode.PRODUCER_FENCED]);
    expect([...(await tc.addPartitions('tx-2', 4242, 0, [{ topic: 'orders', partition: 1 }], 3)).values()]).toEqual([ErrorCode.INVALID_PRODUCER_ID_MAPPING]);
    expect([...(await tc.addPartitions('tx-2', pid, next.producerEpoch, [{ topic: 'nope', partition: 0 }, { topic: 'orders', partition: 0 }], 3)).values()]).toEqual([ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, ErrorCode.OPERATION_NOT_ATTEMPTED]);
    expect((await tc.initProducerId('tx-3', 0, -1, -1, 4)).errorCode).toBe(ErrorCode.INVALID_TRANSACTION_TIMEOUT);
    await tc.close();
    await gc.close();
  });

  it('aborts a transaction that outlives its timeout, and an InitProducerId over an ongoing one', async () => {
    const { host, t, gc, tc, markers } = await setup();
    const a = await tc.initProducerId('slow', 10000, -1, -1, 4);
    await tc.addPartitions('slow', a.producerId, a.producerEpoch, [{ topic: 'orders', partition: 1 }], 3);
    await produce(t, 1, a.producerId, a.producerEpoch, 0, 's');
    await host.manual.advance(10001);
    await tc.runtime.idle();
    await waitFor('the timed-out transaction to reach CompleteAbort', async () => (await tc.describe('slow'))?.state === 5, 30_000, 20);
    const m = (await tc.describe('slow'))!;
    expect(m.state).toBe(5); // CompleteAbort
    expect(m.producerEpoch).toBe(a.producerEpoch + 1);
    expect(markers).toEqual([{ topic: 'orders', partition: 1, commit: false, epoch: a.producerEpoch + 1 }]);
    expect([...(await tc.addPartitions('slow', a.producerId, a.producerEpoch, [{ topic: 'orders', partition: 1 }], 3)).values()]).toEqual([ErrorCode.PRODUCER_FENCED]);

    const b = await tc.initProducerId('busy', 60000, -1, -1, 4);
    await tc.addPartitions('busy', b.producerId, b.producerEpoch, [{ topic: 'orders', partition: 0 }], 3);
    expect((await tc.initProducerId('busy', 60000, -1, -1, 4)).errorCode).toBe(ErrorCode.CONCURRENT_TRANSACTIONS);
    const retried = await tc.initProducerId('busy', 60000, -1, -1, 4);
    expect(retried.errorCode).toBe(0);
    expect(retried.producerEpoch).toBe(b.producerEpoch + 2);
    const list = await tc.listTransactions([], [], -1);
    expect(list.map((x) => [x.transactionalId, x.state])).toEqual([['busy', 'Empty'], ['slow', 'CompleteAbort']]);
    await tc.close();
    await gc.close();

    // Replay after a restart restores the same transactional state.
    await t.closeAll();
    const host2 = testHost(t.openLog, CFG, { __transaction_state: 2 }, { orders: 2 });
    const tc2 = await TxnCoordinator.start(host2, null);
    expect(await tc2.listTransactions([], [], -1)).toEqual(list);
    expect((await tc2.describe('busy'))!.producerEpoch).toBe(b.producerEpoch + 2);
    await tc2.close();
  });

  it('transactional offsets are in the log: pending ones survive a restart and commit afterwards', async () => {
    const first = await setup();
    const { producerId: pid, producerEpoch: epoch } = await first.tc.initProducerId('tx-d', 60000, -1, -1, 4);
    await first.tc.addPartitions('tx-d', pid, epoch, [{ topic: 'orders', partition: 0 }], 3);
    await produce(first.t, 0, pid, epoch, 0, 'd');
    await first.tc.addOffsets('tx-d', pid, epoch, 'gd', 3);
    await first.gc.txnCommitOffsets({ groupId: 'gd', producerId: pid, producerEpoch: epoch, generationIdOrMemberEpoch: -1, memberId: '', groupInstanceId: null, topics: [{ name: 'src', partitions: [{ partitionIndex: 3, committedOffset: 11n, committedLeaderEpoch: -1, committedMetadata: 'x' }] }] });
    await first.tc.close();
    await first.gc.close();
    await first.t.closeAll();

    const second = await setup(first.t);
    const unstable = await second.gc.fetchOffsets('gd', [{ name: 'src', partitionIndexes: [3] }], null, -1, true);
    expect(unstable.topics[0]!.partitions[0]!.errorCode).toBe(88);
    expect((await second.tc.describe('tx-d'))!.state).toBe(1); // still Ongoing
    expect((await second.tc.endTxn('tx-d', pid, epoch, true, 3)).errorCode).toBe(0);
    const after = await second.gc.fetchOffsets('gd', null, null, -1, true);
    expect(after.topics[0]!.partitions[0]).toMatchObject({ partitionIndex: 3, committedOffset: 11n, metadata: 'x', errorCode: 0 });
    await second.tc.close();
    await second.gc.close();
    await first.t.closeAll();

    // And once more from the log alone: the committed offset replays as committed.
    const third = await setup(first.t);
    expect((await third.gc.fetchOffsets('gd', null)).topics[0]!.partitions[0]!.committedOffset).toBe(11n);
    await third.tc.close();
    await third.gc.close();
  });

  it('forgets transactional ids idle longer than transactional.id.expiration.ms', async () => {
    const t = new TempLogs();
    temps.push(t);
    const host = { ...testHost(t.openLog, { ...CFG, 'transactional.id.expiration.ms': '60000', 'transaction.remove.expired.transaction.cleanup.interval.ms': '10000' }, {}, { orders: 2 }), allocateProducerId: async () => 5, writeTxnMarker: async () => 0 };
    const tc = await TxnCoordinator.start(host, null);
    await tc.initProducerId('idle', 30000, -1, -1, 4);
    await tc.initProducerId('busy', 30000, -1, -1, 4);
    await tc.addPartitions('busy', 5, 0, [{ topic: 'orders', partition: 0 }], 3);
    await host.manual.advance(40000);
    await tc.runtime.idle();
    expect(await tc.describe('idle')).toBeDefined();
    await host.manual.advance(30000);
    await tc.runtime.idle();
    expect(await tc.describe('idle')).toBeUndefined();
    expect((await tc.describe('busy'))!.transactionalId).toBe('busy'); // aborted by its timeout, updated since
    await tc.close();
  });
});
