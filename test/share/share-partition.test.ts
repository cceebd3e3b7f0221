/**
 * The share-partition state machine (share-partition.ts) on record batches built as the log
 * stores them: control batches leave flight at once, gaps between batches are archived, the
 * in-flight window stops at `max.record.locks`, lock expiry releases (and archives at the
 * delivery count limit), and persisted batches restore the same state.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { buildEndTxnMarkerBatch } from '../../src/protocol/control-records.js';
import { buildRecordBatch } from '../../src/protocol/records.js';
import { RecordState, SharePartition } from '../../src/share/share-partition.js';

const batch = (baseOffset: number, n: number): Buffer => buildRecordBatch({ baseOffset, records: Array.from({ length: n }, (_, i) => ({ value: Buffer.from(`r${baseOffset + i}`) })) });
const limits = { lockDurationMs: () => 1000, deliveryCountLimit: () => 2 };

afterEach(() => {
  vi.useRealTimers();
});

describe('SharePartition', () => {
  it('archives control batches and gaps, and never acquires past the window', () => {
    const marker = buildEndTxnMarkerBatch({ baseOffset: 3, commit: true, producerId: 7, producerEpoch: 0, coordinatorEpoch: 0 });
    // 0-2 data, 3 a commit marker, 4 absent (compacted away), 5-6 data.
    const log = Buffer.concat([batch(0, 3), marker, batch(5, 2)]);
    const sp = new SharePartition(0, 100, limits);
    const got = sp.acquire('m', log, 0, 7, 500, false);
    expect(got.ranges.map((r) => [r.firstOffset, r.lastOffset, r.deliveryCount])).toEqual([
      [0n, 2n, 1],
      [5n, 6n, 1],
    ]);
    expect(got.records.equals(log)).toBe(true);
    expect(sp.stateOf(3)?.state).toBe(RecordState.ARCHIVED);
    expect(sp.stateOf(4)?.state).toBe(RecordState.ARCHIVED);
    expect(sp.endOffset).toBe(7);

    const small = new SharePartition(0, 100, limits);
    const wide = Buffer.concat([batch(0, 60), batch(60, 60)]);
    // Only 100 records may be in flight: the second batch is acquired up to offset 99.
    const first = small.acquire('m', wide, 0, 120, 500, false);
    expect(first.count).toBe(100);
    expect(first.ranges).toEqual([{ firstOffset: 0n, lastOffset: 99n, deliveryCount: 1 }]);
    // The batch the window ends in is returned too: its first 40 records are acquired.
    expect(first.records.equals(wide)).toBe(true);
    expect(small.canAcquire(120)).toBe(false);
  });

  it('releases on lock expiry, archives at the delivery count limit, and moves the start offset past settled records', () => {
    vi.useFakeTimers();
    const log = batch(0, 4);
    const sp = new SharePartition(0, 100, limits);
    sp.acquire('m', log, 0, 4, 500, false);
    expect(sp.acknowledge('m', [{ firstOffset: 0n, lastOffset: 0n, acknowledgeTypes: [1] }]).errorCode).toBe(0);
    expect(sp.acknowledge('other', [{ firstOffset: 1n, lastOffset: 1n, acknowledgeTypes: [1] }]).errorCode).toBe(121);
    expect(sp.startOffset).toBe(1);
    vi.advanceTimersByTime(1000);
    expect(sp.stateOf(1)).toEqual({ state: RecordState.AVAILABLE, deliveryCount: 1 });
    expect(sp.nextFetchOffset()).toBe(1);
    // Second delivery, expired again: the limit (2) archives them; the start offset passes them all.
    const again = sp.acquire('m2', log, 1, 4, 500, false);
    expect(again.ranges).toEqual([{ firstOffset: 1n, lastOffset: 3n, deliveryCount: 2 }]);
    vi.advanceTimersByTime(1000);
    expect(sp.stateOf(1)).toBeNull();
    expect(sp.startOffset).toBe(4);
  });

  it('restores persisted batches to the same state, acquired records as available', () => {
    const sp = new SharePartition(10, 100, limits);
    const log = batch(10, 5);
    sp.acquire('m', log, 10, 15, 500, false);
    sp.acknowledge('m', [{ firstOffset: 11n, lastOffset: 12n, acknowledgeTypes: [1, 3] }]);
    const saved = sp.persistedBatches();
    expect(saved).toEqual([
      { firstOffset: 10, lastOffset: 10, deliveryState: RecordState.AVAILABLE, deliveryCount: 1 },
      { firstOffset: 11, lastOffset: 11, deliveryState: RecordState.ACKNOWLEDGED, deliveryCount: 1 },
      { firstOffset: 12, lastOffset: 12, deliveryState: RecordState.ARCHIVED, deliveryCount: 1 },
      { firstOffset: 13, lastOffset: 14, deliveryState: RecordState.AVAILABLE, deliveryCount: 1 },
    ]);
    const back = new SharePartition(sp.startOffset, 100, limits);
    back.restore(saved);
    expect(back.persistedBatches()).toEqual(saved);
    expect(back.endOffset).toBe(15);
    const redelivered = back.acquire('n', log, back.nextFetchOffset(), 15, 500, false);
    expect(redelivered.ranges.map((r) => [r.firstOffset, r.lastOffset, r.deliveryCount])).toEqual([
      [10n, 10n, 2],
      [13n, 14n, 2],
    ]);
  });
  it('read_committed: archives the batches of an aborted transaction up to its producer\'s marker, and only that producer\'s', () => {
    const txn = (baseOffset: number, producerId: number, value: string): Buffer =>
      buildRecordBatch({ baseOffset, producerId, producerEpoch: 0, baseSequence: 0, isTransactional: true, records: [{ value: Buffer.from(value) }] });
    const marker = (baseOffset: number, producerId: number, commit: boolean): Buffer => buildEndTxnMarkerBatch({ baseOffset, commit, producerId, producerEpoch: 0, coordinatorEpoch: 0 });
    // Producer 1 aborts (0, marker 2), producer 2 commits meanwhile (1, marker 3), then producer 1 commits (4, marker 5).
    const log = Buffer.concat([txn(0, 1, 'a'), txn(1, 2, 'b'), marker(2, 1, false), marker(3, 2, true), txn(4, 1, 'c'), marker(5, 1, true)]);
    const aborted = [{ producerId: 1, firstOffset: 0 }];

    // Offset 0 was acquired and released before the group turned read_committed: it is archived now.
    const sp = new SharePartition(0, 100, limits);
    expect(sp.acquire('m', log, 0, 6, 1, true).ranges).toEqual([{ firstOffset: 0n, lastOffset: 0n, deliveryCount: 1 }]);
    expect(sp.acknowledge('m', [{ firstOffset: 0n, lastOffset: 0n, acknowledgeTypes: [2] }]).errorCode).toBe(0);
    const got = sp.acquire('m', log, 0, 6, 500, false, aborted);
    expect(got.ranges.map((r) => [r.firstOffset, r.lastOffset])).toEqual([
      [1n, 1n],
      [4n, 4n],
    ]);
    // 0 archived moves the start offset; the markers and nothing else are archived around the acquired records.
    expect(sp.startOffset).toBe(1);
    for (const o of [2, 3, 5]) expect(sp.stateOf(o)?.state).toBe(RecordState.ARCHIVED);
    // The bytes returned start at the first batch holding an acquired record.
    expect(got.records.readBigInt64BE(0)).toBe(1n);
  });
});
