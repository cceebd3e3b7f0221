import { readdir, readFile, stat, truncate, unlink, writeFile, open as fsOpen } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ControlRecordType, buildMirrorPidResetBatch } from '../../src/protocol/control-records.js';
import { RecordBatchView } from '../../src/protocol/record-batch.js';
import { decodeRecords } from '../../src/protocol/records.js';
import { ErrorCode } from '../../src/protocol/generated/errors.js';
import { batch, batchOffsets, openLog, readAll, removeDir, tempDir } from './helpers.js';

let dir: string;
beforeEach(async () => {
  dir = await tempDir();
});
afterEach(async () => {
  await removeDir(dir);
});

describe('PartitionLog append as leader and read', () => {
  it('assigns offsets and the leader epoch in place and reads the same bytes back', async () => {
    const { log } = await openLog(dir);
    const a = batch(3);
    const b = batch(2, { tag: 'b' });
    const ra = await log.appendAsLeader(a, 5);
    const rb = await log.appendAsLeader(b, 5, { requiredAcks: -1 });
    expect(ra).toMatchObject({ errorCode: 0, baseOffset: 0, lastOffset: 2, logAppendTime: -1, logStartOffset: 0 });
    expect(rb).toMatchObject({ errorCode: 0, baseOffset: 3, lastOffset: 4 });
    expect(new RecordBatchView(a).partitionLeaderEpoch).toBe(5);
    expect(new RecordBatchView(b).baseOffset).toBe(3);
    expect(new RecordBatchView(b).isValid()).toBe(true);
    expect(log.logEndOffset).toBe(5);
    expect(log.highWatermark).toBe(5);
    expect(log.latestEpoch).toBe(5);
    const all = await readAll(log);
    expect(all.equals(Buffer.concat([a, b]))).toBe(true);
    const recs = decodeRecords(new RecordBatchView(all, a.length));
    expect(recs.map((r) => [r.offset, r.value?.toString()])).toEqual([
      [3, 'b-0'],
      [4, 'b-1'],
    ]);
    // the on-disk file is Kafka's: one .log named by the 20-digit base offset holding the batches
    const files = await readdir(dir);
    expect(files).toContain('00000000000000000000.log');
    expect(files).toContain('partition.metadata');
    expect((await readFile(join(dir, '00000000000000000000.log'))).equals(all)).toBe(true);
    await log.close();
    // Written at the latest by a clean close (recovery rebuilds it from the batches before that).
    expect((await readFile(join(dir, 'leader-epoch-checkpoint'), 'utf8'))).toBe('0\n1\n5 0\n');
  });

  it('reads from inside a batch, honours maxOffset, maxBytes and minOneMessage', async () => {
    const { log } = await openLog(dir, { indexIntervalBytes: 100 });
    const sizes: number[] = [];
    for (let i = 0; i < 20; i++) {
      const b = batch(4, { tag: `t${i}` });
      sizes.push(b.length);
      await log.appendAsLeader(b, 0);
    }
    const r1 = await log.readToBuffer({ fetchOffset: 9, maxOffset: 80, maxBytes: 1 << 20, minOneMessage: false });
    expect(batchOffsets(r1.records)[0]).toBe(8);
    expect(batchOffsets(r1.records).at(-1)).toBe(76);
    const r2 = await log.readToBuffer({ fetchOffset: 9, maxOffset: 20, maxBytes: 1 << 20, minOneMessage: false });
    expect(batchOffsets(r2.records)).toEqual([8, 12, 16]);
    const r3 = await log.readToBuffer({ fetchOffset: 0, maxOffset: 80, maxBytes: (sizes[0] as number) * 2 + 5, minOneMessage: false });
    expect(batchOffsets(r3.records)).toEqual([0, 4]);
    const r4 = await log.readToBuffer({ fetchOffset: 0, maxOffset: 80, maxBytes: 10, minOneMessage: true });
    expect(batchOffsets(r4.records)).toEqual([0]);
    const r5 = await log.readToBuffer({ fetchOffset: 0, maxOffset: 80, maxBytes: 10, minOneMessage: false });
    expect(r5.records.length).toBe(0);
    const atEnd = await log.read({ fetchOffset: 80, maxOffset: 80, maxBytes: 100, minOneMessage: true });
    expect(atEnd).toMatchObject({ errorCode: 0, records: [] });
    const past = await log.read({ fetchOffset: 81, maxOffset: 80, maxBytes: 100, minOneMessage: true });
    expect(past.errorCode).toBe(ErrorCode.OFFSET_OUT_OF_RANGE);
    // file ranges: the slice reads the same bytes
    const slices = await log.read({ fetchOffset: 40, maxOffset: 80, maxBytes: 1 << 20, minOneMessage: true });
    const s = slices.records[0];
    expect(s).toBeDefined();
    const into = Buffer.alloc(s!.length);
    expect(await s!.readInto(into)).toBe(s!.length);
    expect(batchOffsets(into)[0]).toBe(40);
    await log.close();
  });

  it('rolls segments by segment.bytes and reads across them', async () => {
    const { log } = await openLog(dir, { segmentBytes: 400 });
    const all: Buffer[] = [];
    for (let i = 0; i < 30; i++) {
      const b = batch(3, { tag: `s${i}` });
      all.push(b);
      await log.appendAsLeader(b, 1);
    }
    expect(log.segmentCount).toBeGreaterThan(3);
    const files = (await readdir(dir)).filter((f) => f.endsWith('.log'));
    expect(files.length).toBe(log.segmentCount);
    for (const base of log.segmentBaseOffsets) expect(files).toContain(`${String(base).padStart(20, '0')}.log`);
    expect((await readAll(log)).equals(Buffer.concat(all))).toBe(true);
    for (let off = 0; off < 90; off += 7) {
      const r = await log.readToBuffer({ fetchOffset: off, maxOffset: 90, maxBytes: 50, minOneMessage: true });
      const first = batchOffsets(r.records)[0] as number;
      expect(first).toBeLessThanOrEqual(off);
      expect(first + 3).toBeGreaterThan(off);
    }
    await log.close();
  });

  it('answers many concurrent reads across segments, each from its own offset (lookups share pooled scan buffers)', async () => {
    const { log } = await openLog(dir, { segmentBytes: 400 });
    for (let i = 0; i < 40; i++) await log.appendAsLeader(batch(3, { tag: `c${i}` }), 1);
    const offsets = Array.from({ length: 120 }, (_, i) => i);
    const reads = await Promise.all(
      offsets.map((off) => log.readToBuffer({ fetchOffset: off, maxOffset: 120, maxBytes: 150, minOneMessage: true })),
    );
    reads.forEach((r, off) => {
      const first = batchOffsets(r.records)[0] as number;
      expect(first).toBe(off - (off % 3));
    });
    await log.close();
  });

  it('rolls when the offset index is full', async () => {
    const { log } = await openLog(dir, { segmentIndexBytes: 16, indexIntervalBytes: 1 });
    for (let i = 0; i < 9; i++) await log.appendAsLeader(batch(1), 0);
    expect(log.segmentCount).toBeGreaterThanOrEqual(3);
    expect((await readAll(log)).length).toBe(log.size);
    await log.close();
  });

  it('serialises concurrent appends into contiguous offsets', async () => {
    const { log } = await openLog(dir, { segmentBytes: 2000 });
    const results = await Promise.all(Array.from({ length: 60 }, (_, i) => log.appendAsLeader(batch(1 + (i % 3)), 0, { requiredAcks: i % 2 === 0 ? -1 : 1 })));
    let next = 0;
    for (const r of results) {
      expect(r.errorCode).toBe(0);
      expect(r.baseOffset).toBe(next);
      next = r.lastOffset + 1;
    }
    expect(log.logEndOffset).toBe(next);
    expect(batchOffsets(await readAll(log)).length).toBe(60);
    await log.close();
  });

  it('rolls by segment.ms', async () => {
    const { log, clock } = await openLog(dir, { segmentMs: 1000 });
    await log.appendAsLeader(batch(1, { timestamp: clock.now() }), 0);
    await log.appendAsLeader(batch(1, { timestamp: clock.now() }), 0);
    expect(log.segmentCount).toBe(1);
    clock.advance(2000);
    await log.appendAsLeader(batch(1, { timestamp: clock.now() }), 0);
    expect(log.segmentBaseOffsets).toEqual([0, 2]);
    await log.close();
  });

  it('stamps LogAppendTime with a valid CRC', async () => {
    const { log, clock } = await openLog(dir, { messageTimestampType: 'LogAppendTime' });
    const b = batch(2, { timestamp: 5 });
    const r = await log.appendAsLeader(b, 0);
    expect(r.logAppendTime).toBe(clock.now());
    const v = new RecordBatchView(b);
    expect(v.maxTimestamp).toBe(clock.now());
    expect(v.isValid()).toBe(true);
    expect(decodeRecords(v).map((x) => x.timestamp)).toEqual([clock.now(), clock.now()]);
    await log.close();
  });

  it('rejects bad batches with Kafka error codes and stays usable', async () => {
    const { log } = await openLog(dir, { maxMessageBytes: 500 });
    const corrupt = batch(2);
    corrupt.writeUInt8((corrupt.at(-1) as number) ^ 0xff, corrupt.length - 1);
    expect((await log.appendAsLeader(corrupt, 0)).errorCode).toBe(ErrorCode.CORRUPT_MESSAGE);
    const big = batch(1, { values: ['x'.repeat(600)] });
    expect((await log.appendAsLeader(big, 0)).errorCode).toBe(ErrorCode.MESSAGE_TOO_LARGE);
    const torn = batch(2).subarray(0, 40);
    expect((await log.appendAsLeader(torn, 0)).errorCode).toBe(ErrorCode.CORRUPT_MESSAGE);
    const control = batch(1, { isControl: true });
    expect((await log.appendAsLeader(control, 0)).errorCode).toBe(ErrorCode.INVALID_RECORD);
    const noSeq = batch(1, { producerId: 5, producerEpoch: 0, baseSequence: -1 });
    expect((await log.appendAsLeader(noSeq, 0)).errorCode).toBe(ErrorCode.INVALID_RECORD);
    const ok = await log.appendAsLeader(batch(1), 0);
    expect(ok).toMatchObject({ errorCode: 0, baseOffset: 0 });
    expect((await log.appendAsLeader(batch(1), -1)).errorCode).not.toBe(0);
    await log.close();
  });

  it('rejects timestamps outside message.timestamp.before/after.max.ms', async () => {
    const { log, clock } = await openLog(dir, { messageTimestampBeforeMaxMs: 1000, messageTimestampAfterMaxMs: 1000 });
    expect((await log.appendAsLeader(batch(1, { timestamp: clock.now() - 5000 }), 0)).errorCode).toBe(ErrorCode.INVALID_TIMESTAMP);
    expect((await log.appendAsLeader(batch(1, { timestamp: clock.now() + 5000 }), 0)).errorCode).toBe(ErrorCode.INVALID_TIMESTAMP);
    expect((await log.appendAsLeader(batch(1, { timestamp: clock.now() }), 0)).errorCode).toBe(0);
    await log.close();
  });

  it('answers appends to a closed log with NOT_LEADER_OR_FOLLOWER', async () => {
    const { log } = await openLog(dir);
    await log.close();
    expect((await log.appendAsLeader(batch(1), 0)).errorCode).toBe(ErrorCode.NOT_LEADER_OR_FOLLOWER);
    expect((await log.appendAsMirror(batch(1))).errorCode).toBe(ErrorCode.NOT_LEADER_OR_FOLLOWER);
  });

  it('knows the epoch and control type of its last batch from the append that wrote it, until it is truncated or reopened', async () => {
    const { log } = await openLog(dir);
    expect(log.lastBatch).toBeUndefined();
    expect((await log.appendAsMirror(batch(3, { baseOffset: 0, partitionLeaderEpoch: 4 }))).errorCode).toBe(0);
    expect((await log.appendAsMirror(Buffer.concat([batch(1, { baseOffset: 3, partitionLeaderEpoch: 4 }), batch(2, { baseOffset: 4, partitionLeaderEpoch: 6 })]))).errorCode).toBe(0);
    expect(log.lastBatch).toMatchObject({ partitionLeaderEpoch: 6, controlType: -1 });
    expect((await log.appendAsLeader(buildMirrorPidResetBatch({ sourceClusterId: 'src', partitionLeaderEpoch: 9 }), 9, { origin: 'coordinator' })).errorCode).toBe(0);
    expect(log.lastBatch).toMatchObject({ partitionLeaderEpoch: 9, controlType: ControlRecordType.MIRROR_PID_RESET });
    await log.truncateTo(4);
    expect(log.lastBatch).toBeUndefined();
    expect((await log.appendAsLeader(batch(1), 10)).errorCode).toBe(0);
    expect(log.lastBatch).toMatchObject({ partitionLeaderEpoch: 10, controlType: -1 });
    await log.close();
    const { log: again } = await openLog(dir, {}, { cleanShutdown: true });
    expect(again.logEndOffset).toBe(5);
    expect(again.lastBatch).toBeUndefined();
    await again.close();
  });

  it('wakes onAppend listeners', async () => {
    const { log } = await openLog(dir);
    let calls = 0;
    const off = log.onAppend(() => calls++);
    await log.appendAsLeader(batch(1), 0);
    expect(calls).toBeGreaterThan(0);
    off();
    const before = calls;
    await log.appendAsLeader(batch(1), 0);
    expect(calls).toBe(before);
    await log.close();
  });
});

describe('PartitionLog recovery', () => {
  async function fill(n: number, config = {}): Promise<Buffer[]> {
    const { log } = await openLog(dir, config);
    const all: Buffer[] = [];
    for (let i = 0; i < n; i++) {
      const b = batch(2, { tag: `r${i}` });
      all.push(b);
      await log.appendAsLeader(b, 3);
    }
    await log.flush();
    // the process "dies" here: files stay as written, nothing more is flushed
    await log.closeHandlers();
    return all;
  }

  it('reopens after a clean close without scanning, with the same state', async () => {
    const { log } = await openLog(dir, { indexIntervalBytes: 64, segmentBytes: 600 });
    const all: Buffer[] = [];
    for (let i = 0; i < 25; i++) {
      const b = batch(2, { tag: `c${i}` });
      all.push(b);
      await log.appendAsLeader(b, 2);
    }
    const segs = log.segmentBaseOffsets;
    await log.close();
    const { log: again } = await openLog(dir, { indexIntervalBytes: 64, segmentBytes: 600 }, { cleanShutdown: true });
    expect(again.logEndOffset).toBe(50);
    expect(again.segmentBaseOffsets).toEqual(segs);
    expect(again.latestEpoch).toBe(2);
    expect((await readAll(again)).equals(Buffer.concat(all))).toBe(true);
    const r = await again.appendAsLeader(batch(1), 2);
    expect(r.baseOffset).toBe(50);
    await again.close();
  });

  it('truncates a torn tail and continues offsets', async () => {
    const all = await fill(10);
    const logFile = join(dir, '00000000000000000000.log');
    const size = (await stat(logFile)).size;
    await truncate(logFile, size - 7);
    const { log } = await openLog(dir);
    expect(log.logEndOffset).toBe(18);
    expect((await stat(logFile)).size).toBe(size - (all[9] as Buffer).length);
    expect((await readAll(log)).equals(Buffer.concat(all.slice(0, 9)))).toBe(true);
    expect((await log.appendAsLeader(batch(1), 3)).baseOffset).toBe(18);
    await log.close();
  });

  it('truncates from the first batch with a bad CRC and drops garbage after the end', async () => {
    const all = await fill(10);
    const logFile = join(dir, '00000000000000000000.log');
    const fh = await fsOpen(logFile, 'r+');
    const pos = all.slice(0, 6).reduce((n, b) => n + b.length, 0) + 70;
    await fh.write(Buffer.from([0xde, 0xad]), 0, 2, pos);
    await fh.close();
    const { log } = await openLog(dir);
    expect(log.logEndOffset).toBe(12);
    expect((await readAll(log)).equals(Buffer.concat(all.slice(0, 6)))).toBe(true);
    await log.close();
    await writeFile(logFile, Buffer.concat([await readFile(logFile), Buffer.alloc(100, 0)]));
    const { log: again } = await openLog(dir);
    expect(again.logEndOffset).toBe(12);
    await again.close();
  });

  it('treats a base offset no log can hold (outside the CRC) as corruption', async () => {
    const all = await fill(6);
    const fh = await fsOpen(join(dir, '00000000000000000000.log'), 'r+');
    const pos = all.slice(0, 3).reduce((n, b) => n + b.length, 0);
    await fh.write(Buffer.from([0xff]), 0, 1, pos);
    await fh.close();
    const { log } = await openLog(dir);
    expect(log.logEndOffset).toBe(6);
    expect((await readAll(log)).equals(Buffer.concat(all.slice(0, 3)))).toBe(true);
    await log.close();
  });

  it('treats an impossible batch length as corruption without allocating it', async () => {
    const all = await fill(6);
    const fh = await fsOpen(join(dir, '00000000000000000000.log'), 'r+');
    const pos = all.slice(0, 4).reduce((n, b) => n + b.length, 0);
    const len = Buffer.alloc(4);
    len.writeInt32BE(0x7ffffff0);
    await fh.write(len, 0, 4, pos + 8);
    await fh.close();
    const { log } = await openLog(dir);
    expect(log.logEndOffset).toBe(8);
    await log.close();
  });

  it('rebuilds missing or damaged indexes', async () => {
    const { log } = await openLog(dir, { indexIntervalBytes: 50 });
    for (let i = 0; i < 40; i++) await log.appendAsLeader(batch(2, { tag: `i${i}`, timestamp: 1000 + i * 10 }), 0);
    await log.close();
    const idx = join(dir, '00000000000000000000.index');
    const good = await readFile(idx);
    expect(good.length).toBeGreaterThan(8 * 10);
    await unlink(idx);
    await writeFile(join(dir, '00000000000000000000.timeindex'), Buffer.alloc(5));
    const { log: again } = await openLog(dir, { indexIntervalBytes: 50 }, { cleanShutdown: true });
    expect((await readFile(idx)).equals(good)).toBe(true);
    const r = await again.readToBuffer({ fetchOffset: 51, maxOffset: 80, maxBytes: 10, minOneMessage: true });
    expect(batchOffsets(r.records)).toEqual([50]);
    expect(await again.offsetForTimestamp(1000 + 25 * 10)).toMatchObject({ offset: 50, timestamp: 1250 });
    await again.close();
  });

  it('rebuilding an older segment index on a clean start keeps the epoch cache', async () => {
    const { log } = await openLog(dir, { segmentBytes: 300 });
    for (let e = 0; e < 3; e++) for (let i = 0; i < 4; i++) await log.appendAsLeader(batch(2), e);
    const entries = log.epochEntries;
    await log.close();
    await unlink(join(dir, '00000000000000000000.index'));
    const { log: again } = await openLog(dir, { segmentBytes: 300 }, { cleanShutdown: true });
    expect(again.epochEntries).toEqual(entries);
    expect(again.logEndOffset).toBe(24);
    await again.close();
  });

  it('recovers the epoch cache from batch epochs', async () => {
    const { log } = await openLog(dir);
    await log.appendAsLeader(batch(2), 1);
    await log.appendAsLeader(batch(2), 4);
    await log.appendAsLeader(batch(2), 7);
    await log.flush();
    await log.closeHandlers();
    await unlink(join(dir, 'leader-epoch-checkpoint'));
    const { log: again } = await openLog(dir);
    expect(again.epochEntries).toEqual([
      { epoch: 1, startOffset: 0 },
      { epoch: 4, startOffset: 2 },
      { epoch: 7, startOffset: 4 },
    ]);
    await again.close();
  });

  it('keeps the topic id in partition.metadata and refuses another', async () => {
    const { log } = await openLog(dir);
    await log.close();
    expect(await readFile(join(dir, 'partition.metadata'), 'utf8')).toBe('version: 0\ntopic_id: AAAAAAAAAAAAAAAAAAAAAA\n');
    const { PartitionLog } = await import('../../src/storage/partition-log.js');
    const { logConfig } = await import('../../src/storage/log-config.js');
    await expect(PartitionLog.open({ dir, topicId: 'BBBBBBBBBBBBBBBBBBBBBB', config: logConfig() })).rejects.toThrow(/topic id/);
  });
});
