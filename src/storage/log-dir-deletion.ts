/**
 * How a partition directory is deleted (Kafka's UnifiedLog.logDeleteDirName and
 * LogManager.asyncDelete): it is first renamed `<topic>-<partition>.<unique id>-delete` and the
 * rename made durable, then removed. A crash in between leaves a `-delete` directory, which is
 * never read as a partition again and is removed when the log dirs are next opened, so a deleted
 * replica can never come back with its old records.
 */
import { randomUUID } from 'node:crypto';
import { basename, dirname, join } from 'node:path';
import type { FileSystem } from './file-system.js';

const DELETE_DIR_SUFFIX = '-delete';
const DELETE_DIR = /^.+-\d+\.[0-9a-f]{32}-delete$/;

/** True for a directory name made by `deletePartitionDir` (left behind by a crash). */
export function isDeleteDir(name: string): boolean {
  return DELETE_DIR.test(name);
}

/** Renames the partition directory to its `-delete` name, fsyncs the parent, then removes it. */
export async function deletePartitionDir(fs: FileSystem, dir: string): Promise<void> {
  if (!(await fs.exists(dir))) return;
  const parent = dirname(dir);
  const doomed = join(parent, `${basename(dir)}.${randomUUID().replace(/-/g, '')}${DELETE_DIR_SUFFIX}`);
  await fs.rename(dir, doomed);
  await fs.syncDir(parent);
  await fs.rmrf(doomed);
}
