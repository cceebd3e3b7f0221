import { join } from 'node:path';
import { crc32c } from '../protocol/crc32c.js';
import { compress, decompress } from '../protocol/compression.js';
import { BATCH, RecordBatchView, writeOffset } from '../protocol/record-batch.js';
import { scanBatches } from './batch-scan.js';
import { LogSegment, segmentFileName } from './log-segment.js';
import type { PartitionLog } from './partition-log.js';
import { forEachRecord, type RecordRef } from '../protocol/record-walk.js';

export interface CleanStats {
  segmentsCleaned: number;
  bytesBefore: number;
  bytesAfter: number;
  recordsRemoved: number;
}

/**
 * Log compaction (cleanup.policy=compact), after Kafka's LogCleaner: keeps the latest record
 * per key, removes keyless records and the records of aborted transactions (which never count
 * as a key's latest value), and removes tombstones whose timestamp is older than
 * delete.retention.ms. Offsets never change: a batch that loses records keeps its base offset,
 * its lastOffsetDelta (so producer sequence ranges stay valid) and its header fields; only the
 * record count, length, max timestamp and CRC are rewritten. Control batches are kept as is.
 *
 * What is cleaned: every segment but the active one whose batches are all below the last
 * stable offset and older than min.compaction.lag.ms. Each segment is rewritten on its own
 * (`<base>.log.cleaned`, fsync, rename over `<base>.log`), so a crash leaves either the old or
 * the new file; Kafka also merges small neighbours, this cleaner does not.
 *
 * Concurrency: the offset map and the cleaned files are built outside the log's append queue
 * (cleanable segments are immutable); the swap runs inside it and skips a segment that
 * truncation or retention changed meanwhile.
 */
export async function compactLog(log: PartitionLog): Promise<CleanStats> {
  const stats: CleanStats = { segmentsCleaned: 0, bytesBefore: 0, bytesAfter: 0, recordsRemoved: 0 };
  if (!log.config.cleanupPolicy.includes('compact')) return stats;
  const now = log.clock.now();
  const limit = log.lastStableOffset;
  const candidates = await log.withSegmentsLocked(async (segments) =>
    segments
      .slice(0, -1)
      .filter((s) => s.size > 0 && s.nextOffset <= limit && (s.maxTimestamp < 0 || now - s.maxTimestamp >= log.config.minCompactionLagMs))
      .map((s) => ({ seg: s, size: s.size })),
  );
  if (candidates.length === 0) return stats;
  // min.cleanable.dirty.ratio: clean only when enough of the cleanable bytes are new since the
  // last pass (the first pass after a start treats everything as dirty).
  const total = candidates.reduce((n, c) => n + c.size, 0);
  const dirty = candidates.filter((c) => c.seg.baseOffset >= log.cleanedUpTo).reduce((n, c) => n + c.size, 0);
  if (dirty === 0 || dirty / total < log.config.minCleanableDirtyRatio) return stats;
  const cleanedUpTo = (candidates.at(-1) as { seg: LogSegment }).seg.nextOffset;

  // Records of aborted transactions never count and are dropped (all cleanable ones are decided).
  const abortedBy = new Map<number, { firstOffset: number; lastOffset: number }[]>();
  for (const t of log.abortedTransactions()) {
    const list = abortedBy.get(t.producerId) ?? [];
    list.push(t);
    abortedBy.set(t.producerId, list);
  }
  const isAborted = (v: RecordBatchView): boolean =>
    v.isTransactional && !v.isControl && (abortedBy.get(v.producerId)?.some((t) => t.firstOffset <= v.baseOffset && v.baseOffset <= t.lastOffset) ?? false);

  // 1. The offset map: key → offset of its latest record, over all cleanable segments.
  const latest = new Map<string, number>();
  for (const { seg, size } of candidates) {
    await scanBatches(seg.log, 0, size, { full: true }, (v) => {
      if (v.isControl || isAborted(v)) return;
      withRecords(v, (recs) => {
        for (const r of recs) if (r.key !== null) latest.set(r.key.toString('latin1'), v.baseOffset + r.offsetDelta);
      });
    });
  }

  // 2. Cleaned copies, written beside the segments.
  const tombstoneHorizon = now - log.config.deleteRetentionMs;
  const cleaned: { seg: LogSegment; size: number; path: string; bytes: number }[] = [];
  for (const { seg, size } of candidates) {
    const path = join(log.dir, segmentFileName(seg.baseOffset, '.log.cleaned'));
    const out = await log.fs.open(path, 'write');
    let outPos = 0;
    let pending: Buffer[] = [];
    let pendingBytes = 0;
    let changed = false;
    const flushOut = async (): Promise<void> => {
      if (pending.length === 0) return;
      await out.writeAll(pending, outPos);
      outPos += pendingBytes;
      pending = [];
      pendingBytes = 0;
    };
    const batches: Buffer[] = [];
    try {
      await scanBatches(seg.log, 0, size, { full: true }, (v) => {
        let kept: Buffer | null;
        if (v.isControl) kept = Buffer.from(v.bytes);
        else if (isAborted(v)) {
          stats.recordsRemoved += v.recordsCount;
          kept = null;
        } else kept = filterBatch(v, latest, tombstoneHorizon, stats);
        if (kept === null || kept.length !== v.sizeInBytes) changed = true;
        if (kept !== null) batches.push(kept);
      });
      for (const b of batches) {
        pending.push(b);
        pendingBytes += b.length;
        if (pendingBytes >= 1 << 20) await flushOut();
      }
      await flushOut();
      await out.sync();
    } finally {
      await out.close();
    }
    stats.bytesBefore += size;
    if (!changed) {
      await log.fs.unlink(path);
      stats.bytesAfter += size;
      continue;
    }
    cleaned.push({ seg, size, path, bytes: outPos });
  }

  // 3. Swap each cleaned file in, under the log's append queue.
  await log.withSegmentsLocked(async (segments, replace) => {
    for (const c of cleaned) {
      const stillThere = segments.includes(c.seg) && segments.at(-1) !== c.seg && c.seg.size === c.size;
      if (!stillThere) {
        await log.fs.unlink(c.path);
        stats.bytesAfter += c.size;
        continue;
      }
      // Indexes go first: a crash after the rename then finds them missing and rebuilds them
      // rather than trusting positions into the old file.
      await c.seg.deleteIndexFiles();
      await log.fs.rename(c.path, c.seg.logPath);
      await log.fs.syncDir(log.dir);
      const fresh = await LogSegment.open(log.fs, log.dir, c.seg.baseOffset, {
        indexIntervalBytes: log.config.indexIntervalBytes,
        maxIndexBytes: log.config.segmentIndexBytes,
        now: log.clock.now(),
      });
      await fresh.recover(Number.MAX_SAFE_INTEGER, () => undefined, true);
      await fresh.syncIndexes();
      await replace([c.seg], fresh);
      stats.segmentsCleaned++;
      stats.bytesAfter += c.bytes;
    }
  });
  log.cleanedUpTo = Math.max(log.cleanedUpTo, cleanedUpTo);
  return stats;
}

/** Calls `fn` with the records of a batch (decompressed when needed) and the buffer they live in. */
function withRecords(v: RecordBatchView, fn: (recs: RecordRef[], plain: RecordBatchView) => void): void {
  const plain = v.compression === 0 ? v : plainView(v);
  const recs: RecordRef[] = [];
  forEachRecord(plain, (r) => recs.push(r));
  fn(recs, plain);
}

/** A header + decompressed records copy of a compressed batch, for walking its records. */
function plainView(v: RecordBatchView): RecordBatchView {
  const body = decompress(v.compression, v.recordsBytes);
  const buf = Buffer.allocUnsafe(BATCH.HEADER_SIZE + body.length);
  v.buf.copy(buf, 0, v.offset, v.offset + BATCH.HEADER_SIZE);
  body.copy(buf, BATCH.HEADER_SIZE);
  buf.writeInt32BE(buf.length - BATCH.LOG_OVERHEAD, BATCH.BATCH_LENGTH);
  buf.writeInt16BE(v.attributes & ~0x07, BATCH.ATTRIBUTES);
  return new RecordBatchView(buf, 0);
}

/**
 * The batch with only the records to keep: the same bytes when all stay, null when none does,
 * otherwise a rebuilt batch (same base offset, lastOffsetDelta, producer fields, compression).
 */
function filterBatch(v: RecordBatchView, latest: Map<string, number>, tombstoneHorizon: number, stats: CleanStats): Buffer | null {
  let out: Buffer | null = null;
  withRecords(v, (recs, plain) => {
    const baseTs = plain.baseTimestamp;
    const keep = recs.filter((r) => {
      if (r.key === null) return false;
      if (latest.get(r.key.toString('latin1')) !== v.baseOffset + r.offsetDelta) return false;
      return !(r.valueLength < 0 && baseTs + r.timestampDelta < tombstoneHorizon);
    });
    stats.recordsRemoved += recs.length - keep.length;
    if (keep.length === recs.length) {
      out = Buffer.from(v.bytes);
      return;
    }
    if (keep.length === 0) return;
    const parts = keep.map((r) => plain.buf.subarray(r.start, r.start + r.size));
    let body: Buffer = Buffer.concat(parts);
    if (v.compression !== 0) body = compress(v.compression, body);
    const b = Buffer.allocUnsafe(BATCH.HEADER_SIZE + body.length);
    v.buf.copy(b, 0, v.offset, v.offset + BATCH.HEADER_SIZE);
    body.copy(b, BATCH.HEADER_SIZE);
    b.writeInt32BE(b.length - BATCH.LOG_OVERHEAD, BATCH.BATCH_LENGTH);
    b.writeInt32BE(keep.length, BATCH.RECORDS_COUNT);
    if ((v.attributes & 0x08) === 0) {
      writeOffset(b, BATCH.MAX_TIMESTAMP, Math.max(...keep.map((r) => baseTs + r.timestampDelta)));
    }
    b.writeUInt32BE(crc32c(b.subarray(BATCH.ATTRIBUTES)), BATCH.CRC);
    out = b;
  });
  return out;
}
