import { BATCH, RecordBatchView } from '../protocol/record-batch.js';

/**
 * Just enough record decoding for what the log itself needs (control record types, the key of
 * each record for compaction, record timestamps for ListOffsets). Works on uncompressed batches
 * only; callers treat compressed batches whole.
 */

/** Control record types (the key's `type` field of a control batch's record). */
export const ControlType = { ABORT: 0, COMMIT: 1, MIRROR_PID_RESET: 7 } as const;

/** Reads a zigzag varint; returns [value, nextPosition]. Throws RangeError on overrun. */
export function readVarint(buf: Buffer, at: number, end: number): [number, number] {
  let raw = 0;
  let shift = 0;
  let p = at;
  for (;;) {
    if (p >= end) throw new RangeError('varint overruns record');
    const b = buf[p++] as number;
    raw += (b & 0x7f) * 2 ** shift;
    if ((b & 0x80) === 0) break;
    shift += 7;
    if (shift > 63) throw new RangeError('varint too long');
  }
  const value = raw % 2 === 0 ? raw / 2 : -(raw + 1) / 2;
  return [value, p];
}

export interface RecordRef {
  /** Position of the record's length varint in the buffer, and the record's full size. */
  readonly start: number;
  readonly size: number;
  readonly offsetDelta: number;
  readonly timestampDelta: number;
  /** Key bytes (a subarray) or null. */
  readonly key: Buffer | null;
  /** True when the record's value is null (a tombstone). */
  readonly valueIsNull: boolean;
}

/** Walks the records of an uncompressed batch held whole in `view.buf`. */
export function forEachRecord(view: RecordBatchView, visit: (r: RecordRef) => void): void {
  const buf = view.buf;
  const end = view.offset + view.sizeInBytes;
  let p = view.offset + BATCH.HEADER_SIZE;
  const count = view.recordsCount;
  for (let i = 0; i < count; i++) {
    const start = p;
    const [len, bodyAt] = readVarint(buf, p, end);
    const recEnd = bodyAt + len;
    if (len < 0 || recEnd > end) throw new RangeError('record overruns batch');
    let q = bodyAt + 1; // attributes
    const [tsDelta, q1] = readVarint(buf, q, recEnd);
    const [offDelta, q2] = readVarint(buf, q1, recEnd);
    const [keyLen, q3] = readVarint(buf, q2, recEnd);
    q = q3;
    let key: Buffer | null = null;
    if (keyLen >= 0) {
      if (q + keyLen > recEnd) throw new RangeError('key overruns record');
      key = buf.subarray(q, q + keyLen);
      q += keyLen;
    }
    const [valueLen] = readVarint(buf, q, recEnd);
    visit({ start, size: recEnd - start, offsetDelta: offDelta, timestampDelta: tsDelta, key, valueIsNull: valueLen < 0 });
    p = recEnd;
  }
}

/** The control type of a control batch (from its first record's key), or -1 when unreadable. */
export function controlTypeOf(view: RecordBatchView): number {
  if (!view.isControl || view.compression !== 0) return -1;
  let type = -1;
  try {
    forEachRecord(view, (r) => {
      if (type === -1 && r.key !== null && r.key.length >= 4) type = r.key.readInt16BE(2);
    });
  } catch {
    return -1;
  }
  return type;
}

/** The coordinator epoch carried by a COMMIT/ABORT marker's value (version int16, epoch int32). */
export function markerCoordinatorEpoch(view: RecordBatchView): number {
  const buf = view.buf;
  const end = view.offset + view.sizeInBytes;
  try {
    let p = view.offset + BATCH.HEADER_SIZE;
    const [, bodyAt] = readVarint(buf, p, end);
    p = bodyAt + 1;
    [, p] = readVarint(buf, p, end);
    [, p] = readVarint(buf, p, end);
    const [keyLen, k] = readVarint(buf, p, end);
    p = k + Math.max(keyLen, 0);
    const [valueLen, v] = readVarint(buf, p, end);
    if (valueLen >= 6 && v + 6 <= end) return buf.readInt32BE(v + 2);
  } catch {
    return -1;
  }
  return -1;
}
