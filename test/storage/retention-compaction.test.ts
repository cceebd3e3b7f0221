import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Codec } from '../../src/protocol/compression.js';
import { buildEndTxnMarkerBatch } from '../../src/protocol/control-records.js';
import { iterateBatches } from '../../src/protocol/record-batch.js';
import { decodeRecords } from '../../src/protocol/records.js';
import { batch, openLog, readAll, removeDir, tempDir } from './helpers.js';

let dir: string;
beforeEach(async () => {
  dir = await tempDir();
});
afterEach(async () => {
  await removeDir(dir);
});

const DAY = 86_400_000;

describe('retention', () => {
  it('deletes segments older than retention.ms and moves the log start', async () => {
    const { log, clock } = await openLog(dir, { segmentBytes: 250, retentionMs: DAY });
    const t0 = clock.now();
    for (let i = 0; i < 6; i++) await log.appendAsLeader(batch(2, { timestamp: t0 - 3 * DAY }), 0);
    for (let i = 0; i < 6; i++) await log.appendAsLeader(batch(2, { timestamp: t0 }), 0);
    const segs = log.segmentCount;
    const deleted = await log.applyRetention();
    expect(deleted).toBeGreaterThan(0);
    expect(log.segmentCount).toBe(segs - deleted);
    expect(log.logStartOffset).toBe(log.segmentBaseOffsets[0]);
    expect(log.logStartOffset).toBeGreaterThan(0);
    expect(log.logStartOffset).toBeLessThanOrEqual(12);
    expect(await log.applyRetention()).toBe(0);
    // everything expires: the active segment is rolled and the log restarts empty at its end
    clock.advance(5 * DAY);
    await log.applyRetention();
    expect(log.logStartOffset).toBe(24);
    expect(log.logEndOffset).toBe(24);
    expect((await log.appendAsLeader(batch(1, { timestamp: clock.now() }), 0)).baseOffset).toBe(24);
    await log.close();
  });

  it('deletes the oldest segments beyond retention.bytes, never above the high watermark', async () => {
    const { log } = await openLog(dir, { segmentBytes: 250, retentionBytes: 600, retentionMs: -1 });
    for (let i = 0; i < 20; i++) await log.appendAsLeader(batch(2), 0);
    await log.applyRetention();
    expect(log.size).toBeLessThanOrEqual(600 + 250);
    expect(log.size).toBeGreaterThanOrEqual(600 - 250);
    expect((await readAll(log)).length).toBe(log.size);
    await log.close();
  });

  it('keeps file ranges of deleted segments readable for file.delete.delay.ms', async () => {
    const { log, clock } = await openLog(dir, { segmentBytes: 250, retentionMs: DAY });
    for (let i = 0; i < 6; i++) await log.appendAsLeader(batch(2, { timestamp: clock.now() - 3 * DAY }), 0);
    await log.appendAsLeader(batch(2, { timestamp: clock.now() }), 0);
    const r = await log.read({ fetchOffset: 0, maxOffset: log.highWatermark, maxBytes: 1 << 20, minOneMessage: true });
    const slice = r.records[0]!;
    expect(await log.applyRetention()).toBeGreaterThan(0);
    expect(log.logStartOffset).toBeGreaterThan(0);
    const buf = Buffer.alloc(slice.length);
    expect(await slice.readInto(buf)).toBe(slice.length);
    expect(buf.readBigInt64BE(0)).toBe(0n);
    await log.close();
  });

  it('does nothing for cleanup.policy=compact', async () => {
    const { log, clock } = await openLog(dir, { segmentBytes: 250, retentionMs: 1, cleanupPolicy: ['compact'] });
    for (let i = 0; i < 6; i++) await log.appendAsLeader(batch(2, { timestamp: clock.now() - DAY, keys: ['a', 'b'] }), 0);
    expect(await log.applyRetention()).toBe(0);
    await log.close();
  });
});

function liveRecords(buf: Buffer): { offset: number; key: string; value: string | null }[] {
  const out: { offset: number; key: string; value: string | null }[] = [];
  for (const v of iterateBatches(buf)) {
    if (v.isControl) continue;
    for (const r of decodeRecords(v)) out.push({ offset: r.offset, key: r.key?.toString() ?? '', value: r.value?.toString() ?? null });
  }
  return out;
}

describe('compaction', () => {
  it('keeps the latest record per key at its offset and removes old tombstones', async () => {
    const { log, clock } = await openLog(dir, { segmentBytes: 400, cleanupPolicy: ['compact'], deleteRetentionMs: DAY });
    const now = clock.now();
    const expected = new Map<string, { offset: number; value: string | null }>();
    let offset = 0;
    for (let round = 0; round < 8; round++) {
      const keys = ['k0', 'k1', 'k2', 'k3'];
      const values = keys.map((k) => `${k}@${round}`);
      await log.appendAsLeader(batch(4, { keys, values, timestamp: now - 2 * DAY }), 0);
      keys.forEach((k, i) => expected.set(k, { offset: offset + i, value: values[i] as string }));
      offset += 4;
    }
    // an old tombstone for k1 (removed) and a recent one for k2 (kept), then more data
    await log.appendAsLeader(batch(1, { keys: ['k1'], values: [null], timestamp: now - 2 * DAY }), 0);
    expected.delete('k1');
    offset += 1;
    await log.appendAsLeader(batch(1, { keys: ['k2'], values: [null], timestamp: now }), 0);
    expected.set('k2', { offset, value: null });
    offset += 1;
    for (let i = 0; i < 4; i++) {
      await log.appendAsLeader(batch(1, { keys: ['k9'], values: [`k9@${i}`], timestamp: now }), 0);
      offset += 1;
    }
    const before = log.size;
    const leo = log.logEndOffset;
    const stats = await log.compact();
    expect(stats.segmentsCleaned).toBeGreaterThan(0);
    expect(log.size).toBeLessThan(before);
    expect(log.logEndOffset).toBe(leo);
    // nothing new since: min.cleanable.dirty.ratio keeps the next pass from rewriting anything
    expect((await log.compact()).segmentsCleaned).toBe(0);
    const live = liveRecords(await readAll(log));
    const lastByKey = new Map<string, { offset: number; value: string | null }>();
    for (const r of live) lastByKey.set(r.key, { offset: r.offset, value: r.value });
    for (const [k, v] of expected) expect(lastByKey.get(k)).toEqual(v);
    expect(lastByKey.has('k1')).toBe(false);
    // only the active segment may still hold superseded records
    const activeBase = log.segmentBaseOffsets.at(-1) as number;
    const olderThanActive = live.filter((r) => r.offset < activeBase);
    const seen = new Set<string>();
    for (const r of olderThanActive) {
      expect(seen.has(r.key)).toBe(false);
      seen.add(r.key);
    }
    // reads by offset still work after the swap (indexes rebuilt), also after a restart
    await log.close();
    const { log: again } = await openLog(dir, { segmentBytes: 400, cleanupPolicy: ['compact'] }, { cleanShutdown: true });
    expect(liveRecords(await readAll(again))).toEqual(live);
    expect((await again.appendAsLeader(batch(1, { keys: ['k0'] }), 0)).baseOffset).toBe(leo);
    await again.close();
  });

  it('keeps aborted transactions of compacted segments', async () => {
    const { log } = await openLog(dir, { segmentBytes: 150, cleanupPolicy: ['compact'] });
    await log.appendAsLeader(batch(1, { keys: ['a'], producerId: 3, producerEpoch: 0, baseSequence: 0, isTransactional: true }), 0);
    await log.appendAsLeader(buildEndTxnMarkerBatch({ commit: false, producerId: 3, producerEpoch: 0, coordinatorEpoch: 0 }), 0, { origin: 'coordinator' });
    for (let i = 0; i < 6; i++) await log.appendAsLeader(batch(1, { keys: ['a'], values: [`a${i}`] }), 0);
    expect((await log.compact()).segmentsCleaned).toBeGreaterThan(0);
    const r = await log.read({ fetchOffset: 0, maxOffset: log.lastStableOffset, maxBytes: 1 << 20, minOneMessage: true, readCommitted: true });
    expect(r.abortedTransactions).toEqual([{ producerId: 3, firstOffset: 0 }]);
    await log.close();
    const { log: again } = await openLog(dir, { segmentBytes: 150, cleanupPolicy: ['compact'] }, { cleanShutdown: true });
    const r2 = await again.read({ fetchOffset: 0, maxOffset: again.lastStableOffset, maxBytes: 1 << 20, minOneMessage: true, readCommitted: true });
    expect(r2.abortedTransactions).toEqual([{ producerId: 3, firstOffset: 0 }]);
    await again.close();
  });

  it('drops aborted transactional records: they never replace a committed value', async () => {
    const { log } = await openLog(dir, { segmentBytes: 100, cleanupPolicy: ['compact'] });
    await log.appendAsLeader(batch(1, { keys: ['g'], values: ['committed'] }), 0); // 0
    await log.appendAsLeader(batch(1, { keys: ['g'], values: ['aborted'], producerId: 8, producerEpoch: 0, baseSequence: 0, isTransactional: true }), 0); // 1
    await log.appendAsLeader(buildEndTxnMarkerBatch({ commit: false, producerId: 8, producerEpoch: 0, coordinatorEpoch: 0 }), 0, { origin: 'coordinator' }); // 2
    await log.appendAsLeader(batch(1, { keys: ['h'], values: ['x'], producerId: 8, producerEpoch: 0, baseSequence: 1, isTransactional: true }), 0); // 3
    await log.appendAsLeader(buildEndTxnMarkerBatch({ commit: true, producerId: 8, producerEpoch: 0, coordinatorEpoch: 0 }), 0, { origin: 'coordinator' }); // 4
    await log.appendAsLeader(batch(1, { keys: ['z'] }), 0); // 5, active
    await log.compact();
    const live = liveRecords(await readAll(log));
    expect(live.filter((r) => r.key === 'g')).toEqual([{ offset: 0, key: 'g', value: 'committed' }]);
    expect(live.filter((r) => r.key === 'h')).toEqual([{ offset: 3, key: 'h', value: 'x' }]);
    await log.close();
  });

  it('compacts compressed batches', async () => {
    const { log } = await openLog(dir, { segmentBytes: 100, cleanupPolicy: ['compact'] });
    for (let round = 0; round < 6; round++) {
      await log.appendAsLeader(batch(3, { keys: ['a', 'b', `c${round}`], values: [`a${round}`, `b${round}`, 'c'], compression: Codec.GZIP }), 0);
    }
    await log.appendAsLeader(batch(1, { keys: ['z'] }), 0);
    await log.compact();
    const live = liveRecords(await readAll(log));
    const a = live.filter((r) => r.key === 'a');
    expect(a).toEqual([{ offset: 15, key: 'a', value: 'a5' }]);
    expect(live.filter((r) => r.key.startsWith('c')).length).toBe(6);
    for (const v of iterateBatches(await readAll(log))) expect(v.isValid()).toBe(true);
    await log.close();
  });
});
