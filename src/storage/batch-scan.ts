import { BATCH, RecordBatchView } from '../protocol/record-batch.js';
import type { LogFile } from './file-system.js';

/** Smallest legal batchLength: a v2 header with no records. */
const MIN_BATCH_LENGTH = BATCH.HEADER_SIZE - BATCH.LOG_OVERHEAD;

/** Upper bound on one batch when none is given: far above any max.message.bytes in use. */
const DEFAULT_MAX_BATCH_BYTES = 256 * 1024 * 1024;

type ScanStop = 'end' | 'torn' | 'corrupt' | 'stopped';

export interface ScanResult {
  /** Position just after the last batch visited (where a torn or corrupt tail begins). */
  readonly position: number;
  readonly reason: ScanStop;
}

/**
 * Is the header at `at` structurally a v2 batch? (length sane, magic 2). The CRC is not checked.
 */
function headerLooksValid(buf: Buffer, at: number): boolean {
  const len = buf.readInt32BE(at + BATCH.BATCH_LENGTH);
  return len >= MIN_BATCH_LENGTH && buf.readInt8(at + BATCH.MAGIC) === 2;
}

/**
 * Walks the batches of a segment file from `start` to `end`, reading in chunks, and calls
 * `visit(view, position)` for each. With `full`, the view holds the whole batch (for CRC checks
 * and record access); otherwise only the 61-byte header is guaranteed to be in `view.buf`.
 * Stops at `end` ('end'), at a batch that runs past `end` ('torn'), at a header that is not a v2
 * batch ('corrupt') or when `visit` returns false ('stopped').
 */
export async function scanBatches(
  file: LogFile,
  start: number,
  end: number,
  opts: { full: boolean; chunkSize?: number; maxBatchBytes?: number },
  visit: (view: RecordBatchView, position: number) => boolean | void,
): Promise<ScanResult> {
  const chunkSize = opts.chunkSize ?? (opts.full ? 1 << 20 : 16 << 10);
  let chunk = Buffer.allocUnsafe(chunkSize);
  let chunkPos = -1;
  let chunkLen = 0;
  let pos = start;
  const load = async (at: number, need: number): Promise<void> => {
    const want = Math.min(Math.max(need, chunkSize), end - at);
    if (chunk.length < want) chunk = Buffer.allocUnsafe(want);
    chunkLen = await file.read(chunk, 0, want, at);
    chunkPos = at;
  };
  while (pos < end) {
    if (end - pos < BATCH.HEADER_SIZE) {
      return { position: pos, reason: 'torn' };
    }
    if (chunkPos < 0 || pos < chunkPos || pos + BATCH.HEADER_SIZE > chunkPos + chunkLen) {
      await load(pos, BATCH.HEADER_SIZE);
      if (chunkLen < BATCH.HEADER_SIZE) return { position: pos, reason: 'torn' };
    }
    let at = pos - chunkPos;
    if (!headerLooksValid(chunk, at)) return { position: pos, reason: 'corrupt' };
    const size = BATCH.LOG_OVERHEAD + chunk.readInt32BE(at + BATCH.BATCH_LENGTH);
    // A length no batch may have is corruption, found before anything that large is allocated.
    if (size > (opts.maxBatchBytes ?? DEFAULT_MAX_BATCH_BYTES)) return { position: pos, reason: 'corrupt' };
    if (pos + size > end) return { position: pos, reason: 'torn' };
    if (opts.full && at + size > chunkLen) {
      await load(pos, size);
      if (chunkLen < size) return { position: pos, reason: 'torn' };
      at = 0;
    }
    if (visit(new RecordBatchView(chunk, at), pos) === false) return { position: pos, reason: 'stopped' };
    pos += size;
  }
  return { position: pos, reason: 'end' };
}

/** Position and offsets of one batch found in a segment. */
export interface BatchLocation {
  readonly position: number;
  readonly size: number;
  readonly baseOffset: number;
  readonly lastOffset: number;
  readonly maxTimestamp: number;
}

export function locationOf(view: RecordBatchView, position: number): BatchLocation {
  return {
    position,
    size: view.sizeInBytes,
    baseOffset: view.baseOffset,
    lastOffset: view.lastOffset,
    maxTimestamp: view.maxTimestamp,
  };
}

/** Walks the complete batches inside one Buffer; `visit` gets each batch's start. */
export function forEachBatchIn(buf: Buffer, visit: (at: number, size: number) => void): number {
  let at = 0;
  while (buf.length - at >= BATCH.LOG_OVERHEAD) {
    const size = BATCH.LOG_OVERHEAD + buf.readInt32BE(at + BATCH.BATCH_LENGTH);
    if (size < BATCH.HEADER_SIZE || at + size > buf.length) break;
    visit(at, size);
    at += size;
  }
  return at;
}
