/**
 * Deleting a partition directory the way Kafka's LogManager does: renamed
 * `<topic>-<partition>.<unique id>-delete` first, so a crash before the removal finishes never
 * brings the partition back; the leftover is removed when the log dirs are next opened.
 */
import { readdir } from 'node:fs/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { realFileSystem, type FileSystem } from '../../src/storage/file-system.js';
import { LogManager } from '../../src/storage/log-manager.js';
import { TOPIC_ID, batch, removeDir, tempDir } from './helpers.js';

let root: string;
beforeEach(async () => {
  root = await tempDir('fjord-del-');
});
afterEach(async () => {
  await removeDir(root);
});

describe('partition directory deletion', () => {
  it('renames the directory -delete before removing it; a leftover from a crash is removed at the next open and never read as a partition', async () => {
    const renames: string[] = [];
    // The process "dies" after the rename: removing the renamed directory fails.
    const crashing: FileSystem = {
      ...realFileSystem,
      rename: async (from, to) => {
        renames.push(to);
        await realFileSystem.rename(from, to);
      },
      rmrf: async (path) => {
        if (path.endsWith('-delete')) throw new Error('crashed before the removal');
        await realFileSystem.rmrf(path);
      },
    };
    const m = await LogManager.open({ logDirs: [root], fs: crashing });
    const log = await m.getOrCreate('orders', 3, TOPIC_ID);
    await log.appendAsLeader(batch(2), 0);
    await expect(m.delete('orders', 3, TOPIC_ID)).rejects.toThrow('crashed before the removal');
    expect(renames.map((r) => r.slice(root.length + 1))).toEqual([expect.stringMatching(/^orders-3\.[0-9a-f]{32}-delete$/)]);
    expect((await readdir(root)).filter((n) => n.startsWith('orders'))).toEqual([expect.stringMatching(/-delete$/)]);
    await m.close();

    const again = await LogManager.open({ logDirs: [root] });
    expect((await readdir(root)).filter((n) => n.startsWith('orders'))).toEqual([]);
    expect(again.hasUnopened('orders', 3)).toBe(false);
    // Created again, the partition starts empty: nothing of the deleted log came back.
    const fresh = await again.getOrCreate('orders', 3, TOPIC_ID);
    expect(fresh.logEndOffset).toBe(0);
    await again.close();
  });

  it('deleteStrays removes an unopened partition directory the same way', async () => {
    const m = await LogManager.open({ logDirs: [root] });
    await (await m.getOrCreate('kept', 0, TOPIC_ID)).appendAsLeader(batch(1), 0);
    await (await m.getOrCreate('moved', 0, TOPIC_ID)).appendAsLeader(batch(1), 0);
    await m.close();
    const again = await LogManager.open({ logDirs: [root] });
    await again.deleteStrays((topic) => topic === 'kept');
    expect((await readdir(root)).filter((n) => n.startsWith('kept') || n.startsWith('moved')).sort()).toEqual(['kept-0']);
    await again.close();
  });
});
