/**
 * Time, as every room takes it: injected, so that tests and the simulation drive it by hand.
 * `Clock` is the wall clock (ms since the epoch: timestamps, retention); `Timers` schedules
 * callbacks on a monotonic timeline (timeouts, backoffs, retries), never a bare setTimeout.
 */

/** Milliseconds since the epoch. */
export interface Clock {
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

/** Cancels a scheduled callback; calling it after the callback ran is harmless. */
export type CancelTimer = () => void;

/** Schedules callbacks (setTimeout in production, a manual queue in tests). */
export interface Timers {
  schedule(delayMs: number, fn: () => void): CancelTimer;
  /**
   * Now, in ms, on the timeline `schedule` counts on (monotonic, unlike the clock). Without it
   * the host's clock is taken, as a manual test clock drives both.
   */
  monotonicNow?(): number;
}

/** Production timers on the event loop; they never keep the process alive on their own. */
export const realTimers: Timers = {
  schedule(delayMs, fn) {
    const t = setTimeout(fn, Math.max(0, delayMs));
    t.unref();
    return () => clearTimeout(t);
  },
  monotonicNow: () => performance.now(),
};
