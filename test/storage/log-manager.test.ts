import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/storage/clock.js';
import { logConfig, logConfigFromProps, DEFAULT_LOG_CONFIG } from '../../src/storage/log-config.js';
import { CLEAN_SHUTDOWN_FILE, LogManager, parseOffsetCheckpoint } from '../../src/storage/log-manager.js';
import { TOPIC_ID, batch, readAll, removeDir, tempDir } from './helpers.js';

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
  it('creates logs, writes checkpoints and the clean-shutdown marker, and reopens them', async () => {
    const dirs = [join(root, 'a'), join(root, 'b')];
    const m = await LogManager.open({ logDirs: dirs });
    const l0 = await m.getOrCreate('orders', 0, TOPIC_ID);
    const l1 = await m.getOrCreate('orders', 1, TOPIC_ID);
    const l2 = await m.getOrCreate('my.topic-x', 2, TOPIC_ID);
    expect(await m.getOrCreate('orders', 0, TOPIC_ID)).toBe(l0);
    await expect(m.getOrCreate('orders', 0, 'BBBBBBBBBBBBBBBBBBBBBB')).rejects.toThrow();
    const b0 = batch(2);
    await l0.appendAsLeader(b0, 0);
    await l1.appendAsLeader(batch(3), 0);
    await l2.appendAsLeader(batch(1), 0);
    await m.close();
    for (const d of dirs) expect(await readdir(d)).toContain(CLEAN_SHUTDOWN_FILE);
    const names = [...(await readdir(dirs[0] as string)), ...(await readdir(dirs[1] as string))];
    expect(names).toEqual(expect.arrayContaining(['orders-0', 'orders-1', 'my.topic-x-2']));
    const rp = new Map<string, number>();
    for (const d of dirs) for (const [k, v] of parseOffsetCheckpoint(await readFile(join(d, 'recovery-point-offset-checkpoint'), 'utf8'))) rp.set(k, v);
    expect(rp.get('orders-1')).toBe(3);

    const again = await LogManager.open({ logDirs: dirs });
    for (const d of dirs) expect(await readdir(d)).not.toContain(CLEAN_SHUTDOWN_FILE);
    expect(again.all().length).toBe(3);
    expect(again.get('orders', 1)?.logEndOffset).toBe(3);
    expect(again.get('my.topic-x', 2)?.logEndOffset).toBe(1);
    expect((await readAll(again.get('orders', 0)!)).equals(b0)).toBe(true);
    await again.delete('orders', 1);
    expect(again.get('orders', 1)).toBeUndefined();
    const left = [...(await readdir(dirs[0] as string)), ...(await readdir(dirs[1] as string))];
    expect(left).not.toContain('orders-1');
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
    expect(again.get('t', 0)?.logEndOffset).toBe(10);
    expect(again.get('t', 0)?.latestEpoch).toBe(1);
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
    expect(again.get('t', 0)?.logStartOffset).toBe(5);
    clock.advance(5000);
    expect(await again.runRetention()).toBeGreaterThan(0);
    expect(again.get('t', 0)?.logStartOffset).toBe(20);
    await again.close();
  });

  it('runs retention, the cleaner and flush.ms on its timers', async () => {
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
      cleanerIntervalMs: 20,
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
    const until = async (cond: () => boolean): Promise<void> => {
      for (let i = 0; i < 200 && !cond(); i++) await new Promise((r) => setTimeout(r, 10));
    };
    await until(() => old.logStartOffset === 20 && kv.size < kvSize && slow.recoveryPoint === 1);
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
    expect(again.all()).toEqual([]);
    await again.close();
  });
});
