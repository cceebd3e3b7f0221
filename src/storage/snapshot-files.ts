import { join } from 'node:path';
import type { FileSystem } from './file-system.js';
import { segmentFileName } from './log-segment.js';

/** Producer-state snapshots are `<20-digit offset>.snapshot`, Kafka's naming. */
const SNAPSHOT_SUFFIX = '.snapshot';

export async function listSnapshotOffsets(fs: FileSystem, dir: string): Promise<number[]> {
  const names = await fs.readdir(dir);
  return names
    .filter((n) => n.endsWith(SNAPSHOT_SUFFIX) && /^\d{20}\.snapshot$/.test(n))
    .map((n) => Number(n.slice(0, 20)))
    .sort((a, b) => a - b);
}

export function snapshotPath(dir: string, offset: number): string {
  return join(dir, segmentFileName(offset, SNAPSHOT_SUFFIX));
}

/** Deletes snapshots whose offset is not in [min, max]. */
export async function deleteSnapshotsOutside(fs: FileSystem, dir: string, min: number, max: number): Promise<void> {
  for (const off of await listSnapshotOffsets(fs, dir)) {
    if (off < min || off > max) await fs.unlink(snapshotPath(dir, off));
  }
}
