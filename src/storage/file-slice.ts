import type { LogFile } from './file-system.js';

/**
 * A byte range of a segment file holding whole record batches, handed to the fetch path so it
 * reads the bytes straight into its own (pooled) buffer, with no intermediate copy here.
 *
 * The range stays readable for `file.delete.delay.ms` after its segment is deleted by retention
 * (the file is unlinked at once, the handle closed later). A truncation racing a read can
 * shorten what `readInto` returns; callers use the returned length.
 */
export class FileSlice {
  constructor(
    readonly file: LogFile,
    readonly position: number,
    readonly length: number,
  ) {}

  /** Reads the range into `buf` at `offset`; returns the bytes read (≤ length). */
  readInto(buf: Buffer, offset = 0): Promise<number> {
    return this.file.read(buf, offset, this.length, this.position);
  }
}
