import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { INLINE_WRITE_MAX_BYTES, realFileSystem } from '../../src/storage/file-system.js';
import { removeDir, tempDir } from './helpers.js';

let dir: string;
beforeEach(async () => {
  dir = await tempDir();
});
afterEach(async () => {
  await removeDir(dir);
});

/** `n` bytes counting up from `seed`, so a byte out of place shows. */
function bytes(n: number, seed: number): Buffer {
  const b = Buffer.allocUnsafe(n);
  for (let i = 0; i < n; i++) b[i] = (seed + i) & 0xff;
  return b;
}

describe('log file writes, on the event loop and in the thread pool', () => {
  // Small writes are made in place (writeSync/writevSync), larger ones through the pool: both
  // must put every buffer at its position, in order, skipping empty ones.
  for (const [what, size] of [
    ['in place', 1000],
    ['in the pool', INLINE_WRITE_MAX_BYTES],
  ] as const) {
    it(`writes several buffers at a position, in order (${what})`, async () => {
      const path = join(dir, 'f.log');
      const file = await realFileSystem.open(path, 'write');
      const head = bytes(10, 1);
      await file.writeAll([head], 0);
      const parts = [bytes(size, 7), Buffer.alloc(0), bytes(333, 99), bytes(size, 200)];
      await file.writeAll(parts, head.length);
      await file.writeAll([Buffer.alloc(0)], head.length + 2 * size + 333);
      await file.close();
      expect((await readFile(path)).equals(Buffer.concat([head, ...parts]))).toBe(true);
    });
  }

  it('writes one large buffer at a position (in the pool)', async () => {
    const path = join(dir, 'one.log');
    const file = await realFileSystem.open(path, 'write');
    const head = bytes(10, 1);
    const big = bytes(3 * INLINE_WRITE_MAX_BYTES + 5, 42);
    await file.writeAll([head], 0);
    await file.writeAll([big], head.length);
    await file.close();
    expect((await readFile(path)).equals(Buffer.concat([head, big]))).toBe(true);
  });

  it('a write to a closed file rejects its promise instead of throwing', async () => {
    const file = await realFileSystem.open(join(dir, 'g.log'), 'write');
    await file.close();
    let threw = false;
    let result: Promise<void> | undefined;
    try {
      result = file.writeAll([bytes(100, 3)], 0);
    } catch {
      threw = true;
    }
    expect(threw).toBe(false);
    await expect(result).rejects.toThrow();
  });
});
