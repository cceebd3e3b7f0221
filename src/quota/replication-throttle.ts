/**
 * The mirror replication throttle (KIP-1279 §6.1 `mirror.replication.throttled.rate`, quota type
 * MirrorReplication): a cap in bytes per second on what this node's mirror fetchers bring from
 * their sources, as Kafka's ReplicationQuotaManager caps follower replication with
 * `follower.replication.throttled.rate`.
 *
 * A token bucket, one per node, shared by every mirror and source broker loop: each fetched byte
 * takes a token; tokens come back at the rate, up to one second's worth. A loop asks `delayMs`
 * before it sends a Fetch and waits while the bucket is in debt, then `record`s the bytes the
 * answer carried. A fetch is never cut short, so a burst may overshoot by one response; the debt
 * it leaves holds the next fetch back until the average is the rate again. The rate is read on
 * every call, so a dynamic config change applies to the next fetch, and a wait is never longer
 * than a second so a raised rate is seen soon.
 *
 * Concurrency contract: single event loop; no state besides the bucket.
 */
import type { Clock } from '../common/time.js';

export interface FetchQuota {
  /** How long to wait before the next Fetch; 0 sends it now. */
  delayMs(): number;
  /** The bytes a Fetch answer carried. */
  record(bytes: number): void;
}

/** The longest single wait: a rate raised meanwhile is picked up at the next check. */
const MAX_WAIT_MS = 1000;

export class ReplicationThrottle implements FetchQuota {
  private tokens = 0;
  private last: number;

  /** `rate` gives the current cap in bytes/s; a value ≥ Number.MAX_SAFE_INTEGER or not finite means none. */
  constructor(
    private readonly rate: () => number,
    private readonly clock: Clock,
  ) {
    this.last = clock.now();
  }

  private refill(): number {
    const rate = this.rate();
    const now = this.clock.now();
    const elapsed = Math.max(0, now - this.last);
    this.last = now;
    if (!unlimited(rate)) this.tokens = Math.min(rate, this.tokens + (rate * elapsed) / 1000);
    return rate;
  }

  delayMs(): number {
    const rate = this.refill();
    if (unlimited(rate) || this.tokens >= 0) return 0;
    if (rate <= 0) return MAX_WAIT_MS;
    return Math.min(MAX_WAIT_MS, Math.ceil((-this.tokens * 1000) / rate));
  }

  record(bytes: number): void {
    const rate = this.refill();
    if (unlimited(rate)) {
      this.tokens = 0;
      return;
    }
    this.tokens -= bytes;
  }
}

function unlimited(rate: number): boolean {
  return !Number.isFinite(rate) || rate >= Number.MAX_SAFE_INTEGER;
}
