import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../helpers/manual-clock.js';
import { logConfig, logConfigFromProps, DEFAULT_LOG_CONFIG } from '../../src/storage/log-config.js';
import { ErrorCode } from '../../src/protocol/generated/errors.js';
import { FaultyFileSystem } from '../helpers/faulty-file-system.js';
import { waitFor } from '../helpers/wait.js';
import { CLEAN_SHUTDOWN_FILE, LOG_START_OFFSET_FILE, LogManager, RECOVERY_POINT_FILE, parseOffsetCheckpoint } from '../../src/storage/log-manager.js';
import { TOPIC_ID, batch, batchOffsets, readAll, removeDir, tempDir } from './helpers.js';

let root: string;
beforeEach(async () => {
  root = await tempDir('fjord-lm-');
});
afterEach(async () => {
  await removeDir(root);
});

describe('LogConfig', () => {
  it('reads Kafka keys over Kafka defaults', () => {
    expect(DEFAULT_LOG_CONFIG.segmentBytes).toBe(1073741824);
    expect(DEFAULT_LOG_CONFIG.indexIntervalBytes).toBe(4096);
    expect(DEFAULT_LOG_CONFIG.maxMessageBytes).toBe(1048588);
    expect(DEFAULT_LOG_CONFIG.retentionMs).toBe(604800000);
    const c = logConfigFromProps({ 'segment.bytes': '1000', 'cleanup.policy': 'compact,delete', 'message.timestamp.type': 'LogAppendTime', 'retention.ms': '-1' });
    expect(c).toMatchObject({ segmentBytes: 1000, cleanupPolicy: ['compact', 'delete'], messageTimestampType: 'LogAppendTime', retentionMs: -1, indexIntervalBytes: 4096 });
    expect(() => logConfigFromProps({ 'cleanup.policy': 'shred' })).toThrow();
    expect(() => logConfigFromProps({ 'segment.ms': 'soon' })).toThrow();
  });
});

describe('LogManager', () => {
  it('creates logs across its dirs, writes checkpoints and the clean-shutdown marker, and reopens them', async () => {
    const dirs = [join(root, 'a'), join(root, 'b')];
    const m = await LogManager.open({ logDirs: dirs });
    const l0 = await m.getOrCreate('orders', 0, TOPIC_ID);
    const l1 = await m.getOrCreate('orders', 1, TOPIC_ID);
    const l2 = await m.getOrCreate('my.topic-x', 2, TOPIC_ID);
    expect(await m.getOrCreate('orders', 0, TOPIC_ID)).toBe(l0);
    await expect(m.getOrCreate('orders', 0, 'BBBBBBBBBBBBBBBBBBBBBB')).rejects.toMatchObject({ code: ErrorCode.INCONSISTENT_TOPIC_ID });
    // Each new partition goes to the dir holding the fewest.
    expect([m.dirOf('orders', 0), m.dirOf('orders', 1), m.dirOf('my.topic-x', 2)]).toEqual([dirs[0], dirs[1], dirs[0]]);
    const b0 = batch(2);
    await l0.appendAsLeader(b0, 0);
    await l1.appendAsLeader(batch(3), 0);
    await l2.appendAsLeader(batch(1), 0);
    expect(await m.close()).toBe(true);
    await m.markCleanShutdown();
    for (const d of dirs) expect(await readdir(d)).toContain(CLEAN_SHUTDOWN_FILE);
    expect(await readdir(dirs[0] as string)).toEqual(expect.arrayContaining(['orders-0', 'my.topic-x-2']));
    expect(await readdir(dirs[1] as string)).toContain('orders-1');
    // Each dir checkpoints its own logs.
    const rpA = parseOffsetCheckpoint(await readFile(join(dirs[0] as string, 'recovery-point-offset-checkpoint'), 'utf8'));
    const rpB = parseOffsetCheckpoint(await readFile(join(dirs[1] as string, 'recovery-point-offset-checkpoint'), 'utf8'));
    expect([...rpA.entries()].sort()).toEqual([['my.topic-x-2', 1], ['orders-0', 2]]);
    expect([...rpB.entries()]).toEqual([['orders-1', 3]]);

    const again = await LogManager.open({ logDirs: dirs });
    for (const d of dirs) expect(again.cleanShutdown(d)).toBe(true);
    for (const d of dirs) expect(await readdir(d)).not.toContain(CLEAN_SHUTDOWN_FILE);
    expect((await again.getOrCreate('orders', 1, TOPIC_ID)).logEndOffset).toBe(3);
    expect(again.dirOf('orders', 1)).toBe(dirs[1]);
    expect((await again.getOrCreate('my.topic-x', 2, TOPIC_ID)).logEndOffset).toBe(1);
    expect((await readAll(await again.getOrCreate('orders', 0, TOPIC_ID))).equals(b0)).toBe(true);
    expect(again.all().length).toBe(3);
    await again.delete('orders', 1);
    expect(again.get('orders', 1)).toBeUndefined();
    expect(await readdir(dirs[1] as string)).not.toContain('orders-1');
    await again.close();
  });

  it('recovers logs after an unclean shutdown (no marker)', async () => {
    const dirs = [join(root, 'a')];
    const m = await LogManager.open({ logDirs: dirs });
    const log = await m.getOrCreate('t', 0, TOPIC_ID);
    for (let i = 0; i < 5; i++) await log.appendAsLeader(batch(2), 1, { requiredAcks: -1 });
    // the process dies: no close, no marker
    await log.closeHandlers();
    const again = await LogManager.open({ logDirs: dirs });
    expect(again.cleanShutdown(dirs[0] as string)).toBe(false);
    const reopened = await again.getOrCreate('t', 0, TOPIC_ID);
    expect(reopened.logEndOffset).toBe(10);
    expect(reopened.latestEpoch).toBe(1);
    await again.close();
  });

  it('removes the partitions found at open that are no longer wanted, in every dir', async () => {
    const dirs = [join(root, 'a'), join(root, 'b')];
    const m = await LogManager.open({ logDirs: dirs });
    await m.getOrCreate('keep', 0, TOPIC_ID);
    await m.getOrCreate('gone', 0, TOPIC_ID);
    await m.close();
    const again = await LogManager.open({ logDirs: dirs });
    await again.deleteStrays((topic) => topic === 'keep');
    const left = [...(await readdir(dirs[0] as string)), ...(await readdir(dirs[1] as string))];
    expect(left).toContain('keep-0');
    expect(left).not.toContain('gone-0');
    await again.close();
  });

  it('persists the log start offset moved by DeleteRecords and runs retention', async () => {
    const clock = new ManualClock();
    const dirs = [join(root, 'a')];
    const cfg = logConfig({ segmentBytes: 200, retentionMs: 1000 });
    const m = await LogManager.open({ logDirs: dirs, clock, configFor: () => cfg });
    const log = await m.getOrCreate('t', 0, TOPIC_ID);
    for (let i = 0; i < 10; i++) await log.appendAsLeader(batch(2, { timestamp: clock.now() }), 0);
    await log.deleteRecordsBefore(5);
    await m.close();
    const again = await LogManager.open({ logDirs: dirs, clock, configFor: () => cfg });
    const reopened = await again.getOrCreate('t', 0, TOPIC_ID);
    expect(reopened.logStartOffset).toBe(5);
    clock.advance(5000);
    expect(await again.runRetention()).toBeGreaterThan(0);
    expect(reopened.logStartOffset).toBe(20);
    await again.close();
  });

  it('runs retention, the cleaner and flush.ms on its tick', async () => {
    const clock = new ManualClock();
    const dirs = [join(root, 'a')];
    const cfgs: Record<string, ReturnType<typeof logConfig>> = {
      old: logConfig({ segmentBytes: 200, retentionMs: 1000 }),
      kv: logConfig({ segmentBytes: 100, cleanupPolicy: ['compact'] }),
      slow: logConfig({ flushMs: 500 }),
    };
    const m = await LogManager.open({
      logDirs: dirs,
      clock,
      configFor: (t) => cfgs[t] ?? logConfig(),
      retentionCheckIntervalMs: 20,
      cleanerBackoffMs: 20,
      flushCheckIntervalMs: 20,
    });
    const old = await m.getOrCreate('old', 0, TOPIC_ID);
    for (let i = 0; i < 10; i++) await old.appendAsLeader(batch(2, { timestamp: clock.now() }), 0);
    const kv = await m.getOrCreate('kv', 0, TOPIC_ID);
    for (let i = 0; i < 8; i++) await kv.appendAsLeader(batch(1, { keys: ['same'], values: [`v${i}`] }), 0);
    const slow = await m.getOrCreate('slow', 0, TOPIC_ID);
    await slow.appendAsLeader(batch(1), 0, { requiredAcks: 1 });
    const kvSize = kv.size;
    clock.advance(5000);
    m.startTasks();
    await waitFor('retention, compaction and the time flush to run', () => old.logStartOffset === 20 && kv.size < kvSize && slow.recoveryPoint === 1, 30_000, 10);
    expect(old.logStartOffset).toBe(20);
    expect(kv.size).toBeLessThan(kvSize);
    expect(slow.recoveryPoint).toBe(1);
    await m.close();
  });

  it('leaves the controller metadata log alone', async () => {
    const dirs = [join(root, 'a')];
    const m = await LogManager.open({ logDirs: dirs });
    await m.close();
    const { PartitionLog } = await import('../../src/storage/partition-log.js');
    const meta = await PartitionLog.open({ dir: join(dirs[0] as string, '__cluster_metadata-0'), topicId: TOPIC_ID, config: logConfig() });
    await meta.close();
    const again = await LogManager.open({ logDirs: dirs });
    await again.deleteStrays(() => false);
    expect(await readdir(dirs[0] as string)).toContain('__cluster_metadata-0');
    expect(again.all()).toEqual([]);
    await again.close();
  });
});

describe('LogManager checkpoints', () => {
  it('a checkpoint that finds every offset as last written rewrites neither file; one that finds a change rewrites both', async () => {
    const dirs = [join(root, 'a')];
    const m = await LogManager.open({ logDirs: dirs });
    const log = await m.getOrCreate('t', 0, TOPIC_ID);
    const files = [RECOVERY_POINT_FILE, LOG_START_OFFSET_FILE].map((f) => join(dirs[0] as string, f));
    // Each write is a new file renamed over the old one: a new inode.
    const inodes = async (): Promise<number[]> => Promise.all(files.map(async (f) => (await stat(f)).ino));
    await m.checkpoint();
    const first = await inodes();
    await m.checkpoint();
    expect(await inodes()).toEqual(first);
    expect((await log.appendAsLeader(batch(5), 0, { requiredAcks: -1 })).errorCode).toBe(0);
    await log.deleteRecordsBefore(3);
    await m.checkpoint();
    const second = await inodes();
    expect(second.every((ino, i) => ino !== first[i])).toBe(true);
    expect(parseOffsetCheckpoint(await readFile(files[0] as string, 'utf8')).get('t-0')).toBe(5);
    expect(parseOffsetCheckpoint(await readFile(files[1] as string, 'utf8')).get('t-0')).toBe(3);
    await m.close();
  });
});

describe('LogManager checkpoint faults', () => {
  it('a failed checkpoint write at shutdown leaves no clean-shutdown marker: the next start recovers and keeps every acknowledged record', async () => {
    const dirs = [join(root, 'a'), join(root, 'b')];
    const fs = new FaultyFileSystem();
    const m = await LogManager.open({ logDirs: dirs, fs });
    const a = await m.getOrCreate('t', 0, TOPIC_ID);
    const b = await m.getOrCreate('t', 1, TOPIC_ID);
    for (let i = 0; i < 4; i++) {
      expect((await a.appendAsLeader(batch(2), 0, { requiredAcks: -1 })).errorCode).toBe(0);
      expect((await b.appendAsLeader(batch(3), 0, { requiredAcks: -1 })).errorCode).toBe(0);
    }
    await a.deleteRecordsBefore(4);
    await m.checkpoint();
    // An acknowledged write since (its flush moves the recovery point), so that the shutdown's checkpoint writes.
    expect((await b.appendAsLeader(batch(3), 0, { requiredAcks: -1 })).errorCode).toBe(0);
    fs.failNextAtomicWrite(RECOVERY_POINT_FILE);
    expect(await m.close()).toBe(false);
    await m.markCleanShutdown();
    for (const d of dirs) expect(await readdir(d)).not.toContain(CLEAN_SHUTDOWN_FILE);

    const again = await LogManager.open({ logDirs: dirs });
    for (const d of dirs) expect(again.cleanShutdown(d)).toBe(false);
    const ra = await again.getOrCreate('t', 0, TOPIC_ID);
    const rb = await again.getOrCreate('t', 1, TOPIC_ID);
    expect([ra.logStartOffset, ra.logEndOffset, rb.logEndOffset]).toEqual([4, 8, 15]);
    expect(batchOffsets(await readAll(rb))).toEqual([0, 3, 6, 9, 12]);
    await again.close();
  });

  it('a failed periodic checkpoint write is retried on the next tick while appends go on', async () => {
    const dirs = [join(root, 'a')];
    const fs = new FaultyFileSystem();
    const m = await LogManager.open({ logDirs: dirs, fs, flushCheckIntervalMs: 10 });
    const log = await m.getOrCreate('t', 0, TOPIC_ID);
    await m.checkpoint();
    expect((await log.appendAsLeader(batch(5), 0, { requiredAcks: -1 })).errorCode).toBe(0);
    fs.failNextAtomicWrite(LOG_START_OFFSET_FILE, 3);
    await expect(m.checkpoint()).rejects.toThrow(/log-start-offset-checkpoint/);
    await log.deleteRecordsBefore(2);
    m.startTasks();
    const path = join(dirs[0] as string, LOG_START_OFFSET_FILE);
    const logStart = async (): Promise<number | undefined> => parseOffsetCheckpoint(await readFile(path, 'utf8')).get('t-0');
    await waitFor('the log start offset checkpoint to hold 2', async () => (await logStart()) === 2, 30_000, 10);
    expect(await logStart()).toBe(2);
    await m.close();
  });
});
