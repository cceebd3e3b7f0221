import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FaultyFileSystem } from '../helpers/faulty-file-system.js';
import type { LogFile } from '../../src/storage/file-system.js';
import { GroupCommit } from '../../src/storage/group-commit.js';
import { logConfig } from '../../src/storage/log-config.js';
import { PartitionLog } from '../../src/storage/partition-log.js';
import { waitFor } from '../helpers/wait.js';
import { TOPIC_ID, batch, removeDir, tempDir } from './helpers.js';

let dir: string;
beforeEach(async () => {
  dir = await tempDir();
});
afterEach(async () => {
  await removeDir(dir);
});

/**
 * The real file system, with every `.log` file's writes and fsyncs observed: how many bytes each
 * file has written, how many a finished fsync covers (what was written before it started), and
 * the largest difference seen after any write. Optionally holds fsyncs until released.
 */
class ObservedFileSystem extends FaultyFileSystem {
  private gate: Promise<void> = Promise.resolve();
  private release: () => void = () => undefined;
  private writeGate: Promise<void> = Promise.resolve();
  private releaseWrite: () => void = () => undefined;
  /** fsyncs waiting at the gate. */
  held = 0;
  /** Writes waiting at their gate. */
  writesHeld = 0;
  maxUnflushed = 0;
  readonly events: string[] = [];
  private readonly written = new Map<LogFile, number>();
  private readonly synced = new Map<LogFile, number>();

  hold(): void {
    this.gate = new Promise((r) => (this.release = r));
  }
  releaseAll(): void {
    this.release();
    this.gate = Promise.resolve();
  }

  holdWrites(): void {
    this.writeGate = new Promise((r) => (this.releaseWrite = r));
  }
  releaseWrites(): void {
    this.releaseWrite();
    this.writeGate = Promise.resolve();
  }

  override async write(file: LogFile, buffers: readonly Buffer[], position: number): Promise<void> {
    this.writesHeld++;
    await this.writeGate;
    this.writesHeld--;
    await super.write(file, buffers, position);
    const total = (this.written.get(file) ?? 0) + buffers.reduce((n, b) => n + b.length, 0);
    this.written.set(file, total);
    this.events.push(`write-done ${total}`);
    this.maxUnflushed = Math.max(this.maxUnflushed, total - (this.synced.get(file) ?? 0));
  }

  override async sync(file: LogFile): Promise<void> {
    this.held++;
    await this.gate;
    this.held--;
    const covers = this.written.get(file) ?? 0;
    this.events.push(`sync-start ${covers}`);
    await super.sync(file);
    this.synced.set(file, Math.max(this.synced.get(file) ?? 0, covers));
  }
}

function open(name: string, fs: FaultyFileSystem, gc: GroupCommit, flushAheadBytes?: number): Promise<PartitionLog> {
  return PartitionLog.open({ dir: join(dir, name), topicId: TOPIC_ID, config: logConfig(), fs, groupCommit: gc, ...(flushAheadBytes === undefined ? {} : { flushAheadBytes }) });
}

describe('fsync scheduling', () => {
  it("acknowledges an acks=all write to one log while another log's fsync is still running", async () => {
    const gc = new GroupCommit();
    const slowFs = new ObservedFileSystem();
    const slow = await open('slow-0', slowFs, gc);
    const fast = await open('fast-0', new FaultyFileSystem(), gc);
    slowFs.hold();
    let slowDone = false;
    const slowAppend = slow.appendAsLeader(batch(1), 0, { requiredAcks: -1 }).then((r) => {
      slowDone = true;
      return r;
    });
    await waitFor('the slow fsync to start', () => slowFs.held === 1, 10_000, 5);
    // The slow log's fsync is running (held); the fast log's write must not wait for it.
    const r = await fast.appendAsLeader(batch(3), 0, { requiredAcks: -1 });
    expect(r.errorCode).toBe(0);
    expect(fast.highWatermark).toBe(3);
    expect(fast.recoveryPoint).toBe(3);
    expect(slowDone).toBe(false);
    expect(slow.highWatermark).toBe(0);
    slowFs.releaseAll();
    expect((await slowAppend).errorCode).toBe(0);
    expect(slow.highWatermark).toBe(1);
    await slow.close();
    await fast.close();
  });

  it('an acks=all write still in flight when an fsync of its log starts gets an fsync of its own', async () => {
    const gc = new GroupCommit();
    const fs = new ObservedFileSystem();
    const log = await open('p-0', fs, gc);
    expect((await log.appendAsLeader(batch(1), 0, { requiredAcks: 1 })).errorCode).toBe(0);
    fs.holdWrites();
    const second = log.appendAsLeader(batch(2), 0, { requiredAcks: -1 });
    await waitFor('the second write to start', () => fs.writesHeld === 1, 10_000, 5);
    // An fsync of the log runs, and ends, while the second write is still in flight.
    await log.flush();
    fs.releaseWrites();
    const r = await second;
    expect(r.errorCode).toBe(0);
    const secondWrite = fs.events.map((e) => e.startsWith('write-done')).lastIndexOf(true);
    expect(fs.events.slice(secondWrite + 1).filter((e) => e.startsWith('sync-start'))).toHaveLength(1);
    expect(log.recoveryPoint).toBe(3);
    await log.close();
  });

  it('keeps the unflushed data of an acks=1 writer within four times flushAheadBytes', async () => {
    const gc = new GroupCommit();
    const fs = new ObservedFileSystem();
    const flushAhead = 256 * 1024;
    const log = await open('bulk-0', fs, gc, flushAhead);
    const value = 'x'.repeat(1000);
    const one = (): Buffer => batch(32, { values: Array.from({ length: 32 }, () => value) });
    const batchBytes = one().length;
    const inflight = new Set<Promise<unknown>>();
    let records = 0;
    // 8 MiB through acks=1 appends, 8 in flight, as a producer pipelines them.
    while (records * 1000 < 8 * 1024 * 1024) {
      const p = log.appendAsLeader(one(), 0, { requiredAcks: 1 }).then((r) => {
        expect(r.errorCode).toBe(0);
        inflight.delete(p);
      });
      inflight.add(p);
      records += 32;
      if (inflight.size >= 8) await Promise.race(inflight);
    }
    await Promise.all(inflight);
    expect(log.logEndOffset).toBe(records);
    // Background fsyncs ran without any acks=all write or flush.ms: the recovery point moved.
    await waitFor('the background fsync', () => log.unflushedBytes < flushAhead, 30_000, 10);
    expect(log.recoveryPoint).toBeGreaterThan(0);
    expect(fs.maxUnflushed).toBeLessThanOrEqual(4 * flushAhead + batchBytes);
    await log.close();
  });

  it('leaves acks=1 data to the page cache with flushAheadBytes 0', async () => {
    const gc = new GroupCommit();
    const fs = new ObservedFileSystem();
    const log = await open('off-0', fs, gc, 0);
    for (let i = 0; i < 64; i++) expect((await log.appendAsLeader(batch(32, { values: Array.from({ length: 32 }, () => 'y'.repeat(1000)) }), 0, { requiredAcks: 1 })).errorCode).toBe(0);
    expect(fs.syncs).toBe(0);
    expect(log.recoveryPoint).toBe(0);
    expect(fs.maxUnflushed).toBeGreaterThan(1024 * 1024);
    await log.close();
  });
});

describe('file descriptors', () => {
  it('holds one descriptor per segment: index files are opened only to be read or written', async () => {
    const { readdir } = await import('node:fs/promises');
    const fds = async (): Promise<number> => (await readdir('/proc/self/fd')).length;
    const before = await fds();
    const logs: PartitionLog[] = [];
    for (let i = 0; i < 100; i++) logs.push(await PartitionLog.open({ dir: join(dir, `idle-${i}`), topicId: TOPIC_ID, config: logConfig() }));
    for (const log of logs.slice(0, 10)) expect((await log.appendAsLeader(batch(5), 0, { requiredAcks: -1 })).errorCode).toBe(0);
    // One .log per partition; three per segment (with .index and .timeindex) would be 300.
    expect((await fds()) - before).toBeLessThan(120);
    for (const log of logs) await log.close();
    // Closing and reopening reads the indexes back from their files.
    const again = await PartitionLog.open({ dir: join(dir, 'idle-0'), topicId: TOPIC_ID, config: logConfig() });
    expect(again.logEndOffset).toBe(5);
    await again.close();
  });
});
