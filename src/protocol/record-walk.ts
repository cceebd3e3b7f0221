import { BATCH, type RecordBatchView } from './record-batch.js';

/**
 * The one walk over the records of a batch that copies nothing: each record's fields are read in
 * place and handed to the visitor, key and value as views of the batch. For what the broker needs
 * of records without decoding them into objects: control types, markers' coordinator epochs, keys
 * for compaction, timestamps for ListOffsets, coordinator replay. Uncompressed batches only;
 * callers treat compressed batches whole. (`records.ts` decodes records into objects, for tools and
 * tests.)
 */

/** Reads a zigzag varint; returns [value, nextPosition]. Throws RangeError on overrun. */
function readVarint(buf: Buffer, at: number, end: number): [number, number] {
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
  /** Where the value starts in the buffer, and its length (-1: a null value, a tombstone). */
  readonly valueAt: number;
  readonly valueLength: number;
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
    const [valueLen, valueAt] = readVarint(buf, q, recEnd);
    visit({ start, size: recEnd - start, offsetDelta: offDelta, timestampDelta: tsDelta, key, valueAt, valueLength: valueLen });
    p = recEnd;
  }
}
