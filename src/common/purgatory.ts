/**
 * Operations that wait for a condition or a deadline, whichever comes first (Kafka's
 * DelayedOperation and DelayedOperationPurgatory): a long-poll fetch waiting for data, an
 * acks=all produce waiting for the ISR.
 *
 * - An operation is watched under keys (a partition, a log): whoever changes what a key stands
 *   for calls `checkAndComplete(key)`, which asks each operation watched under it to
 *   `tryComplete`.
 * - `tryComplete` checks the operation's condition and, when it holds, calls `forceComplete`. An
 *   operation may also complete later on its own (after an asynchronous read, say) by calling
 *   `forceComplete` itself.
 * - At its deadline an operation not yet completed is completed: `onComplete`, then
 *   `onExpiration`, as in Kafka.
 * - `forceComplete` runs `onComplete` exactly once, for whichever comes first; every later
 *   check or deadline finds the operation completed and does nothing. A completed operation
 *   leaves every key it was watched under and cancels its deadline.
 *
 * Concurrency contract: event loop only. `onComplete` and `onExpiration` run synchronously
 * inside the call that completed the operation (a check, a deadline, `forceComplete`).
 */
import { realTimers, type CancelTimer, type Timers } from './time.js';

export abstract class DelayedOperation {
  private completed = false;
  /** Undone when the operation completes: its deadline and its places in watch lists. */
  private readonly cleanups: (() => void)[] = [];

  /** `delayMs`: how long the operation may wait before it expires. */
  constructor(readonly delayMs: number) {}

  /** Checks the condition; when it holds, completes the operation and returns true. */
  abstract tryComplete(): boolean;

  /** Runs once, when the operation completes (its condition held, it was forced, or it expired). */
  protected abstract onComplete(): void;

  /** Runs after `onComplete` when the operation completed by reaching its deadline. */
  protected abstract onExpiration(): void;

  get isCompleted(): boolean {
    return this.completed;
  }

  /** Completes the operation unless it already was: true only for the call that completed it. */
  forceComplete(): boolean {
    if (this.completed) return false;
    this.completed = true;
    for (const undo of this.cleanups.splice(0)) undo();
    this.onComplete();
    return true;
  }

  /** @internal the purgatory's deadline: completes and then reports the expiration. */
  expire(): void {
    if (this.forceComplete()) this.onExpiration();
  }

  /** @internal registers what the purgatory undoes when the operation completes. */
  onCompleted(undo: () => void): void {
    if (this.completed) undo();
    else this.cleanups.push(undo);
  }
}

interface PurgatoryOptions<K> {
  readonly timers?: Timers;
  /** A key gets its first watcher: its owner may start reporting changes (e.g. subscribe to a log). */
  readonly onWatched?: (key: K) => void;
  /** A key lost its last watcher: reporting its changes may stop. */
  readonly onUnwatched?: (key: K) => void;
}

export class DelayedOperationPurgatory<K> {
  private readonly watchers = new Map<K, Set<DelayedOperation>>();
  private readonly timers: Timers;
  private pending = 0;

  constructor(private readonly opts: PurgatoryOptions<K> = {}) {
    this.timers = opts.timers ?? realTimers;
  }

  /**
   * Completes `op` now if its condition holds; otherwise watches it under `keys` until a check
   * on one of them completes it, or its deadline does. Returns true when it completed at once.
   */
  tryCompleteElseWatch(op: DelayedOperation, keys: readonly K[]): boolean {
    if (op.tryComplete()) return true;
    if (op.isCompleted) return false;
    for (const key of keys) this.watch(op, key);
    this.pending++;
    op.onCompleted(() => this.pending--);
    const cancel: CancelTimer = this.timers.schedule(Math.max(0, op.delayMs), () => op.expire());
    op.onCompleted(cancel);
    return false;
  }

  /** Asks every operation watched under `key` to try to complete; returns how many did. */
  checkAndComplete(key: K): number {
    const ops = this.watchers.get(key);
    if (ops === undefined) return 0;
    let completed = 0;
    // A completing operation leaves the set: iterate over a copy.
    for (const op of [...ops]) if (!op.isCompleted && op.tryComplete()) completed++;
    return completed;
  }

  /** Operations waiting (watched, not yet completed). */
  get delayed(): number {
    return this.pending;
  }

  /** Operations watched under `key`. */
  watched(key: K): number {
    return this.watchers.get(key)?.size ?? 0;
  }

  private watch(op: DelayedOperation, key: K): void {
    let ops = this.watchers.get(key);
    if (ops === undefined) {
      ops = new Set();
      this.watchers.set(key, ops);
      this.opts.onWatched?.(key);
    }
    if (ops.has(op)) return;
    ops.add(op);
    const set = ops;
    op.onCompleted(() => {
      set.delete(op);
      if (set.size === 0 && this.watchers.get(key) === set) {
        this.watchers.delete(key);
        this.opts.onUnwatched?.(key);
      }
    });
  }
}
