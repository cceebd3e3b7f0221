/** Something whose written data can be made durable (a partition log). */
export interface Syncable {
  syncNow(): Promise<void>;
}

interface Waiter {
  resolve(): void;
  reject(e: unknown): void;
}

/**
 * Group commit: fsync requests from any number of partitions and requests are gathered while
 * the previous round of fsyncs runs, then served by one fsync per dirty log. Throughput under
 * acks=all therefore scales with the number of writers instead of paying one fsync each.
 *
 * Concurrency: one round at a time; a request made during a round joins the next one (its data
 * may have been written after the running fsync started, so it cannot ride on it).
 */
export class GroupCommit {
  private pending = new Map<Syncable, Waiter[]>();
  private running = false;
  rounds = 0;
  syncs = 0;

  /** Resolves once everything `target` wrote before this call is on disk. */
  sync(target: Syncable): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      let list = this.pending.get(target);
      if (list === undefined) {
        list = [];
        this.pending.set(target, list);
      }
      list.push({ resolve, reject });
      if (!this.running) {
        this.running = true;
        setImmediate(() => void this.round());
      }
    });
  }

  private async round(): Promise<void> {
    while (this.pending.size > 0) {
      const batch = this.pending;
      this.pending = new Map();
      this.rounds++;
      const targets = [...batch.keys()];
      this.syncs += targets.length;
      const results = await Promise.allSettled(targets.map((t) => t.syncNow()));
      targets.forEach((t, i) => {
        const r = results[i] as PromiseSettledResult<void>;
        for (const w of batch.get(t) ?? []) {
          if (r.status === 'fulfilled') w.resolve();
          else w.reject(r.reason);
        }
      });
    }
    this.running = false;
  }
}

/**
 * The process-wide default: logs opened without their own GroupCommit share this one, so acks=all
 * fsyncs group across every partition of the node without extra wiring.
 */
export const sharedGroupCommit = new GroupCommit();
