import { ATTR, type RecordBatchView } from '../protocol/record-batch.js';
import { decodeRecords } from '../protocol/records.js';
import { forEachBatchIn, scanBatches } from './batch-scan.js';
import { FileSlice } from './file-slice.js';
import type { LogSegment } from './log-segment.js';
import type { ReadBufferPool } from './read-buffer-pool.js';
import { forEachRecord } from '../protocol/record-walk.js';

export interface TimestampAndOffset {
  offset: number;
  timestamp: number;
  leaderEpoch: number;
}

/**
 * The fetch read over `segments` (the one holding fetchOffset first): a file range of whole
 * batches from the batch containing fetchOffset, below maxOffset, within about maxBytes (the
 * first batch whole with minOneMessage). One segment per read, as Kafka does. Also returns the
 * offset just past the range, the bound for collecting aborted transactions. Null: nothing.
 */
export async function readSegments(
  segments: readonly LogSegment[],
  opts: { fetchOffset: number; maxOffset: number; maxBytes: number; minOneMessage: boolean },
): Promise<{ slice: FileSlice; upperOffset: number } | null> {
  const { fetchOffset, maxOffset } = opts;
  for (const seg of segments) {
    const segEnd = seg.size;
    const start = await seg.translateOffset(fetchOffset, segEnd);
    if (start === null) continue;
    if (start.baseOffset >= maxOffset) return null;
    let maxPos = segEnd;
    let upper = seg.nextOffset;
    if (maxOffset < seg.nextOffset) {
      const stop = await seg.translateOffset(maxOffset, segEnd);
      if (stop !== null) {
        maxPos = stop.position;
        upper = stop.baseOffset;
      }
    }
    let end = maxPos;
    if (maxPos - start.position > opts.maxBytes) {
      const cut = await seg.boundaryAtOrBefore(start.position, start.position + opts.maxBytes);
      end = cut.position;
      upper = cut.offset;
      if (end <= start.position) {
        if (!opts.minOneMessage) return null;
        end = start.position + start.size;
        upper = start.lastOffset + 1;
      }
    }
    return { slice: new FileSlice(seg.log, start.position, end - start.position), upperOffset: upper };
  }
  return null;
}

/**
 * The first record with timestamp ≥ ts at or after the log start (exact inside uncompressed
 * CreateTime batches, the batch for compressed or LogAppendTime ones), via the time index.
 */
export async function findOffsetForTimestamp(segments: readonly LogSegment[], ts: number, logStartOffset: number): Promise<TimestampAndOffset | null> {
  for (const seg of segments) {
    if (seg.maxTimestamp < ts || seg.size === 0) continue;
    const from = Math.max(seg.timeIndex.lookup(ts), logStartOffset);
    const loc = await seg.translateOffset(from);
    if (loc === null) continue;
    let found: TimestampAndOffset | null = null;
    await scanBatches(seg.log, loc.position, seg.size, { full: true }, (v) => {
      if (v.lastOffset < logStartOffset || v.maxTimestamp < ts) return true;
      found = { offset: Math.max(v.baseOffset, logStartOffset), timestamp: v.maxTimestamp, leaderEpoch: v.partitionLeaderEpoch };
      if (v.compression === 0 && (v.attributes & ATTR.TIMESTAMP_LOG_APPEND) === 0) {
        const baseTs = v.baseTimestamp;
        let exact: TimestampAndOffset | null = null;
        forEachRecord(v, (r) => {
          const off = v.baseOffset + r.offsetDelta;
          if (exact === null && off >= logStartOffset && baseTs + r.timestampDelta >= ts) {
            exact = { offset: off, timestamp: baseTs + r.timestampDelta, leaderEpoch: v.partitionLeaderEpoch };
          }
        });
        if (exact !== null) found = exact;
      }
      return false;
    });
    if (found !== null) return found;
  }
  return null;
}

/**
 * The offset of the record holding the batch's max timestamp (Kafka's offsetOfMaxTimestamp):
 * the base offset for LogAppendTime batches, else the first record carrying that timestamp.
 */
function offsetOfMaxTimestamp(v: RecordBatchView): number {
  if ((v.attributes & ATTR.TIMESTAMP_LOG_APPEND) !== 0) return v.baseOffset;
  const max = v.maxTimestamp;
  if (v.compression !== 0) {
    const hit = decodeRecords(v).find((r) => r.timestamp === max);
    return hit?.offset ?? v.baseOffset;
  }
  const baseTs = v.baseTimestamp;
  let found = -1;
  forEachRecord(v, (r) => {
    if (found < 0 && baseTs + r.timestampDelta === max) found = v.baseOffset + r.offsetDelta;
  });
  return found >= 0 ? found : v.baseOffset;
}

/** ListOffsets MAX_TIMESTAMP (KIP-734): the exact record with the largest timestamp. */
export async function findMaxTimestampOffset(segments: readonly LogSegment[]): Promise<TimestampAndOffset | null> {
  let best: LogSegment | null = null;
  for (const seg of segments) if (seg.size > 0 && (best === null || seg.maxTimestamp > best.maxTimestamp)) best = seg;
  if (best === null || best.maxTimestamp < 0) return null;
  const seg = best;
  const loc = await seg.translateOffset(seg.offsetOfMaxTimestamp);
  if (loc === null) return null;
  let found: TimestampAndOffset | null = null;
  await scanBatches(seg.log, loc.position, seg.size, { full: true }, (v) => {
    if (v.maxTimestamp !== seg.maxTimestamp) return true;
    found = { offset: offsetOfMaxTimestamp(v), timestamp: v.maxTimestamp, leaderEpoch: v.partitionLeaderEpoch };
    return false;
  });
  return found;
}

/** The bytes of `slices` in one Buffer, cut to whole batches (a truncation racing the read may have shortened a file). */
export async function readWholeBatches(slices: readonly FileSlice[]): Promise<Buffer> {
  const total = slices.reduce((n, s) => n + s.length, 0);
  const buf = Buffer.allocUnsafe(total);
  let at = 0;
  for (const s of slices) at += await s.readInto(buf, at);
  return buf.subarray(0, forEachBatchIn(buf.subarray(0, at), () => undefined));
}

/**
 * The bytes of each of `slices` (a null slice reads nothing), read concurrently into one buffer
 * from `pool`, each cut to whole batches (a truncation racing the read may have shortened a
 * file). `records[i]` is a view of `buffer`, valid until `buffer` is released to the pool; the
 * buffer is null when there was nothing to read. On a failed read the buffer goes back once every read has settled.
 */
export async function readSlicesPooled(slices: readonly (FileSlice | null)[], pool: ReadBufferPool): Promise<{ records: Buffer[]; buffer: Buffer | null }> {
  let total = 0;
  for (const s of slices) if (s !== null) total += s.length;
  if (total === 0) return { records: slices.map(() => EMPTY), buffer: null };
  const buffer = pool.acquire(total);
  const starts: number[] = [];
  const reads: Promise<number>[] = [];
  let at = 0;
  for (const s of slices) {
    starts.push(at);
    if (s === null) continue;
    reads.push(s.readInto(buffer, at));
    at += s.length;
  }
  // Every read settles before the buffer can go back: a read still running would write into it.
  const settled = await Promise.allSettled(reads);
  const lengths: number[] = [];
  for (const o of settled) {
    if (o.status === 'rejected') {
      pool.release(buffer);
      throw o.reason;
    }
    lengths.push(o.value);
  }
  let r = 0;
  const records = slices.map((s, i) => {
    if (s === null) return EMPTY;
    const from = starts[i] ?? 0;
    const got = buffer.subarray(from, from + (lengths[r++] ?? 0));
    return got.subarray(0, forEachBatchIn(got, () => undefined));
  });
  return { records, buffer };
}

const EMPTY = Buffer.alloc(0);
