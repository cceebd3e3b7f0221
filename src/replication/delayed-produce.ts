/**
 * acks=all produces of one partition led here, waiting for the high watermark to pass their last
 * offset (Kafka's DelayedProduce with Partition.checkEnoughReplicasReachOffset): complete with
 * NONE once it has and the ISR still holds min.insync.replicas, NOT_ENOUGH_REPLICAS_AFTER_APPEND
 * when the ISR shrank below it meanwhile, REQUEST_TIMED_OUT at the produce's timeout, and
 * NOT_LEADER_OR_FOLLOWER when this node stops leading the partition: an acks=all write is
 * acknowledged only once every ISR member has it, and never by a node that lost leadership.
 *
 * Concurrency contract: event loop only; `check` runs on every high-watermark move and ISR
 * change, and each waiter completes exactly once.
 */
import { ErrorCode } from '../protocol/generated/errors.js';

interface Waiter {
  readonly requiredOffset: number;
  readonly resolve: (errorCode: number) => void;
  readonly timer: NodeJS.Timeout;
}

export interface ProduceProgress {
  readonly highWatermark: number;
  readonly isrSize: number;
  readonly minIsr: number;
}

export class DelayedProduces {
  private readonly waiters = new Set<Waiter>();

  /** Resolves with the partition's error code for a write whose last offset + 1 is `requiredOffset`. */
  wait(requiredOffset: number, timeoutMs: number, now: ProduceProgress): Promise<number> {
    const done = this.outcome(requiredOffset, now);
    if (done !== null) return Promise.resolve(done);
    return new Promise((resolve) => {
      const w: Waiter = {
        requiredOffset,
        resolve,
        timer: setTimeout(() => this.complete(w, ErrorCode.REQUEST_TIMED_OUT), Math.max(0, timeoutMs)),
      };
      this.waiters.add(w);
    });
  }

  /** Completes every waiter whose offset the high watermark has passed. */
  check(now: ProduceProgress): void {
    for (const w of this.waiters) {
      const code = this.outcome(w.requiredOffset, now);
      if (code !== null) this.complete(w, code);
    }
  }

  /** Completes every waiter with `errorCode` (leadership lost, node fenced, log closed). */
  failAll(errorCode: number): void {
    for (const w of this.waiters) this.complete(w, errorCode);
  }

  get size(): number {
    return this.waiters.size;
  }

  private outcome(requiredOffset: number, p: ProduceProgress): number | null {
    if (p.highWatermark < requiredOffset) return null;
    return p.isrSize >= p.minIsr ? ErrorCode.NONE : ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND;
  }

  private complete(w: Waiter, errorCode: number): void {
    if (!this.waiters.delete(w)) return;
    clearTimeout(w.timer);
    w.resolve(errorCode);
  }
}
