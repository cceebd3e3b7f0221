/**
 * The fetcher's timer seam: backoff sleeps of the per-broker loops and the metadata retry for
 * partitions without a source leader are scheduled here, never with a bare setTimeout, so a test
 * can drive them by hand. Shaped like the coordinator's timers, so a node passes the same object.
 */

/** Cancels a scheduled callback; calling it after the callback ran is harmless. */
export type CancelTimer = () => void;

export interface FetcherTimers {
  schedule(delayMs: number, fn: () => void): CancelTimer;
}

/** Production timers on the event loop; they never keep the process alive on their own. */
export const realTimers: FetcherTimers = {
  schedule(delayMs, fn) {
    const t = setTimeout(fn, Math.max(0, delayMs));
    t.unref();
    return () => clearTimeout(t);
  },
};
