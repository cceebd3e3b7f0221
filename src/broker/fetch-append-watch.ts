import type { PartitionLog } from '../storage/partition-log.js';

/**
 * Watches the logs of a long poll for its whole duration, so a change that lands while the
 * partitions are being read again is not lost: a log notifies when its end moves and again when
 * its high watermark follows (for acks=0/1 a moment later), and a poll woken by the first, that
 * reads before the second, must still see the second (Kafka's DelayedFetch is checked on each).
 */
export class AppendWatch {
  private changed = false;
  private wake: (() => void) | null = null;
  private readonly offs = new Map<PartitionLog, () => void>();

  watch(logs: readonly (PartitionLog | undefined)[]): void {
    for (const l of logs) {
      if (l === undefined || this.offs.has(l)) continue;
      this.offs.set(
        l,
        l.onAppend(() => {
          this.changed = true;
          this.wake?.();
        }),
      );
    }
  }

  /** Resolves at once when a log changed since the last call, else at the next change, the deadline, or an abort. */
  next(ms: number, signal: AbortSignal): Promise<void> {
    if (this.changed || signal.aborted) {
      this.changed = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        signal.removeEventListener('abort', done);
        this.wake = null;
        this.changed = false;
        resolve();
      };
      const timer = setTimeout(done, ms);
      signal.addEventListener('abort', done);
      this.wake = done;
    });
  }

  close(): void {
    for (const off of this.offs.values()) off();
    this.offs.clear();
  }
}
