/**
 * The controller's metadata log: the partition `__cluster_metadata-0` in the data directory, an
 * ordinary Kafka-format partition log (src/storage) holding record batches whose records have a
 * null key and a metadata record as value. Each controller write is one batch appended at the
 * controller's epoch with acks=all, so it is fsynced before it is applied; a torn trailing batch
 * from a crash is cut off by the log's recovery (the write was never acknowledged).
 */
import { join } from 'node:path';
import { iterateBatches } from '../protocol/record-batch.js';
import { buildRecordBatch, decodeRecords } from '../protocol/records.js';
import { logConfig } from '../storage/log-config.js';
import { PartitionLog } from '../storage/partition-log.js';
import type { MetadataLogStore } from './controller.js';

export const METADATA_TOPIC_DIR = '__cluster_metadata-0';
/** Kafka's fixed id of the metadata topic (Uuid.METADATA_TOPIC_ID, "AAAAAAAAAAAAAAAAAAAAAQ"). */
export const METADATA_TOPIC_ID = '00000000-0000-0000-0000-000000000001';
/** The single-voter quorum's epoch, stamped on every metadata batch. */
const METADATA_LEADER_EPOCH = 1;

const REPLAY_CHUNK = 1 << 20;

export class FileMetadataLog implements MetadataLogStore {
  private constructor(private readonly log: PartitionLog) {}

  static async open(dataDir: string, opts: { cleanShutdown?: boolean } = {}): Promise<FileMetadataLog> {
    const log = await PartitionLog.open({
      dir: join(dataDir, METADATA_TOPIC_DIR),
      topicId: METADATA_TOPIC_ID,
      // Never deleted by retention: the image is rebuilt from the whole log (no snapshots yet).
      config: logConfig({ retentionMs: -1, retentionBytes: -1, segmentBytes: 64 * 1024 * 1024 }),
      cleanShutdown: opts.cleanShutdown === true,
    });
    return new FileMetadataLog(log);
  }

  async replay(cb: (offset: number, value: Buffer) => void): Promise<void> {
    let next = this.log.logStartOffset;
    const end = this.log.logEndOffset;
    while (next < end) {
      const r = await this.log.readToBuffer({ fetchOffset: next, maxOffset: end, maxBytes: REPLAY_CHUNK, minOneMessage: true });
      if (r.errorCode !== 0) throw new Error(`reading the metadata log at ${next} failed with error ${r.errorCode}`);
      let advanced = false;
      for (const batch of iterateBatches(r.records)) {
        if (batch.lastOffset < next) continue;
        for (const rec of decodeRecords(batch)) if (rec.offset >= next && rec.value) cb(rec.offset, rec.value);
        next = batch.lastOffset + 1;
        advanced = true;
      }
      if (!advanced) break;
    }
  }

  async append(values: readonly Buffer[]): Promise<number> {
    const batch = buildRecordBatch({ records: values.map((value) => ({ key: null, value })) });
    const r = await this.log.appendAsLeader(batch, METADATA_LEADER_EPOCH, { requiredAcks: -1, origin: 'coordinator' });
    if (r.errorCode !== 0) throw new Error(`metadata log append failed with error ${r.errorCode}: ${r.errorMessage ?? ''}`);
    return r.lastOffset;
  }

  async close(): Promise<void> {
    await this.log.close();
  }
}
