import { readFile, readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ErrorCode } from '../../src/protocol/generated/errors.js';
import { FaultyFileSystem } from '../helpers/faulty-file-system.js';
import { waitFor } from '../helpers/wait.js';
import { realFileSystem, type FileSystem, type LogFile } from '../../src/storage/file-system.js';
import { GroupCommit } from '../../src/storage/group-commit.js';
import { logConfig } from '../../src/storage/log-config.js';
import { PartitionLog } from '../../src/storage/partition-log.js';
import { TOPIC_ID, batch, openLog, readAll, removeDir, tempDir } from './helpers.js';

let dir: string;
beforeEach(async () => {
  dir = await tempDir();
});
afterEach(async () => {
  await removeDir(dir);
});

/** A file system whose fsyncs wait until the test releases them. */
class GatedFileSystem extends FaultyFileSystem {
  private gate: Promise<void> = Promise.resolve();
  private release: () => void = () => undefined;
  /** Fsyncs waiting at the gate now. */
  held = 0;
  hold(): void {
    this.gate = new Promise((r) => (this.release = r));
  }
  override async sync(file: LogFile): Promise<void> {
    this.held++;
    await this.gate;
    this.held--;
    return super.sync(file);
  }
  releaseAll(): void {
    this.release();
  }
}

describe('group commit and the high watermark', () => {
  it('acknowledges acks=all only after the fsync and moves the HW then', async () => {
    const fs = new GatedFileSystem();
    const { log } = await openLog(dir, {}, { fs });
    fs.hold();
    let done = false;
    const p = log.appendAsLeader(batch(2), 0, { requiredAcks: -1 }).then((r) => {
      done = true;
      return r;
    });
    await waitFor('the fsync of the append to reach the gate', () => fs.held > 0, 10_000, 5);
    expect(log.logEndOffset).toBe(2);
    expect(log.highWatermark).toBe(0);
    expect(done).toBe(false);
    fs.releaseAll();
    expect((await p).errorCode).toBe(0);
    expect(log.highWatermark).toBe(2);
    expect(log.recoveryPoint).toBe(2);
    // acks=1 under the page-cache default: the HW moves after the write
    const r1 = await log.appendAsLeader(batch(1), 0, { requiredAcks: 1 });
    expect(r1.errorCode).toBe(0);
    expect(log.highWatermark).toBe(3);
    expect(log.recoveryPoint).toBe(2);
    await log.close();
  });

  it('groups fsyncs across partitions and requests', async () => {
    const fs = new FaultyFileSystem();
    const gc = new GroupCommit();
    const logs: PartitionLog[] = [];
    for (let p = 0; p < 4; p++) {
      logs.push(await PartitionLog.open({ dir: join(dir, `t-${p}`), topicId: TOPIC_ID, config: logConfig(), fs, groupCommit: gc }));
    }
    const syncsBefore = fs.syncs;
    const appends: Promise<unknown>[] = [];
    for (let i = 0; i < 50; i++) for (const log of logs) appends.push(log.appendAsLeader(batch(1), 0, { requiredAcks: -1 }));
    const results = (await Promise.all(appends)) as { errorCode: number }[];
    expect(results.every((r) => r.errorCode === 0)).toBe(true);
    for (const log of logs) expect(log.highWatermark).toBe(50);
    const syncs = fs.syncs - syncsBefore;
    expect(syncs).toBeLessThan(200);
    expect(gc.syncs).toBeLessThan(200);
    for (const log of logs) await log.close();
  });

  it("one log's failed fsync fails only that log's waiters", async () => {
    const gc = new GroupCommit();
    const badFs = new FaultyFileSystem();
    const bad = await PartitionLog.open({ dir: join(dir, 'bad-0'), topicId: TOPIC_ID, config: logConfig(), fs: badFs, groupCommit: gc });
    const good = await PartitionLog.open({ dir: join(dir, 'good-0'), topicId: TOPIC_ID, config: logConfig(), groupCommit: gc });
    badFs.failNextSync();
    const [rb, rg] = await Promise.all([bad.appendAsLeader(batch(1), 0, { requiredAcks: -1 }), good.appendAsLeader(batch(1), 0, { requiredAcks: -1 })]);
    expect(rb.errorCode).toBe(ErrorCode.KAFKA_STORAGE_ERROR);
    expect(rg.errorCode).toBe(0);
    expect(good.highWatermark).toBe(1);
    await bad.close();
    await good.close();
  });

  it('honours flush.messages for acks=1', async () => {
    const fs = new FaultyFileSystem();
    const { log } = await openLog(dir, { flushMessages: 3 }, { fs });
    const before = fs.syncs;
    await log.appendAsLeader(batch(1), 0, { requiredAcks: 1 });
    await log.appendAsLeader(batch(1), 0, { requiredAcks: 1 });
    expect(fs.syncs).toBe(before);
    await log.appendAsLeader(batch(1), 0, { requiredAcks: 1 });
    expect(fs.syncs).toBe(before + 1);
    expect(log.recoveryPoint).toBe(3);
    await log.close();
  });

  it('honours flush.ms', async () => {
    const fs = new FaultyFileSystem();
    const { log, clock } = await openLog(dir, { flushMs: 1000 }, { fs });
    await log.appendAsLeader(batch(1), 0, { requiredAcks: 1 });
    await log.maybeFlushByTime();
    expect(log.recoveryPoint).toBe(0);
    clock.advance(1500);
    await log.maybeFlushByTime();
    expect(log.recoveryPoint).toBe(1);
    await log.close();
  });
  it('a truncation while an fsync runs leaves the recovery point at or below where it cut', async () => {
    // Offsets 2..4 are cut and written again while the fsync of the old 0..4 is in flight: the
    // new bytes are covered by no fsync, so the recovery point must not end past offset 2, or an
    // unclean restart would take a torn tail there for data that reached the disk.
    const fs = new GatedFileSystem();
    const { log } = await openLog(dir, {}, { fs });
    expect((await log.appendAsLeader(batch(2), 0, { requiredAcks: 1 })).errorCode).toBe(0);
    expect((await log.appendAsLeader(batch(3), 0, { requiredAcks: 1 })).errorCode).toBe(0);
    fs.hold();
    const flushing = log.flush();
    await waitFor('the fsync of the flush to reach the gate', () => fs.held > 0, 10_000, 5);
    await log.truncateTo(2);
    expect((await log.appendAsLeader(batch(3), 0, { requiredAcks: 1 })).errorCode).toBe(0);
    expect(log.logEndOffset).toBe(5);
    fs.releaseAll();
    await flushing;
    expect(log.recoveryPoint).toBeLessThanOrEqual(2);
    // The next fsync covers the new bytes and moves it on.
    await log.flush();
    expect(log.recoveryPoint).toBe(5);
    await log.close();
  });
});

describe('write and fsync failures', () => {
  it('a failed write leaves no bytes behind and the log usable', async () => {
    const fs = new FaultyFileSystem();
    const { log } = await openLog(dir, {}, { fs });
    const a = batch(2);
    await log.appendAsLeader(a, 0);
    fs.failNextWrite();
    expect((await log.appendAsLeader(batch(2), 0)).errorCode).toBe(ErrorCode.KAFKA_STORAGE_ERROR);
    expect(log.logEndOffset).toBe(2);
    fs.shortNextWrite(30);
    expect((await log.appendAsLeader(batch(2), 0)).errorCode).toBe(ErrorCode.KAFKA_STORAGE_ERROR);
    expect((await stat(join(dir, '00000000000000000000.log'))).size).toBe(a.length);
    const c = batch(3);
    expect(await log.appendAsLeader(c, 0)).toMatchObject({ errorCode: 0, baseOffset: 2 });
    expect((await readAll(log)).equals(Buffer.concat([a, c]))).toBe(true);
    await log.close();
  });

  it('a failed fsync takes the log offline', async () => {
    const fs = new FaultyFileSystem();
    const { log } = await openLog(dir, {}, { fs });
    fs.failNextSync();
    expect((await log.appendAsLeader(batch(2), 0, { requiredAcks: -1 })).errorCode).toBe(ErrorCode.KAFKA_STORAGE_ERROR);
    expect(log.isOffline).toBe(true);
    expect(log.highWatermark).toBe(0);
    expect((await log.appendAsLeader(batch(2), 0)).errorCode).toBe(ErrorCode.KAFKA_STORAGE_ERROR);
    await log.close();
  });

  it('a crash mid-write loses only the unacknowledged tail', async () => {
    const fs = new FaultyFileSystem();
    const { log } = await openLog(dir, { segmentBytes: 2000 }, { fs });
    const acked: Buffer[] = [];
    fs.crashAfterBytes(5000);
    for (let i = 0; i < 200; i++) {
      const b = batch(3, { tag: `c${i}` });
      const r = await log.appendAsLeader(b, 0, { requiredAcks: -1 });
      if (r.errorCode !== 0) break;
      acked.push(b);
    }
    expect(fs.isCrashed).toBe(true);
    await log.closeHandlers();
    expect(acked.length).toBeGreaterThan(5);
    const { log: again } = await openLog(dir, { segmentBytes: 2000 }, { fs: realFileSystem as FileSystem });
    const all = await readAll(again);
    expect(all.subarray(0, Buffer.concat(acked).length).equals(Buffer.concat(acked))).toBe(true);
    expect(again.logEndOffset).toBeGreaterThanOrEqual(acked.length * 3);
    expect((await again.appendAsLeader(batch(1), 0)).baseOffset).toBe(again.logEndOffset - 1);
    await again.close();
    expect((await readFile(join(dir, 'partition.metadata'), 'utf8')).includes(TOPIC_ID)).toBe(true);
  });
});

describe('the leader-epoch checkpoint', () => {
  const CHECKPOINT = 'leader-epoch-checkpoint';

  it('is not replaced by an append or a new leader epoch, nor by an fsync within the segment they start in; by the fsync whose recovery point passes them', async () => {
    const fs = new FaultyFileSystem();
    const { log } = await openLog(dir, { segmentBytes: 200 }, { fs });
    const before = fs.atomicWrites.get(CHECKPOINT) ?? 0;
    // A mirror's first append of a partition, then the source's next epoch; a new leader's epoch
    // at the log end and a leader append in it.
    expect((await log.appendAsMirror(batch(3, { baseOffset: 0, partitionLeaderEpoch: 4 }))).errorCode).toBe(0);
    expect((await log.appendAsMirror(batch(2, { baseOffset: 3, partitionLeaderEpoch: 6 }))).errorCode).toBe(0);
    await log.assignEpochStartOffset(9, 5);
    expect((await log.appendAsLeader(batch(1), 9, { requiredAcks: 1 })).errorCode).toBe(0);
    expect((await readdir(dir)).filter((f) => f.endsWith('.log')).length).toBe(2);
    expect(fs.atomicWrites.get(CHECKPOINT) ?? 0).toBe(before);
    expect(log.epochEntries).toEqual([
      { epoch: 4, startOffset: 0 },
      { epoch: 6, startOffset: 3 },
      { epoch: 9, startOffset: 5 },
    ]);
    expect(log.endOffsetForEpoch(6)).toEqual({ epoch: 6, endOffset: 5 });
    expect(log.recoveryPoint).toBe(0);
    // The recovery point moves into the second segment: the first segment's epoch must be in the file.
    await log.flush();
    expect(fs.atomicWrites.get(CHECKPOINT)).toBe(before + 1);
    expect(await readFile(join(dir, CHECKPOINT), 'utf8')).toBe('0\n3\n4 0\n6 3\n9 5\n');
    expect(log.recoveryPoint).toBe(6);
    // Nothing new: the next fsync leaves the file alone.
    expect((await log.appendAsLeader(batch(1), 9, { requiredAcks: -1 })).errorCode).toBe(0);
    expect(fs.atomicWrites.get(CHECKPOINT)).toBe(before + 1);
    // A new leader epoch and its first batch in the segment of the recovery point: recovery would
    // rebuild it, so its fsync leaves the file alone too.
    await log.assignEpochStartOffset(11, 7);
    expect((await log.appendAsLeader(batch(1), 11, { requiredAcks: -1 })).errorCode).toBe(0);
    expect(fs.atomicWrites.get(CHECKPOINT)).toBe(before + 1);
    expect(log.recoveryPoint).toBe(8);
    await log.close();
    expect(await readFile(join(dir, CHECKPOINT), 'utf8')).toBe('0\n4\n4 0\n6 3\n9 5\n11 7\n');
  });

  it('loses no epoch in a crash before that fsync, nor in one after it', async () => {
    const { log } = await openLog(dir, { segmentBytes: 200 });
    expect((await log.appendAsMirror(batch(3, { baseOffset: 0, partitionLeaderEpoch: 4 }))).errorCode).toBe(0);
    await log.flush();
    // In the segment of the recovery point: not written, a recovery from there finds it.
    expect(await readFile(join(dir, CHECKPOINT), 'utf8')).toBe('0\n0\n');
    // Past the recovery point, in later segments, and never in the file: a crash now.
    expect((await log.appendAsMirror(batch(2, { baseOffset: 3, partitionLeaderEpoch: 6 }))).errorCode).toBe(0);
    expect((await log.appendAsMirror(batch(2, { baseOffset: 5, partitionLeaderEpoch: 8 }))).errorCode).toBe(0);
    expect((await readdir(dir)).filter((f) => f.endsWith('.log')).length).toBeGreaterThan(1);
    await log.closeHandlers();
    const { log: again } = await openLog(dir, { segmentBytes: 200 }, { recoveryPoint: 3 });
    expect(again.logEndOffset).toBe(7);
    expect(again.epochEntries).toEqual([
      { epoch: 4, startOffset: 0 },
      { epoch: 6, startOffset: 3 },
      { epoch: 8, startOffset: 5 },
    ]);
    expect(again.endOffsetForEpoch(6)).toEqual({ epoch: 6, endOffset: 5 });
    // A fsync whose recovery point lies past the first segment writes the file; a crash after
    // it recovers from the later segment and keeps the epochs of the first from the file.
    expect((await again.appendAsMirror(batch(2, { baseOffset: 7, partitionLeaderEpoch: 9 }))).errorCode).toBe(0);
    await again.flush();
    const point = again.recoveryPoint;
    expect(point).toBe(9);
    await again.closeHandlers();
    const { log: third } = await openLog(dir, { segmentBytes: 200 }, { recoveryPoint: point });
    expect(third.epochEntries).toEqual([
      { epoch: 4, startOffset: 0 },
      { epoch: 6, startOffset: 3 },
      { epoch: 8, startOffset: 5 },
      { epoch: 9, startOffset: 7 },
    ]);
    await third.close();
  });
});
