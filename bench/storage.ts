// Partition log benchmarks: append throughput (leader path and at-source-offset path) against a
// plain sequential write of the same bytes in the same run, sequential fetch throughput, group
// commit under acks=all, and recovery time of an unclean 1 GiB log.
// Run: node bench/run.mjs bench/storage.ts [--scale=0.25]   (scale shrinks every size)
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, open, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { patchBaseOffset } from '../src/protocol/record-batch.js';
import { buildRecordBatch } from '../src/protocol/records.js';
import { GroupCommit } from '../src/storage/group-commit.js';
import { logConfig } from '../src/storage/log-config.js';
import { PartitionLog } from '../src/storage/partition-log.js';

const scaleArg = process.argv.find((a) => a.startsWith('--scale='));
const SCALE = scaleArg !== undefined ? Number(scaleArg.slice('--scale='.length)) : 1;
const MiB = 1024 * 1024;
const TOPIC_ID = 'BENCHBENCHBENCHBENCHBE';

function makeBatch(records: number, valueBytes: number): Buffer {
  const value = Buffer.alloc(valueBytes, 'x');
  return buildRecordBatch({ now: Date.now(), records: Array.from({ length: records }, (_, i) => ({ key: Buffer.from(`key-${i}`), value })) });
}

const mbps = (bytes: number, ms: number): string => ((bytes / MiB / ms) * 1000).toFixed(1);

async function plainWrite(dir: string, chunks: readonly Buffer[]): Promise<number> {
  const fh = await open(join(dir, 'plain.bin'), 'w');
  let pos = 0;
  const t0 = performance.now();
  for (const c of chunks) {
    await fh.write(c, 0, c.length, pos);
    pos += c.length;
  }
  const ms = performance.now() - t0;
  // untimed: leave no dirty pages behind to throttle whatever runs next (the logs' close does the same)
  await fh.datasync();
  await fh.close();
  return ms;
}

async function leaderAppend(dir: string, template: Buffer, count: number, prevalidated: boolean): Promise<{ ms: number; log: PartitionLog }> {
  const log = await PartitionLog.open({ dir, topicId: TOPIC_ID, config: logConfig() });
  const t0 = performance.now();
  for (let i = 0; i < count; i++) {
    const r = await log.appendAsLeader(template, 0, { requiredAcks: 1, prevalidated });
    if (r.errorCode !== 0) throw new Error(`append failed: ${r.errorCode}`);
  }
  return { ms: performance.now() - t0, log };
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] as number;
};

/**
 * Append throughput in interleaved rounds (plain write, leader append, mirror append of the
 * same bytes), each on fresh files, so page-cache writeback hits all three alike; prints the
 * median MiB/s and the median of the per-round ratios.
 */
async function appendRounds(root: string, label: string, batch: Buffer, roundBytes: number, rounds: number): Promise<void> {
  const count = Math.floor(roundBytes / batch.length);
  const bytes = count * batch.length;
  const chunks = Array.from({ length: count }, () => batch);
  // the mirror path gets the leader log's batches in fetch-sized (1 MiB) chunks
  const perFetch = Math.floor(MiB / batch.length);
  const r: Record<string, number[]> = { plain: [], leader: [], leaderPre: [], plainFetch: [], mirror: [] };
  const mirrorRun = async (dir: string, fetches: Buffer[]): Promise<number> => {
    const mirror = await PartitionLog.open({ dir: join(dir, 'mirror'), topicId: TOPIC_ID, config: logConfig() });
    // Steady state: the partition already knows the source's epoch, as it does after the first
    // fetch of an epoch (that one append writes leader-epoch-checkpoint with fsyncs).
    const first = fetches[0] as Buffer;
    await mirror.assignEpochStartOffset(first.readInt32BE(12), 0);
    const tm = performance.now();
    let firstMs = 0;
    for (const f of fetches) {
      const res = await mirror.appendAsMirror(f);
      if (res.errorCode !== 0) throw new Error(`mirror append failed: ${res.errorCode}`);
      if (firstMs === 0) firstMs = performance.now() - tm;
    }
    const ms = performance.now() - tm;
    firstAppendMs.push(firstMs);
    await mirror.close();
    return ms;
  };
  const firstAppendMs: number[] = [];
  for (let round = 0; round < rounds; round++) {
    const dir = join(root, `round-${round}`);
    await rm(dir, { recursive: true, force: true });
    await mkdir(dir, { recursive: true });
    // odd rounds run the log first: drift in the machine's state hits both sides alike
    const logFirst = round % 2 === 1;
    if (!logFirst) r.plain!.push(await plainWrite(dir, chunks));
    const lead = await leaderAppend(join(dir, 'lead'), Buffer.from(batch), count, false);
    r.leader!.push(lead.ms);
    await lead.log.close();
    const pre = await leaderAppend(join(dir, 'pre'), Buffer.from(batch), count, true);
    r.leaderPre!.push(pre.ms);
    if (logFirst) r.plain!.push(await plainWrite(dir, chunks));
    const fetches: Buffer[] = [];
    for (let off = 0; off < pre.log.logEndOffset; ) {
      const f = await pre.log.readToBuffer({ fetchOffset: off, maxOffset: pre.log.logEndOffset, maxBytes: perFetch * batch.length, minOneMessage: true });
      if (f.records.length === 0) break;
      fetches.push(f.records);
      off += (f.records.length / batch.length) * 16;
    }
    await pre.log.close();
    if (logFirst) r.mirror!.push(await mirrorRun(dir, fetches));
    r.plainFetch!.push(await plainWrite(dir, fetches));
    if (!logFirst) r.mirror!.push(await mirrorRun(dir, fetches));
    await rm(dir, { recursive: true, force: true });
  }
  const ratio = (a: number[], b: number[]): string => median(a.map((x, i) => x / (b[i] as number))).toFixed(2);
  console.log(`[${label}] ${rounds} rounds of ${(bytes / MiB).toFixed(0)} MiB, batch ${batch.length} B`);
  console.log(`  plain fs.write per batch   ${mbps(bytes, median(r.plain!))} MiB/s`);
  console.log(`  appendAsLeader (CRC check) ${mbps(bytes, median(r.leader!))} MiB/s  ratio ${ratio(r.plain!, r.leader!)}`);
  console.log(`  appendAsLeader (prechecked)${mbps(bytes, median(r.leaderPre!))} MiB/s  ratio ${ratio(r.plain!, r.leaderPre!)}`);
  console.log(`  plain fs.write per 1 MiB   ${mbps(bytes, median(r.plainFetch!))} MiB/s`);
  console.log(`  appendAsMirror per 1 MiB   ${mbps(bytes, median(r.mirror!))} MiB/s  ratio ${ratio(r.plainFetch!, r.mirror!)}`);
  console.log(`    (first append of a round: median ${median(firstAppendMs).toFixed(1)} ms)`);
}

async function main(): Promise<void> {
  const root = await mkdtemp(join(tmpdir(), 'fjord-bench-'));
  try {
    const batch = makeBatch(16, 1000); // ~16 KiB, a typical producer batch
    const roundBytes = Math.max(8 * MiB, Math.floor(64 * MiB * SCALE));
    await appendRounds(root, `disk ${tmpdir()}`, batch, roundBytes, 7);
    if (existsSync('/dev/shm')) {
      const shm = await mkdtemp('/dev/shm/fjord-bench-');
      try {
        await appendRounds(shm, 'tmpfs /dev/shm (no device: CPU overhead only)', batch, roundBytes, 7);
      } finally {
        await rm(shm, { recursive: true, force: true });
      }
    }
    const total = Math.max(16 * MiB, Math.floor(256 * MiB * SCALE));
    const count = Math.floor(total / batch.length);
    const leadPre = await leaderAppend(join(root, 'lead-1'), Buffer.from(batch), count, true);

    // 2. sequential fetches of 1 MiB from the leader log into one pooled buffer
    const pool = Buffer.allocUnsafe(2 * MiB);
    let offset = 0;
    let readBytes = 0;
    const tr = performance.now();
    while (offset < leadPre.log.logEndOffset) {
      const r = await leadPre.log.read({ fetchOffset: offset, maxOffset: leadPre.log.highWatermark, maxBytes: MiB, minOneMessage: true });
      const s = r.records[0];
      if (s === undefined) break;
      const n = await s.readInto(pool, 0);
      readBytes += n;
      // the next fetch offset: the last batch's last offset + 1 (walk headers, as a consumer does)
      let at = 0;
      while (at < n) {
        const size = 12 + pool.readInt32BE(at + 8);
        offset = Number(pool.readBigInt64BE(at)) + pool.readInt32BE(at + 23) + 1;
        at += size;
      }
    }
    const readMs = performance.now() - tr;
    console.log(`sequential fetch 1MiB ${mbps(readBytes, readMs)} MiB/s  (${(readBytes / MiB).toFixed(0)} MiB)`);

    await leadPre.log.close();

    // 4. acks=all: group commit across 8 partitions, 4 requests in flight each, vs write+fdatasync per batch
    const gc = new GroupCommit();
    const parts = await Promise.all(
      Array.from({ length: 8 }, (_, p) => PartitionLog.open({ dir: join(root, `acks-${p}`), topicId: TOPIC_ID, config: logConfig(), groupCommit: gc })),
    );
    const perPart = Math.max(50, Math.floor(2000 * SCALE));
    const ta = performance.now();
    await Promise.all(
      parts.map(async (log) => {
        const inflight: Promise<unknown>[] = [];
        for (let i = 0; i < perPart; i++) {
          inflight.push(log.appendAsLeader(Buffer.from(batch), 0, { requiredAcks: -1, prevalidated: true }));
          if (inflight.length >= 4) await inflight.shift();
        }
        await Promise.all(inflight);
      }),
    );
    const acksMs = performance.now() - ta;
    const acksBytes = parts.length * perPart * batch.length;
    for (const l of parts) await l.close();
    const fh = await open(join(root, 'sync.bin'), 'w');
    const n = Math.max(20, Math.floor(200 * SCALE));
    const ts = performance.now();
    for (let i = 0; i < n; i++) {
      await fh.write(batch, 0, batch.length, i * batch.length);
      await fh.datasync();
    }
    const syncMs = performance.now() - ts;
    await fh.close();
    console.log(
      `acks=all group commit ${mbps(acksBytes, acksMs)} MiB/s, ${((parts.length * perPart) / (acksMs / 1000)).toFixed(0)} appends/s, ` +
        `${gc.syncs} fsyncs for ${parts.length * perPart} appends`,
    );
    console.log(`write+fdatasync each  ${mbps(n * batch.length, syncMs)} MiB/s, ${(n / (syncMs / 1000)).toFixed(0)} appends/s`);

    // 5. recovery of an unclean log of 1 GiB (one segment, every batch CRC-checked)
    const recDir = join(root, 'recover');
    await rm(recDir, { recursive: true, force: true });
    const seed = await PartitionLog.open({ dir: recDir, topicId: TOPIC_ID, config: logConfig() });
    await seed.close();
    const recBytes = Math.floor(1024 * MiB * SCALE);
    const big = makeBatch(64, 1000);
    const perChunk = Math.floor((8 * MiB) / big.length);
    const chunk = Buffer.allocUnsafe(perChunk * big.length);
    const logFh = await open(join(recDir, '00000000000000000000.log'), 'w');
    let pos = 0;
    let next = 0;
    while (pos < recBytes) {
      for (let i = 0; i < perChunk; i++) {
        big.copy(chunk, i * big.length);
        patchBaseOffset(chunk, i * big.length, next);
        next += 64;
      }
      await logFh.write(chunk, 0, chunk.length, pos);
      pos += chunk.length;
    }
    await logFh.close();
    for (const suffix of ['.index', '.timeindex']) await rm(join(recDir, `00000000000000000000${suffix}`), { force: true });
    const t5 = performance.now();
    const recovered = await PartitionLog.open({ dir: recDir, topicId: TOPIC_ID, config: logConfig() });
    const recMs = performance.now() - t5;
    const leo = recovered.logEndOffset;
    await recovered.close();
    const t6 = performance.now();
    const clean = await PartitionLog.open({ dir: recDir, topicId: TOPIC_ID, config: logConfig(), cleanShutdown: true });
    const cleanMs = performance.now() - t6;
    await clean.close();
    console.log(
      `recovery (unclean)    ${(pos / MiB).toFixed(0)} MiB, ${leo} records in ${recMs.toFixed(0)} ms (${mbps(pos, recMs)} MiB/s); ` +
        `clean open ${cleanMs.toFixed(0)} ms`,
    );
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}

await main();
