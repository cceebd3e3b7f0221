/**
 * The controller's metadata log in `<data>/__cluster_metadata-0/00000000000000000000.log`: Kafka
 * record batches (magic 2, uncompressed, key null, value = metadata record), appended and fsynced
 * one batch per controller write. The log is small and read once at start, so one segment with
 * no index is enough; a torn trailing batch from a crash is cut off on open (the write was never
 * acknowledged).
 */
import { mkdir, open, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { DecodeError } from '../protocol/decode-error.js';
import { iterateBatches } from '../protocol/record-batch.js';
import { buildRecordBatch, decodeRecords } from '../protocol/records.js';
import type { MetadataLogStore } from './controller.js';

export const METADATA_TOPIC_DIR = '__cluster_metadata-0';
const SEGMENT = '00000000000000000000.log';

export class FileMetadataLog implements MetadataLogStore {
  private nextOffset = 0;
  private size = 0;

  private constructor(
    private readonly fh: FileHandle,
    private readonly leaderEpoch: number,
  ) {}

  static async open(dataDir: string, leaderEpoch = 1): Promise<FileMetadataLog> {
    const dir = join(dataDir, METADATA_TOPIC_DIR);
    await mkdir(dir, { recursive: true });
    const fh = await open(join(dir, SEGMENT), 'a+');
    return new FileMetadataLog(fh, leaderEpoch);
  }

  async replay(cb: (offset: number, value: Buffer) => void): Promise<void> {
    const { size } = await this.fh.stat();
    const buf = Buffer.alloc(size);
    if (size > 0) await this.fh.read(buf, 0, size, 0);
    const it = iterateBatches(buf);
    let valid = 0;
    try {
      for (const batch of it) {
        if (!batch.isValid()) break;
        for (const rec of decodeRecords(batch)) {
          if (rec.value) cb(rec.offset, rec.value);
        }
        this.nextOffset = batch.lastOffset + 1;
        valid = it.validBytes;
      }
    } catch (err) {
      if (!(err instanceof DecodeError)) throw err;
    }
    if (valid < size) await this.fh.truncate(valid);
    this.size = valid;
  }

  async append(values: readonly Buffer[]): Promise<number> {
    const batch = buildRecordBatch({
      baseOffset: this.nextOffset,
      partitionLeaderEpoch: this.leaderEpoch,
      records: values.map((value) => ({ key: null, value })),
    });
    await this.fh.write(batch, 0, batch.length, this.size);
    await this.fh.datasync();
    this.size += batch.length;
    this.nextOffset += values.length;
    return this.nextOffset - 1;
  }

  async close(): Promise<void> {
    await this.fh.close();
  }
}
