import type { CoordinatorAppendResult, CoordinatorLog } from '../../src/coordinator/coordinator-host.js';
import { RecordBatchView, patchBaseOffset } from '../../src/protocol/record-batch.js';

/** A log kept in memory, with injectable append failures. */
export class MemoryLog implements CoordinatorLog {
  private readonly batches: Buffer[] = [];
  private failures: number[] = [];
  logStartOffset = 0;
  logEndOffset = 0;

  failNextAppend(errorCode: number): void {
    this.failures.push(errorCode);
  }

  async append(batch: Buffer): Promise<CoordinatorAppendResult> {
    await Promise.resolve();
    const fail = this.failures.shift();
    if (fail !== undefined) return { errorCode: fail, baseOffset: -1, lastOffset: -1 };
    const copy = Buffer.from(batch);
    const base = this.logEndOffset;
    patchBaseOffset(copy, 0, base);
    this.batches.push(copy);
    this.logEndOffset = base + new RecordBatchView(copy).lastOffsetDelta + 1;
    return { errorCode: 0, baseOffset: base, lastOffset: this.logEndOffset - 1 };
  }

  async readFrom(fetchOffset: number, maxBytes: number): Promise<Buffer> {
    const out: Buffer[] = [];
    let size = 0;
    for (const b of this.batches) {
      if (new RecordBatchView(b).lastOffset < fetchOffset) continue;
      if (out.length > 0 && size + b.length > maxBytes) break;
      out.push(b);
      size += b.length;
    }
    return Buffer.concat(out);
  }
}
