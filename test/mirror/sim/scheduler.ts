/**
 * The simulation's scheduler: a virtual clock, timers on it, and every asynchronous step of the
 * simulated surroundings as a pending operation that completes only when the scheduler picks it.
 * Which one is picked, which timer fires and which fault or command happens next all come from a
 * tape of decisions (numbers), so a run is a function of its tape: the same tape replays the same
 * run, and a shorter or smaller tape is a simpler run (what fast-check shrinks).
 *
 * Between two steps the real code runs as far as it can on its own (promise continuations), which
 * `settle` lets happen: nothing in the simulated world completes by itself.
 */
import type { CancelTimer, Timers } from '../../../src/common/time.js';

/** Decisions from a tape; past its end every decision is 0 (the first choice). */
export class Tape {
  private i = 0;
  constructor(private readonly values: readonly number[]) {}
  /** A choice in [0, n). */
  choose(n: number): number {
    if (n <= 1) return 0;
    const v = this.values[this.i++] ?? 0;
    return Math.abs(v) % n;
  }
  get used(): number {
    return this.i;
  }
  get exhausted(): boolean {
    return this.i >= this.values.length;
  }
}

interface Pending {
  readonly id: number;
  readonly label: string;
  /** The node the step belongs to (dropped when it crashes); -1 for the world's own. */
  readonly node: number;
  readonly run: () => void;
}

interface Timer {
  readonly id: number;
  readonly at: number;
  readonly node: number;
  readonly fn: () => void;
}

export class Scheduler {
  now = 0;
  private seq = 0;
  private pending: Pending[] = [];
  private timers: Timer[] = [];

  /** Completes `fn` when picked; the promise settles with its result then. */
  op<T>(label: string, node: number, fn: () => T | Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.pending.push({
        id: ++this.seq,
        label,
        node,
        run: () => {
          try {
            Promise.resolve(fn()).then(resolve, reject);
          } catch (err) {
            reject(err);
          }
        },
      });
    });
  }

  /** Runs `fn` when picked (a delivery: a notification, a deferred turn). */
  defer(label: string, node: number, fn: () => void): void {
    this.pending.push({ id: ++this.seq, label, node, run: fn });
  }

  timersFor(node: number): Timers {
    return {
      schedule: (delayMs, fn) => this.schedule(delayMs, node, fn),
      monotonicNow: () => this.now,
    };
  }

  schedule(delayMs: number, node: number, fn: () => void): CancelTimer {
    const t = { id: ++this.seq, at: this.now + Math.max(0, delayMs), node, fn };
    this.timers.push(t);
    return () => {
      this.timers = this.timers.filter((x) => x.id !== t.id);
    };
  }

  /** A node crashed: what it had in flight never completes, its timers never fire. */
  dropNode(node: number): void {
    this.pending = this.pending.filter((p) => p.node !== node);
    this.timers = this.timers.filter((t) => t.node !== node);
  }

  get pendingCount(): number {
    return this.pending.length;
  }

  pendingLabels(): string[] {
    return this.pending.map((p) => p.label);
  }

  /** Completes the pending step the tape picks; its label, or null when none is pending. */
  completeOne(tape: Tape): string | null {
    if (this.pending.length === 0) return null;
    const i = tape.choose(this.pending.length);
    const [p] = this.pending.splice(i, 1);
    p!.run();
    return p!.label;
  }

  /** Moves the clock to the next timer and fires it; false when none is set. */
  fireNextTimer(): boolean {
    if (this.timers.length === 0) return false;
    let first = this.timers[0]!;
    for (const t of this.timers) if (t.at < first.at || (t.at === first.at && t.id < first.id)) first = t;
    this.timers = this.timers.filter((t) => t.id !== first.id);
    if (first.at > this.now) this.now = first.at;
    first.fn();
    return true;
  }

  get nextTimerAt(): number {
    let at = Infinity;
    for (const t of this.timers) if (t.at < at) at = t.at;
    return at;
  }
}

/** Lets promise continuations run until none is left (nothing real completes in between). */
export async function settle(): Promise<void> {
  for (let i = 0; i < 4; i++) await new Promise<void>((r) => setImmediate(r));
}
