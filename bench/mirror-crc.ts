/**
 * The cost of the mirror path's per-batch CRC-32C check (src/protocol/fetched-batch-walk.ts), with and
 * without it in the same run: fetch responses of 1 MiB (magic-2 batches of 32 × 512 B records,
 * built once) go through the batch walk alone, then through the walk and `appendAsMirror` into a
 * fresh Fjord partition log, which is what the fetcher does with each fetched partition (the
 * network is left out so that the check's share is not hidden by loopback noise). Prints MB/s
 * for both, and the ratio with/without (1.0 = free).
 *
 *   node bench/run.mjs bench/mirror-crc.ts   (MIRROR_CRC_BENCH_MB=64, MIRROR_CRC_BENCH_REPEATS=3 by default)
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { walkFetchedBatches } from '../src/protocol/fetched-batch-walk.js';
import { buildRecordBatch } from '../src/protocol/records.js';
import { logConfig } from '../src/storage/log-config.js';
import { PartitionLog } from '../src/storage/partition-log.js';

const TOTAL_MB = Number(process.env.MIRROR_CRC_BENCH_MB ?? 64);
const REPEATS = Number(process.env.MIRROR_CRC_BENCH_REPEATS ?? 3);
const RECORDS_PER_BATCH = 32;
const RECORD_BYTES = 512;
const RESPONSE_BYTES = 1 << 20;
const MAX_BYTES = RESPONSE_BYTES;

/** Fetch responses' records, each a run of whole batches at consecutive offsets from 0. */
function buildResponses(): Buffer[] {
  const responses: Buffer[] = [];
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  let offset = 0;
  let total = 0;
  while (total < TOTAL_MB * 1024 * 1024) {
    const b = buildRecordBatch({ baseOffset: offset, partitionLeaderEpoch: 0, records: Array.from({ length: RECORDS_PER_BATCH }, () => ({ value: randomBytes(RECORD_BYTES) })) });
    offset += RECORDS_PER_BATCH;
    total += b.length;
    if (pendingBytes + b.length > RESPONSE_BYTES) {
      responses.push(Buffer.concat(pending));
      pending = [];
      pendingBytes = 0;
    }
    pending.push(b);
    pendingBytes += b.length;
  }
  if (pending.length > 0) responses.push(Buffer.concat(pending));
  return responses;
}

const responses = buildResponses();
const bytes = responses.reduce((n, r) => n + r.length, 0);

function walkOnly(verifyCrc: boolean): number {
  const t0 = process.hrtime.bigint();
  let fetchOffset = 0;
  for (const r of responses) {
    const run = walkFetchedBatches(r, fetchOffset, -1, 1_000, MAX_BYTES, verifyCrc);
    if (run.corrupt !== null || run.start < 0) throw new Error('the walk refused a good response');
    fetchOffset = run.lastOffset + 1;
  }
  return Number(process.hrtime.bigint() - t0) / 1e9;
}

async function walkAndAppend(verifyCrc: boolean): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), 'fjord-bench-mirror-crc-'));
  const log = await PartitionLog.open({ dir: join(dir, 'bench-0'), topicId: '5f1c2a9e-0b7d-4c3e-9a61-2d8e4f6b7c10', config: logConfig() });
  const t0 = process.hrtime.bigint();
  for (const r of responses) {
    const run = walkFetchedBatches(r, log.logEndOffset, -1, 1_000, MAX_BYTES, verifyCrc);
    if (run.corrupt !== null || run.start < 0) throw new Error('the walk refused a good response');
    const res = await log.appendAsMirror(r.subarray(run.start, run.end));
    if (res.errorCode !== 0) throw new Error(`appendAsMirror failed with ${res.errorCode}: ${res.errorMessage ?? ''}`);
  }
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
  await log.close();
  rmSync(dir, { recursive: true, force: true });
  return seconds;
}

function median(xs: number[]): number {
  return [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
}

const mbps = (s: number): string => (bytes / 1024 / 1024 / s).toFixed(0);

// Interleaved rounds, the median of each printed (the machine is shared).
const walk = { on: [] as number[], off: [] as number[] };
const path = { on: [] as number[], off: [] as number[] };
walkOnly(true);
walkOnly(false);
for (let i = 0; i < REPEATS; i++) {
  walk.off.push(walkOnly(false));
  walk.on.push(walkOnly(true));
  path.off.push(await walkAndAppend(false));
  path.on.push(await walkAndAppend(true));
}
console.log(`mirror CRC-32C check: ${responses.length} responses of up to 1 MiB, ${(bytes / 1024 / 1024).toFixed(0)} MiB in batches of ${RECORDS_PER_BATCH} x ${RECORD_BYTES} B, median of ${REPEATS}`);
const [wOn, wOff, pOn, pOff] = [median(walk.on), median(walk.off), median(path.on), median(path.off)];
console.log(`  batch walk             without CRC ${mbps(wOff)} MB/s   with CRC ${mbps(wOn)} MB/s   ratio with/without ${(wOff / wOn).toFixed(3)}`);
console.log(`  walk + appendAsMirror  without CRC ${mbps(pOff)} MB/s   with CRC ${mbps(pOn)} MB/s   ratio with/without ${(pOff / pOn).toFixed(3)}`);
