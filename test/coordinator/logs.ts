import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CoordinatorLog } from '../../src/coordinator/coordinator-host.js';
import { coordinatorLogOf } from '../../src/coordinator/partition-log-adapter.js';
import { FaultyFileSystem } from '../helpers/faulty-file-system.js';
import { logConfig } from '../../src/storage/log-config.js';
import { PartitionLog } from '../../src/storage/partition-log.js';

/** Real partition logs of internal topics in a temp dir, over a file system that fails on request. */
export class TempLogs {
  readonly root = mkdtempSync(join(tmpdir(), 'fjord-coord-'));
  readonly fs = new FaultyFileSystem();
  private readonly open = new Map<string, PartitionLog>();

  readonly openLog = async (topic: string, partition: number): Promise<CoordinatorLog> => {
    const key = `${topic}-${partition}`;
    let log = this.open.get(key);
    if (!log) {
      log = await PartitionLog.open({ dir: join(this.root, key), topicId: '00000000-0000-0000-0000-000000000001', config: logConfig({ cleanupPolicy: ['compact'] }), fs: this.fs });
      this.open.set(key, log);
    }
    return coordinatorLogOf(log);
  };

  /** The raw PartitionLog of a partition opened before (data partitions in transaction tests). */
  async raw(topic: string, partition: number): Promise<PartitionLog> {
    await this.openLog(topic, partition);
    return this.open.get(`${topic}-${partition}`)!;
  }

  /** Closes every log (a node stopping); the next openLog reads them back from disk. */
  async closeAll(): Promise<void> {
    for (const log of this.open.values()) await log.close();
    this.open.clear();
  }

  async destroy(): Promise<void> {
    await this.closeAll();
    rmSync(this.root, { recursive: true, force: true });
  }
}
