import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildRecordBatch } from '../../src/protocol/records.js';
import { ErrorCode } from '../../src/protocol/generated/errors.js';
import { batch, batchOffsets, openLog, readAll, removeDir, tempDir } from './helpers.js';

let dir: string;
beforeEach(async () => {
  dir = await tempDir();
});
afterEach(async () => {
  await removeDir(dir);
});

describe('leader epochs', () => {
  it('answers OffsetsForLeaderEpoch like Kafka', async () => {
    const { log } = await openLog(dir);
    await log.appendAsLeader(batch(2), 1); // 0..1
    await log.appendAsLeader(batch(2), 1); // 2..3
    await log.appendAsLeader(batch(3), 3); // 4..6
    await log.appendAsLeader(batch(1), 5); // 7
    expect(log.epochEntries).toEqual([
      { epoch: 1, startOffset: 0 },
      { epoch: 3, startOffset: 4 },
      { epoch: 5, startOffset: 7 },
    ]);
    expect(log.endOffsetForEpoch(1)).toEqual({ epoch: 1, endOffset: 4 });
    expect(log.endOffsetForEpoch(2)).toEqual({ epoch: 1, endOffset: 4 });
    expect(log.endOffsetForEpoch(3)).toEqual({ epoch: 3, endOffset: 7 });
    expect(log.endOffsetForEpoch(5)).toEqual({ epoch: 5, endOffset: 8 });
    expect(log.endOffsetForEpoch(0)).toEqual({ epoch: 0, endOffset: 0 });
    expect(log.endOffsetForEpoch(6)).toEqual({ epoch: -1, endOffset: -1 });
    expect(log.endOffsetForEpoch(-1)).toEqual({ epoch: -1, endOffset: -1 });
    await log.assignEpochStartOffset(6, 8);
    expect(log.latestEpoch).toBe(6);
    expect(log.endOffsetForEpoch(5)).toEqual({ epoch: 5, endOffset: 8 });
    expect((await log.appendAsLeader(batch(1), 5)).errorCode).not.toBe(0);
    await log.close();
    expect(await readFile(join(dir, 'leader-epoch-checkpoint'), 'utf8')).toBe('0\n4\n1 0\n3 4\n5 7\n6 8\n');
  });
});

describe('truncation', () => {
  it('truncates to an offset, dropping the batch that contains it, and follows with epochs', async () => {
    const { log } = await openLog(dir, { segmentBytes: 300 });
    const kept: Buffer[] = [];
    for (let e = 0; e < 4; e++) {
      for (let i = 0; i < 3; i++) {
        const b = batch(2, { tag: `e${e}i${i}` });
        await log.appendAsLeader(b, e * 2);
        if (e < 2 || (e === 2 && i === 0)) kept.push(b);
      }
    }
    expect(log.logEndOffset).toBe(24);
    expect(log.segmentCount).toBeGreaterThan(2);
    await log.truncateTo(15); // inside the batch 14..15
    expect(log.logEndOffset).toBe(14);
    expect(log.highWatermark).toBe(14);
    expect((await readAll(log)).equals(Buffer.concat(kept))).toBe(true);
    expect(log.latestEpoch).toBe(4);
    expect(log.endOffsetForEpoch(4)).toEqual({ epoch: 4, endOffset: 14 });
    expect(log.endOffsetForEpoch(6)).toEqual({ epoch: -1, endOffset: -1 });
    const files = (await readdir(dir)).filter((f) => f.endsWith('.log'));
    expect(files.length).toBe(log.segmentCount);
    // a new leader epoch continues from the truncation point
    expect((await log.appendAsLeader(batch(1), 9)).baseOffset).toBe(14);
    expect(log.endOffsetForEpoch(4)).toEqual({ epoch: 4, endOffset: 14 });
    // epochs 4 (from 12) and 9 (from 14) start at or after 12: both go
    await log.truncateTo(12);
    expect(log.epochEntries.map((e) => e.epoch)).toEqual([0, 2]);
    await log.close();
    const { log: again } = await openLog(dir, { segmentBytes: 300 }, { cleanShutdown: true });
    expect(again.logEndOffset).toBe(12);
    expect(again.epochEntries.map((e) => e.epoch)).toEqual([0, 2]);
    await again.close();
  });

  it('truncates fully and restarts at an offset', async () => {
    const { log } = await openLog(dir);
    await log.appendAsLeader(batch(5), 2);
    await log.truncateFullyAndStartAt(1000);
    expect(log.logStartOffset).toBe(1000);
    expect(log.logEndOffset).toBe(1000);
    expect(log.latestEpoch).toBe(-1);
    expect((await log.read({ fetchOffset: 0, maxOffset: 1000, maxBytes: 100, minOneMessage: true })).errorCode).toBe(ErrorCode.OFFSET_OUT_OF_RANGE);
    expect((await log.appendAsLeader(batch(2), 3)).baseOffset).toBe(1000);
    expect((await readdir(dir)).filter((f) => f.endsWith('.log'))).toEqual(['00000000000000001000.log']);
    await log.close();
    const { log: again } = await openLog(dir, {}, { cleanShutdown: true });
    expect(again.logStartOffset).toBe(1000);
    expect(again.logEndOffset).toBe(1002);
    await again.close();
  });

  it('rebuilds producer state after truncation', async () => {
    const { log } = await openLog(dir);
    for (let i = 0; i < 4; i++) await log.appendAsLeader(batch(2, { producerId: 1, producerEpoch: 0, baseSequence: i * 2 }), 0);
    await log.truncateTo(4);
    expect(log.producerStates()[0]).toMatchObject({ producerId: 1, lastSequence: 3 });
    expect((await log.appendAsLeader(batch(2, { producerId: 1, producerEpoch: 0, baseSequence: 4 }), 0)).baseOffset).toBe(4);
    await log.close();
  });
});

describe('log start offset', () => {
  it('moves by DeleteRecords, deleting whole segments below it', async () => {
    const { log } = await openLog(dir, { segmentBytes: 200 });
    for (let i = 0; i < 10; i++) await log.appendAsLeader(batch(2, { tag: `d${i}` }), 0);
    const before = log.segmentCount;
    expect(await log.deleteRecordsBefore(7)).toBe(7);
    expect(log.logStartOffset).toBe(7);
    expect(log.segmentCount).toBeLessThan(before);
    expect(log.segmentBaseOffsets[0]).toBeLessThanOrEqual(7);
    expect((await log.read({ fetchOffset: 6, maxOffset: 20, maxBytes: 100, minOneMessage: true })).errorCode).toBe(ErrorCode.OFFSET_OUT_OF_RANGE);
    const r = await log.readToBuffer({ fetchOffset: 7, maxOffset: 20, maxBytes: 100, minOneMessage: true });
    expect(batchOffsets(r.records)[0]).toBe(6);
    await expect(log.deleteRecordsBefore(21)).rejects.toThrow(/high watermark/);
    expect(await log.offsetForTimestamp(-2)).toMatchObject({ offset: 7 });
    await log.close();
  });
});

describe('offset for timestamp', () => {
  it('finds the first record at or after a timestamp, and the max timestamp', async () => {
    const { log } = await openLog(dir, { indexIntervalBytes: 1 });
    await log.appendAsLeader(batch(3, { timestamp: 100 }), 0); // 0..2 at 100..102
    await log.appendAsLeader(batch(3, { timestamp: 200 }), 1); // 3..5 at 200..202
    await log.appendAsLeader(batch(2, { timestamp: 150 }), 1); // 6..7 at 150..151
    expect(await log.offsetForTimestamp(101)).toEqual({ offset: 1, timestamp: 101, leaderEpoch: 0 });
    expect(await log.offsetForTimestamp(150)).toEqual({ offset: 3, timestamp: 200, leaderEpoch: 1 });
    expect(await log.offsetForTimestamp(202)).toEqual({ offset: 5, timestamp: 202, leaderEpoch: 1 });
    expect(await log.offsetForTimestamp(500)).toBeNull();
    expect(await log.offsetForTimestamp(-1)).toMatchObject({ offset: 8, leaderEpoch: 1 });
    expect(await log.offsetForTimestamp(-2)).toMatchObject({ offset: 0 });
    expect(log.maxTimestampOffset()).toMatchObject({ timestamp: 202, offset: 5 });
    await log.appendAsLeader(batch(3, { timestamp: 300, values: ['a', 'b', 'c'] }), 1); // 8..10 at 300..302
    await log.appendAsLeader(batch(3, { timestamp: 400 }), 1); // 11..13
    expect(await log.offsetForTimestamp(-3)).toEqual({ offset: 13, timestamp: 402, leaderEpoch: 1 });
    // a batch whose max timestamp sits in its middle record: the exact record, as KIP-734 wants
    const mid = buildRecordBatch({ now: 600, records: [{ timestamp: 600 }, { timestamp: 900 }, { timestamp: 700 }] });
    await log.appendAsLeader(mid, 2); // 14..16
    expect(await log.offsetForTimestamp(-3)).toEqual({ offset: 15, timestamp: 900, leaderEpoch: 2 });
    expect(log.maxTimestampOffset()).toMatchObject({ timestamp: 900, offset: 16 });
    await log.close();
  });
});
