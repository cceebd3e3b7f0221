import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildRecordBatch, type RecordBatchInput } from '../../src/protocol/records.js';
import { ManualClock } from '../helpers/manual-clock.js';
import type { FileSystem } from '../../src/storage/file-system.js';
import { logConfig, type LogConfig } from '../../src/storage/log-config.js';
import { PartitionLog } from '../../src/storage/partition-log.js';

export const TOPIC_ID = 'AAAAAAAAAAAAAAAAAAAAAA';

export async function tempDir(prefix = 'fjord-log-'): Promise<string> {
  return mkdtemp(join(tmpdir(), prefix));
}

export async function removeDir(dir: string): Promise<void> {
  await rm(dir, { recursive: true, force: true });
}

/** A batch of `n` records with values `${tag}-${i}`, keys optional. */
export function batch(n: number, opts: Partial<RecordBatchInput> & { tag?: string; keys?: (string | null)[]; values?: (string | null)[]; timestamp?: number } = {}): Buffer {
  const tag = opts.tag ?? 'v';
  const records = Array.from({ length: n }, (_, i) => {
    const key = opts.keys?.[i];
    const value = opts.values !== undefined ? opts.values[i] : `${tag}-${i}`;
    return {
      key: key === undefined || key === null ? null : Buffer.from(key),
      value: value === null || value === undefined ? null : Buffer.from(value),
      ...(opts.timestamp !== undefined ? { timestamp: opts.timestamp + i } : {}),
    };
  });
  const rest: Partial<RecordBatchInput> & { tag?: string; keys?: unknown; values?: unknown; timestamp?: number } = { ...opts };
  delete rest.tag;
  delete rest.keys;
  delete rest.values;
  delete rest.timestamp;
  return buildRecordBatch({ now: opts.timestamp ?? 1_700_000_000_000, ...rest, records });
}

export interface Opened {
  log: PartitionLog;
  dir: string;
  clock: ManualClock;
}

export async function openLog(
  dir: string,
  config: Partial<LogConfig> = {},
  extra: { fs?: FileSystem; clock?: ManualClock; cleanShutdown?: boolean; recoveryPoint?: number } = {},
): Promise<Opened> {
  const clock = extra.clock ?? new ManualClock(1_700_000_000_000);
  const log = await PartitionLog.open({
    dir,
    topicId: TOPIC_ID,
    config: logConfig(config),
    clock,
    ...(extra.fs !== undefined ? { fs: extra.fs } : {}),
    ...(extra.cleanShutdown !== undefined ? { cleanShutdown: extra.cleanShutdown } : {}),
    ...(extra.recoveryPoint !== undefined ? { recoveryPoint: extra.recoveryPoint } : {}),
  });
  return { log, dir, clock };
}

/** Reads everything from `from` to the log end as one buffer. */
export async function readAll(log: PartitionLog, from = log.logStartOffset): Promise<Buffer> {
  const parts: Buffer[] = [];
  let offset = from;
  while (offset < log.logEndOffset) {
    const r = await log.readToBuffer({ fetchOffset: offset, maxOffset: log.logEndOffset, maxBytes: 1 << 20, minOneMessage: true });
    if (r.errorCode !== 0) throw new Error(`read error ${r.errorCode}`);
    if (r.records.length === 0) break;
    parts.push(r.records);
    let at = 0;
    while (at < r.records.length) {
      const size = 12 + r.records.readInt32BE(at + 8);
      const base = Number(r.records.readBigInt64BE(at));
      offset = base + r.records.readInt32BE(at + 23) + 1;
      at += size;
    }
  }
  return Buffer.concat(parts);
}

/** Base offsets of the batches in a buffer. */
export function batchOffsets(buf: Buffer): number[] {
  const out: number[] = [];
  let at = 0;
  while (at < buf.length) {
    out.push(Number(buf.readBigInt64BE(at)));
    at += 12 + buf.readInt32BE(at + 8);
  }
  return out;
}
