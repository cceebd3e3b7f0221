/**
 * When a node must consider its etcd lease gone. etcd counts a lease's TTL from the moment it
 * receives the grant or keepalive, which is after the node sent it; so the node counts on its
 * lease only until a safety margin before `sent + TTL` of its last successful renewal, on the
 * monotonic clock (a wall-clock jump moves nothing).
 */

/** Leases and timeouts are measured on the monotonic clock: a wall-clock jump moves neither. */
export const monoNow = (): number => performance.now();

export class LeaseClock {
  /** Monotonic time the last successful grant or renewal was sent at (0: none since the grant). */
  private renewedAt = 0;

  constructor(private readonly sessionTimeoutMs: number) {}

  /** broker.session.timeout.ms rounded up to whole seconds (etcd's unit), at least 2. */
  get ttlSeconds(): number {
    return Math.max(2, Math.ceil(this.sessionTimeoutMs / 1000));
  }

  /**
   * How long after sending a renewal the node still counts on its lease: the TTL less a margin
   * for the timer firing late and for the two clocks' rates.
   */
  get safeLeaseMs(): number {
    const ttlMs = this.ttlSeconds * 1000;
    return ttlMs - Math.max(200, Math.floor(ttlMs / 10));
  }

  lapsed(): boolean {
    return monoNow() - this.renewedAt >= this.safeLeaseMs;
  }

  /** A new lease: nothing of the old one's renewals counts. */
  reset(): void {
    this.renewedAt = 0;
  }

  /** A successful grant or renewal sent at `sentAt`: the lease holds until `sentAt + safeLeaseMs`. */
  renewed(sentAt: number): void {
    this.renewedAt = Math.max(this.renewedAt, sentAt);
  }

  /** Milliseconds until the lease lapses (0 when it has). */
  msLeft(): number {
    return Math.max(0, this.renewedAt + this.safeLeaseMs - monoNow());
  }
}
