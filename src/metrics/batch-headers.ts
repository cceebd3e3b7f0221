/**
 * Record counts and timestamps read from record-batch headers only (magic 2 layout, as in Kafka's
 * `DefaultRecordBatch`): the metrics never decode a record and allocate nothing per batch.
 */

const LENGTH_AT = 8;
const MAGIC_AT = 16;
const MAX_TIMESTAMP_AT = 35;
const RECORDS_COUNT_AT = 57;
const HEADER_SIZE = 61;

/** Records in the whole batches of `buf` (Kafka's MessagesInPerSec counts these). */
export function countRecords(buf: Buffer): number {
  let n = 0;
  let pos = 0;
  while (pos + HEADER_SIZE <= buf.length) {
    const size = 12 + buf.readInt32BE(pos + LENGTH_AT);
    if (size < HEADER_SIZE || pos + size > buf.length) break;
    if (buf[pos + MAGIC_AT] === 2) n += buf.readInt32BE(pos + RECORDS_COUNT_AT);
    pos += size;
  }
  return n;
}

/** MaxTimestamp of the last whole batch of `buf`, or -1 when it holds none. */
export function lastMaxTimestamp(buf: Buffer): number {
  let ts = -1;
  let pos = 0;
  while (pos + HEADER_SIZE <= buf.length) {
    const size = 12 + buf.readInt32BE(pos + LENGTH_AT);
    if (size < HEADER_SIZE || pos + size > buf.length) break;
    // Two 32-bit reads: a BigInt per batch would allocate; epoch milliseconds fit in 53 bits.
    if (buf[pos + MAGIC_AT] === 2) ts = buf.readInt32BE(pos + MAX_TIMESTAMP_AT) * 4294967296 + buf.readUInt32BE(pos + MAX_TIMESTAMP_AT + 4);
    pos += size;
  }
  return ts;
}
