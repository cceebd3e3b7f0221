/**
 * Broker-side recompression (Kafka's LogValidator "recompression" path): when a topic's
 * compression.type names a codec and the producer's batch uses another one, the batch is decoded
 * and rebuilt in the topic's codec, keeping producer id, epoch, base sequence, the transactional
 * flag, offset deltas, timestamps, keys, values and headers. `producer` (the default) keeps the
 * producer's bytes untouched, which is the zero-copy path.
 */
import { DecodeError } from '../protocol/decode-error.js';
import type { RecordBatchView } from '../protocol/record-batch.js';
import { buildRecordBatch, decodeRecords } from '../protocol/records.js';

const CODECS: Readonly<Record<string, number>> = { uncompressed: 0, gzip: 1, snappy: 2, lz4: 3, zstd: 4 };

/** The codec a topic's compression.type asks for, or null for `producer`. */
export function targetCodec(compressionType: string | undefined): number | null {
  if (compressionType === undefined || compressionType === 'producer') return null;
  return CODECS[compressionType] ?? null;
}

/** Rebuilt batch, or null when the batch already uses `codec`. Throws DecodeError on bad content. */
export function recompressBatch(batch: RecordBatchView, codec: number): Buffer | null {
  if (batch.compression === codec) return null;
  if (batch.isControl) throw new DecodeError('control batches are not recompressed');
  const records = decodeRecords(batch);
  const base = batch.baseOffset;
  return buildRecordBatch({
    producerId: batch.producerId,
    producerEpoch: batch.producerEpoch,
    baseSequence: batch.baseSequence,
    isTransactional: batch.isTransactional,
    compression: codec,
    records: records.map((r) => ({ key: r.key, value: r.value, headers: r.headers, timestamp: r.timestamp, offsetDelta: r.offset - base })),
  });
}
