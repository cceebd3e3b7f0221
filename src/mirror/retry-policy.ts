/**
 * Backoff policies of the mirror partition state machine: FAILED retries (spec §7.4,
 * `mirror.failed.retry.*`, exponential with jitter as Kafka's ExponentialBackoff) and retries of
 * a `__mirror_state` write that failed.
 */
import type { MirrorPartitionStateValue as State } from './mirror-partition-state.js';

export interface RetryPolicy {
  /** mirror.failed.retry.initial.backoff.ms (default 1000). */
  readonly initialBackoffMs: number;
  /** mirror.failed.retry.max.backoff.ms (default 300000). */
  readonly maxBackoffMs: number;
  /** mirror.failed.retry.max.attempts (default 100; 0 disables retries). */
  readonly maxAttempts: number;
  /** ± fraction applied to each backoff (Kafka's ExponentialBackoff uses 0.2). */
  readonly jitter: number;
}

/**
 * Retries of a `__mirror_state` write that failed (the reference retries every 100 ms without a
 * bound, spec §7.4): 100 ms doubling to 5 s, for as long as the partition is led here.
 */
export const STATE_WRITE_RETRY_POLICY: RetryPolicy = { initialBackoffMs: 100, maxBackoffMs: 5000, maxAttempts: Number.POSITIVE_INFINITY, jitter: 0.2 };

/** A partition whose transition has not been persisted for this long is shown as stuck in describe. */
export const DEFAULT_STUCK_AFTER_MS = 5000;

/** A transition whose state write keeps failing. */
export interface PendingStateWrite {
  readonly to: State;
  /** When its first write failed. */
  readonly sinceMs: number;
  readonly attempts: number;
  readonly lastError: string;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = {
  initialBackoffMs: 1000,
  maxBackoffMs: 300_000,
  maxAttempts: 100,
  jitter: 0.2,
};

/** Backoff before retry number `attempt` (1-based): min(max, initial·2^(attempt-1)) · (1 ± jitter). */
export function retryBackoffMs(policy: RetryPolicy, attempt: number, random: () => number): number {
  const term = policy.initialBackoffMs * 2 ** Math.max(0, attempt - 1);
  const value = Math.min(term, policy.maxBackoffMs);
  const factor = policy.jitter > 0 ? 1 - policy.jitter + random() * 2 * policy.jitter : 1;
  return Math.floor(value * factor);
}
