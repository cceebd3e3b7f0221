/**
 * What a fetched partition's `records` may be appended as a mirror, found by walking batch
 * headers with `RecordBatchView` (never a record): the run of whole batches from the first one
 * that reaches the fetch offset, stopping at a partial trailing batch (a Fetch response may end
 * with one), at a batch epoch above the source leader epoch we know (stale source metadata,
 * KIP-1279 §9.5), at one above the destination leader epoch (epoch fencing, §9.4), or at a batch
 * whose CRC-32C does not match its bytes.
 *
 * The CRC is checked per batch over the batch's bytes in place (attributes..end, as Kafka's
 * DefaultRecordBatch.ensureValid does in UnifiedLog.appendAsFollower), and only for batches that
 * would be appended: a mirror keeps the source's bytes for good, so a batch corrupted on the
 * network or by a buggy source must be caught here or never. baseOffset and partitionLeaderEpoch
 * lie outside the CRC, as in Kafka; the sanity checks on offsets and epochs cover those.
 *
 * The run is returned as byte bounds into `records`, so the caller appends one subarray of the
 * response frame: no copy, no per-record work.
 */
import { ErrorCode } from './generated/errors.js';
import { KafkaError } from './kafka-error.js';
import { crc32c } from './crc32c.js';
import { BATCH, RecordBatchView } from './record-batch.js';

/** A batch that failed its CRC-32C check: where it starts, and both checksums for the reason. */
export interface CorruptBatch {
  readonly baseOffset: number;
  readonly storedCrc: number;
  readonly computedCrc: number;
}

interface BatchRun {
  /** Byte bounds of the whole batches to append, `[start, end)`; start is -1 when there are none. */
  readonly start: number;
  readonly end: number;
  readonly firstBaseOffset: number;
  readonly lastOffset: number;
  /** Highest partition leader epoch in the run; -1 when empty. */
  readonly maxEpoch: number;
  /** Partition leader epoch of the last batch kept (the next LastFetchedEpoch); -1 when empty. */
  readonly lastEpoch: number;
  readonly batches: number;
  /** Position of the last batch kept (its header gives the newest mirrored timestamp), -1 when none. */
  readonly lastBatchStart: number;
  /** A batch epoch above the known source leader epoch stopped the walk; -1 otherwise. */
  readonly staleEpoch: number;
  /** A batch epoch above the destination leader epoch stopped the walk; -1 otherwise. */
  readonly fencedEpoch: number;
  /**
   * The size of a first batch larger than the whole response when no batch fitted: ask for at
   * least that much next time (KIP-74); -1 otherwise.
   */
  readonly oversizedBatch: number;
  /** The batch whose CRC-32C did not match stopped the walk; null otherwise. */
  readonly corrupt: CorruptBatch | null;
}

/**
 * Walks `records` (see the file comment). `fetchOffset` skips batches wholly below it (a broker
 * answers from the batch containing the offset); `sourceLeaderEpoch` < 0 means unknown.
 * `verifyCrc` is false only where the cost of the check itself is measured (bench/mirror-crc.ts).
 */
export function walkFetchedBatches(records: Buffer, fetchOffset: number, sourceLeaderEpoch: number, destinationLeaderEpoch: number, maxBytes: number, verifyCrc = true): BatchRun {
  const len = records.length;
  let pos = 0;
  let start = -1;
  let end = -1;
  let firstBaseOffset = -1;
  let lastOffset = -1;
  let maxEpoch = -1;
  let lastEpoch = -1;
  let batches = 0;
  let lastBatchStart = -1;
  let staleEpoch = -1;
  let fencedEpoch = -1;
  let oversizedBatch = -1;
  let corrupt: CorruptBatch | null = null;
  while (pos + BATCH.HEADER_SIZE <= len) {
    const batch = new RecordBatchView(records, pos);
    const batchLength = batch.batchLength;
    if (batchLength < BATCH.HEADER_SIZE - BATCH.LOG_OVERHEAD) throw new KafkaError(ErrorCode.CORRUPT_MESSAGE, `corrupt batch from the source (length ${batchLength})`);
    const size = batch.sizeInBytes;
    if (pos + size > len) {
      if (start < 0 && size > maxBytes) oversizedBatch = size;
      break;
    }
    if (batch.magic !== 2) throw new KafkaError(ErrorCode.UNSUPPORTED_FOR_MESSAGE_FORMAT, `unsupported record batch magic ${batch.magic} from the source`);
    const last = batch.lastOffset;
    if (last < fetchOffset) {
      pos += size;
      continue;
    }
    const epoch = batch.partitionLeaderEpoch;
    if (sourceLeaderEpoch >= 0 && epoch > sourceLeaderEpoch) {
      staleEpoch = epoch;
      break;
    }
    if (epoch > destinationLeaderEpoch) {
      fencedEpoch = epoch;
      break;
    }
    if (verifyCrc) {
      const computedCrc = crc32c(records.subarray(pos + BATCH.ATTRIBUTES, pos + size));
      const storedCrc = batch.crc;
      if (computedCrc !== storedCrc) {
        corrupt = { baseOffset: batch.baseOffset, storedCrc, computedCrc };
        break;
      }
    }
    if (start < 0) {
      start = pos;
      firstBaseOffset = batch.baseOffset;
    }
    if (epoch > maxEpoch) maxEpoch = epoch;
    lastEpoch = epoch;
    lastOffset = last;
    batches++;
    lastBatchStart = pos;
    pos += size;
    end = pos;
  }
  return { start, end, firstBaseOffset, lastOffset, maxEpoch, lastEpoch, batches, lastBatchStart, staleEpoch, fencedEpoch, oversizedBatch, corrupt };
}
