import { describe, expect, it } from 'vitest';
import type { CancelTimer, Timers } from '../../src/common/time.js';
import { DelayedOperation, DelayedOperationPurgatory } from '../../src/common/purgatory.js';

/** Timers moved by hand: `advance` fires what falls due, in deadline order. */
class StepTimers implements Timers {
  now = 0;
  private seq = 0;
  private readonly queue = new Map<number, { at: number; fn: () => void }>();
  schedule(delayMs: number, fn: () => void): CancelTimer {
    const id = this.seq++;
    this.queue.set(id, { at: this.now + delayMs, fn });
    return () => void this.queue.delete(id);
  }
  advance(ms: number): void {
    const target = this.now + ms;
    for (;;) {
      const due = [...this.queue].filter(([, e]) => e.at <= target).sort((a, b) => a[1].at - b[1].at)[0];
      if (due === undefined) break;
      this.queue.delete(due[0]);
      this.now = due[1].at;
      due[1].fn();
    }
    this.now = target;
  }
  get scheduled(): number {
    return this.queue.size;
  }
}

/** Waits for a counter to reach `target`; records how it ended. */
class WaitFor extends DelayedOperation {
  readonly events: string[] = [];
  constructor(
    delayMs: number,
    private readonly counter: { value: number },
    private readonly target: number,
  ) {
    super(delayMs);
  }
  tryComplete(): boolean {
    this.events.push('try');
    return this.counter.value >= this.target && this.forceComplete();
  }
  protected onComplete(): void {
    this.events.push(`complete at ${this.counter.value}`);
  }
  protected onExpiration(): void {
    this.events.push('expired');
  }
}

describe('DelayedOperationPurgatory', () => {
  it('completes at once, without watching or a deadline, when the condition already holds', () => {
    const timers = new StepTimers();
    const p = new DelayedOperationPurgatory<string>({ timers });
    const op = new WaitFor(100, { value: 5 }, 5);
    expect(p.tryCompleteElseWatch(op, ['a'])).toBe(true);
    expect(op.events).toEqual(['try', 'complete at 5']);
    expect(p.watched('a')).toBe(0);
    expect(p.delayed).toBe(0);
    expect(timers.scheduled).toBe(0);
  });

  it('completes on a check of a watched key once the condition holds, and only once', () => {
    const timers = new StepTimers();
    const p = new DelayedOperationPurgatory<string>({ timers });
    const counter = { value: 0 };
    const op = new WaitFor(100, counter, 2);
    expect(p.tryCompleteElseWatch(op, ['a', 'b'])).toBe(false);
    expect(p.delayed).toBe(1);
    counter.value = 1;
    expect(p.checkAndComplete('a')).toBe(0);
    counter.value = 2;
    expect(p.checkAndComplete('b')).toBe(1);
    expect(p.checkAndComplete('a')).toBe(0);
    timers.advance(1000);
    expect(op.events).toEqual(['try', 'try', 'try', 'complete at 2']);
    expect(p.watched('a') + p.watched('b')).toBe(0);
    expect(p.delayed).toBe(0);
    expect(timers.scheduled).toBe(0);
  });

  it('expires at its deadline: onComplete, then onExpiration, and no later check completes it again', () => {
    const timers = new StepTimers();
    const p = new DelayedOperationPurgatory<string>({ timers });
    const counter = { value: 0 };
    const op = new WaitFor(100, counter, 1);
    p.tryCompleteElseWatch(op, ['a']);
    timers.advance(99);
    expect(op.isCompleted).toBe(false);
    timers.advance(1);
    expect(op.events).toEqual(['try', 'complete at 0', 'expired']);
    counter.value = 1;
    expect(p.checkAndComplete('a')).toBe(0);
    expect(op.events).toEqual(['try', 'complete at 0', 'expired']);
    expect(p.delayed).toBe(0);
  });

  it('an operation completed by its own forceComplete leaves its keys and its deadline', () => {
    const timers = new StepTimers();
    const unwatched: string[] = [];
    const watched: string[] = [];
    const p = new DelayedOperationPurgatory<string>({ timers, onWatched: (k) => watched.push(k), onUnwatched: (k) => unwatched.push(k) });
    const counter = { value: 0 };
    const first = new WaitFor(100, counter, 1);
    const second = new WaitFor(100, counter, 1);
    p.tryCompleteElseWatch(first, ['a', 'b']);
    p.tryCompleteElseWatch(second, ['b']);
    expect(watched).toEqual(['a', 'b']);
    expect(first.forceComplete()).toBe(true);
    expect(first.forceComplete()).toBe(false);
    expect(unwatched).toEqual(['a']);
    expect(p.watched('b')).toBe(1);
    timers.advance(100);
    expect(first.events).toEqual(['try', 'complete at 0']);
    expect(second.events).toEqual(['try', 'complete at 0', 'expired']);
    expect(unwatched).toEqual(['a', 'b']);
  });

  it('a check completes every satisfied operation under the key and leaves the others waiting', () => {
    const timers = new StepTimers();
    const p = new DelayedOperationPurgatory<string>({ timers });
    const counter = { value: 0 };
    const near = new WaitFor(100, counter, 1);
    const far = new WaitFor(100, counter, 3);
    p.tryCompleteElseWatch(near, ['a']);
    p.tryCompleteElseWatch(far, ['a']);
    counter.value = 1;
    expect(p.checkAndComplete('a')).toBe(1);
    expect(near.isCompleted).toBe(true);
    expect(far.isCompleted).toBe(false);
    expect(p.watched('a')).toBe(1);
    expect(p.delayed).toBe(1);
  });
});
