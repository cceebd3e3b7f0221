/**
 * The two measures Kafka's quotas are built on, with Kafka's arithmetic so a client sees the same
 * throttle times it would from Apache Kafka:
 *
 * - `SampledRate`: Kafka's `Rate` over a `SampledStat` (org.apache.kafka.common.metrics.stats):
 *   `samples` windows of `windowMs` each, the oldest reused when a new one starts; the rate is the
 *   sum of the retained windows over the elapsed time, the elapsed time padded to at least
 *   `samples - 1` full windows so a client's first burst is measured against the whole window.
 * - `TokenBucket`: Kafka's `TokenBucket` for the controller mutation quota (KIP-599): a bucket of
 *   `quota * samples * windowSeconds` tokens refilled at `quota` per second; a recording may take
 *   it below zero, and the debt is the throttle.
 *
 * Concurrency contract: used from the node's one event loop only.
 */

export interface QuotaWindow {
  /** `quota.window.num`: windows retained. */
  readonly samples: number;
  /** `quota.window.size.seconds` in milliseconds. */
  readonly windowMs: number;
}

interface Sample {
  startMs: number;
  value: number;
}

export class SampledRate {
  private readonly windows: Sample[] = [];
  private current = 0;

  constructor(private readonly window: QuotaWindow) {}

  record(value: number, nowMs: number): void {
    let s = this.currentSample(nowMs);
    if (nowMs - s.startMs >= this.window.windowMs) s = this.advance(nowMs);
    s.value += value;
  }

  /** The rate per second at `nowMs` (Kafka's Rate.measure). */
  measure(nowMs: number): number {
    this.purgeObsolete(nowMs);
    let total = 0;
    for (const s of this.windows) total += s.value;
    return total / (this.windowSize(nowMs) / 1000);
  }

  /** Kafka's Rate.windowSize: the elapsed time the rate is measured over, in milliseconds. */
  windowSize(nowMs: number): number {
    this.purgeObsolete(nowMs);
    const oldest = this.windows.reduce((min, s) => Math.min(min, s.startMs), nowMs);
    let elapsed = nowMs - oldest;
    const fullWindows = Math.floor(elapsed / this.window.windowMs);
    const minFullWindows = this.window.samples - 1;
    if (fullWindows < minFullWindows) elapsed += (minFullWindows - fullWindows) * this.window.windowMs;
    return Math.max(elapsed, 1);
  }

  private currentSample(nowMs: number): Sample {
    if (this.windows.length === 0) this.windows.push({ startMs: nowMs, value: 0 });
    return this.windows[this.current]!;
  }

  private advance(nowMs: number): Sample {
    this.current = (this.current + 1) % this.window.samples;
    if (this.current >= this.windows.length) {
      const s = { startMs: nowMs, value: 0 };
      this.windows.push(s);
      return s;
    }
    const s = this.windows[this.current]!;
    s.startMs = nowMs;
    s.value = 0;
    return s;
  }

  /** Windows older than the whole retained span count for nothing (SampledStat.purgeObsoleteSamples). */
  private purgeObsolete(nowMs: number): void {
    const expireAge = this.window.samples * this.window.windowMs;
    for (const s of this.windows) {
      if (nowMs - s.startMs >= expireAge) {
        s.startMs = nowMs;
        s.value = 0;
      }
    }
  }
}

export class TokenBucket {
  private tokens = Number.NaN;
  private lastUpdateMs = 0;

  constructor(private readonly window: QuotaWindow) {}

  /** Tokens left at `nowMs` for a bucket refilled at `quota` per second; negative is debt. */
  measure(quota: number, nowMs: number): number {
    this.refill(quota, nowMs);
    return this.tokens;
  }

  record(quota: number, value: number, nowMs: number): void {
    this.refill(quota, nowMs);
    this.tokens = Math.min(this.burst(quota), this.tokens - value);
  }

  private burst(quota: number): number {
    return quota * this.window.samples * (this.window.windowMs / 1000);
  }

  private refill(quota: number, nowMs: number): void {
    // A new bucket starts full, as Kafka's does (its first refill covers the epoch).
    const burst = this.burst(quota);
    this.tokens = Number.isNaN(this.tokens) ? burst : Math.min(burst, this.tokens + (quota * (nowMs - this.lastUpdateMs)) / 1000);
    this.lastUpdateMs = nowMs;
  }
}
