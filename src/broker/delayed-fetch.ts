/**
 * A long-poll fetch in the fetch purgatory (Kafka's DelayedFetch): watched under the logs it
 * reads, it completes once a read again finds the request answerable (MinBytes reached, an
 * error, a diverging epoch, mirror-epoch news), at MaxWaitMs (expired: the partitions are read
 * once more and answered with what they hold), or when the connection closes.
 *
 * A log reports when its end moves and again when its high watermark follows (for acks=0/1 a
 * moment later). A check finds whether any log moved since the last read (`movedSince`); if one
 * did, the partitions are read again, asynchronously, and a check that comes during that read
 * reads once more after it, so the second report is never lost.
 *
 * Concurrency contract: event loop only; one read of the operation's partitions at a time.
 */
import { DelayedOperation, DelayedOperationPurgatory } from '../common/purgatory.js';
import type { PartitionLog } from '../storage/partition-log.js';
import { movedSince, type FetchReads } from './fetch-read.js';

/** What a long poll reads and when it may answer. */
export interface LongPoll {
  /** Reads the partitions again; `prev` lets unchanged ones be kept. */
  read(prev: FetchReads): Promise<FetchReads>;
  /** True while the request may not be answered yet. */
  mustWait(reads: FetchReads): boolean;
  readonly follower: boolean;
}

/** Fetches waiting for appends, watched under the logs they read; each watched log wakes them through `onAppend`. */
export function fetchPurgatory(): DelayedOperationPurgatory<PartitionLog> {
  const offs = new Map<PartitionLog, () => void>();
  const purgatory: DelayedOperationPurgatory<PartitionLog> = new DelayedOperationPurgatory({
    onWatched: (log) => offs.set(log, log.onAppend(() => purgatory.checkAndComplete(log))),
    onUnwatched: (log) => {
      offs.get(log)?.();
      offs.delete(log);
    },
  });
  return purgatory;
}

class DelayedFetch extends DelayedOperation {
  private reading: Promise<void> | null = null;
  private readAgain = false;
  private expired = false;
  private failure: { readonly err: unknown } | null = null;
  private resolveDone: () => void = () => undefined;
  /** Resolves when the operation completes, however it does. */
  readonly done = new Promise<void>((resolve) => (this.resolveDone = resolve));

  constructor(
    delayMs: number,
    private reads: FetchReads,
    private readonly poll: LongPoll,
  ) {
    super(delayMs);
  }

  tryComplete(): boolean {
    if (this.reading !== null) {
      this.readAgain = true;
      return false;
    }
    if (movedSince(this.reads, this.poll.follower)) this.reading = this.readUntilQuiet();
    return false;
  }

  /** The reads to answer with, once completed: read once more when it expired. */
  async result(): Promise<FetchReads> {
    await this.done;
    await this.reading;
    if (this.failure !== null) throw this.failure.err;
    if (this.expired) this.reads = await this.poll.read(this.reads);
    return this.reads;
  }

  protected onComplete(): void {
    this.resolveDone();
  }

  protected onExpiration(): void {
    this.expired = true;
  }

  private async readUntilQuiet(): Promise<void> {
    try {
      do {
        this.readAgain = false;
        this.reads = await this.poll.read(this.reads);
        if (this.isCompleted) return;
        if (!this.poll.mustWait(this.reads)) {
          this.forceComplete();
          return;
        }
      } while (this.readAgain || movedSince(this.reads, this.poll.follower));
    } catch (err) {
      this.failure = { err };
      this.forceComplete();
    } finally {
      this.reading = null;
    }
  }
}

/**
 * Waits in `purgatory` until the request can be answered, `delayMs` passes, or `signal` aborts
 * (the connection closed); resolves with the reads to answer with.
 */
export async function awaitLongPoll(purgatory: DelayedOperationPurgatory<PartitionLog>, first: FetchReads, poll: LongPoll, delayMs: number, signal: AbortSignal): Promise<FetchReads> {
  const op = new DelayedFetch(delayMs, first, poll);
  const abort = (): void => void op.forceComplete();
  signal.addEventListener('abort', abort);
  try {
    const logs = [...new Set(first.outcomes.flatMap((o) => (o.log === undefined ? [] : [o.log])))];
    purgatory.tryCompleteElseWatch(op, logs);
    return await op.result();
  } finally {
    signal.removeEventListener('abort', abort);
  }
}
