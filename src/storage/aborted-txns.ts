import type { AbortedTxn } from './indexes.js';
import type { AbortedTransaction } from './partition-log-options.js';

/**
 * The aborted transactions of one partition log in marker order (the in-memory view of its
 * segments' .txnindex files, Kafka's TransactionIndex collection), for read_committed fetches.
 *
 * Concurrency contract: changed only from inside the PartitionLog's per-partition queue; reads
 * see a consistent list because no change awaits halfway.
 */
export class AbortedTxns {
  private list: AbortedTxn[] = [];

  get all(): readonly AbortedTxn[] {
    return this.list;
  }

  push(...entries: AbortedTxn[]): void {
    this.list.push(...entries);
  }

  clear(): void {
    this.list = [];
  }

  /** Keeps the transactions that ended before `logEndOffset` (after a truncation). */
  truncateFromEnd(logEndOffset: number): void {
    this.list = this.list.filter((t) => t.lastOffset < logEndOffset);
  }

  /** Drops the transactions that ended before `logStartOffset` (after segments were deleted). */
  truncateFromStart(logStartOffset: number): void {
    this.list = this.list.filter((t) => t.lastOffset >= logStartOffset);
  }

  /** Aborted transactions overlapping [from, upper) (Kafka's collectAbortedTransactions). */
  between(from: number, upper: number): AbortedTransaction[] {
    const out: AbortedTransaction[] = [];
    // Entries are in marker order, so lastOffset increases: start at the first ending at or after
    // `from`. Once an entry's lastStableOffset reaches `upper`, every later transaction started at
    // or after it, so none of them can overlap the range (Kafka's TransactionIndex rule).
    let lo = 0;
    let hi = this.list.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((this.list[mid] as AbortedTxn).lastOffset < from) lo = mid + 1;
      else hi = mid;
    }
    for (let i = lo; i < this.list.length; i++) {
      const t = this.list[i] as AbortedTxn;
      if (t.firstOffset < upper) out.push({ producerId: t.producerId, firstOffset: t.firstOffset });
      if (t.lastStableOffset >= upper) break;
    }
    return out;
  }
}
