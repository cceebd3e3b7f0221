/** Something whose written data can be made durable (a partition log). */
export interface Syncable {
  syncNow(): Promise<void>;
}

interface Waiter {
  resolve(): void;
  reject(e: unknown): void;
}

/** One target's queue: the sync running now (if any) and who waits for the next one. */
interface TargetQueue {
  waiting: Waiter[];
}

/**
 * Group commit: fsync requests are gathered per log while that log's previous fsync runs, then
 * served by one fsync of that log. Throughput under acks=all therefore scales with the number of
 * writers instead of paying one fsync each.
 *
 * Each log has its own queue: a request waits only for the fsync of its own log that is already
 * running (its data may have been written after that fsync started, so it cannot ride on it),
 * never for another log's. A small acks=all write to one partition is thus not held behind the
 * fsync of a partition with hundreds of megabytes to write, as it would be if every log's fsyncs
 * ran in rounds that all had to finish before the next round began.
 *
 * Concurrency: at most one syncNow per target at a time; targets sync independently.
 */
export class GroupCommit {
  private readonly queues = new Map<Syncable, TargetQueue>();
  /** syncNow calls made (each serves every request gathered while the previous one ran). */
  syncs = 0;

  /** Resolves once everything `target` wrote before this call is on disk. */
  sync(target: Syncable): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      let queue = this.queues.get(target);
      if (queue === undefined) {
        queue = { waiting: [] };
        this.queues.set(target, queue);
        const q = queue;
        // One turn of the event loop first, so the requests of one burst of appends share a sync.
        setImmediate(() => void this.drain(target, q));
      }
      queue.waiting.push({ resolve, reject });
    });
  }

  /** True while `target` has a sync running or requested. */
  busy(target: Syncable): boolean {
    return this.queues.has(target);
  }

  private async drain(target: Syncable, queue: TargetQueue): Promise<void> {
    while (queue.waiting.length > 0) {
      const batch = queue.waiting;
      queue.waiting = [];
      this.syncs++;
      try {
        await target.syncNow();
        for (const w of batch) w.resolve();
      } catch (e) {
        for (const w of batch) w.reject(e);
      }
      // One more turn before the next sync, so the writes finishing now join it.
      if (queue.waiting.length > 0) await new Promise<void>((r) => setImmediate(r));
    }
    this.queues.delete(target);
  }
}

/**
 * The process-wide default: logs opened without their own GroupCommit share this one, so every
 * partition of the node counts its fsyncs in one place without extra wiring.
 */
export const sharedGroupCommit = new GroupCommit();
