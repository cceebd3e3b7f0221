/**
 * The controller mutation quota (KIP-599, Kafka's ControllerMutationQuotaManager): topic and
 * partition creations and deletions are counted in partitions against `controller_mutation_rate`
 * on a token bucket per client (resolved like every client quota).
 *
 * - Strict (CreateTopics v6+, CreatePartitions v3+, DeleteTopics v5+): a topic is refused with
 *   THROTTLING_QUOTA_EXCEEDED while the bucket is in debt; otherwise it is admitted even if it
 *   takes the bucket below zero, so a request larger than the burst is never refused forever.
 * - Permissive (older versions): every topic is admitted and recorded; the debt is only throttle.
 *
 * The throttle time is the time the bucket needs to pay its debt: `-tokens / rate` seconds.
 * Concurrency contract: used from the node's one event loop only.
 */
import { QuotaLimits, type QuotaClient } from './client-quota-manager.js';
import { TokenBucket, type QuotaWindow } from './sampled-rate.js';

export class ControllerMutationQuotaManager {
  private readonly buckets = new Map<string, TokenBucket>();

  constructor(
    private readonly limits: QuotaLimits,
    private readonly window: QuotaWindow,
  ) {}

  /** The quota of one request; `strict` as its API version asks. */
  newQuota(client: QuotaClient, strict: boolean, nowMs: () => number = Date.now): ControllerMutationQuota {
    const q = this.limits.resolve(client);
    if (q === null) return UNBOUNDED;
    let bucket = this.buckets.get(q.sensorKey);
    if (!bucket) this.buckets.set(q.sensorKey, (bucket = new TokenBucket(this.window)));
    return new BucketQuota(bucket, q.bound, strict, nowMs);
  }
}

export interface ControllerMutationQuota {
  /** Counts `partitions` mutations; false (nothing counted) when a strict quota refuses them. */
  tryRecord(partitions: number): boolean;
  /** The throttle time the request's response carries, in ms. */
  readonly throttleTimeMs: number;
}

const UNBOUNDED: ControllerMutationQuota = {
  tryRecord: () => true,
  throttleTimeMs: 0,
};

class BucketQuota implements ControllerMutationQuota {
  throttleTimeMs = 0;

  constructor(
    private readonly bucket: TokenBucket,
    private readonly rate: number,
    private readonly strict: boolean,
    private readonly nowMs: () => number,
  ) {}

  tryRecord(partitions: number): boolean {
    const now = this.nowMs();
    if (this.strict) {
      const tokens = this.bucket.measure(this.rate, now);
      if (tokens < 0) {
        this.throttleTimeMs = Math.max(this.throttleTimeMs, Math.round((-tokens / this.rate) * 1000));
        return false;
      }
      this.bucket.record(this.rate, partitions, now);
      return true;
    }
    this.bucket.record(this.rate, partitions, now);
    const tokens = this.bucket.measure(this.rate, now);
    if (tokens < 0) this.throttleTimeMs = Math.max(this.throttleTimeMs, Math.round((-tokens / this.rate) * 1000));
    return true;
  }
}
