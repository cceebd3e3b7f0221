/**
 * An acks=all write waiting for the high watermark to pass its last offset, in the produce
 * purgatory (Kafka's DelayedProduce with Partition.checkEnoughReplicasReachOffset): each
 * partition completes with NONE once the high watermark has passed its write and the ISR still
 * holds min.insync.replicas, NOT_ENOUGH_REPLICAS_AFTER_APPEND when the ISR shrank below it
 * meanwhile, and the resignation's code (NOT_LEADER_OR_FOLLOWER) when this node stops leading it:
 * an acks=all write is acknowledged only once every ISR member has it, and never by a node that
 * lost leadership. A partition still waiting at the deadline keeps REQUEST_TIMED_OUT.
 *
 * Concurrency contract: event loop only; the partitions' leaders check the purgatory under
 * their key on every high-watermark move, ISR change and resignation.
 */
import { DelayedOperation } from '../common/purgatory.js';
import { ErrorCode } from '../protocol/generated/errors.js';

/** A partition led here, as a waiting write sees it. */
export interface ReplicatedPartition {
  /** The partition's error code for a write whose last offset + 1 is `requiredOffset`; null while it waits. */
  replicationOutcome(requiredOffset: number): number | null;
}

interface ReplicatedWrite {
  readonly partition: ReplicatedPartition;
  readonly requiredOffset: number;
}

export class DelayedProduce extends DelayedOperation {
  private readonly codes: number[];
  private readonly waiting: boolean[];

  constructor(
    timeoutMs: number,
    private readonly writes: readonly ReplicatedWrite[],
    private readonly respond: (codes: readonly number[]) => void,
  ) {
    super(timeoutMs);
    this.codes = writes.map(() => ErrorCode.REQUEST_TIMED_OUT);
    this.waiting = writes.map(() => true);
  }

  tryComplete(): boolean {
    let left = 0;
    this.writes.forEach((w, i) => {
      if (!this.waiting[i]) return;
      const code = w.partition.replicationOutcome(w.requiredOffset);
      if (code === null) {
        left++;
        return;
      }
      this.codes[i] = code;
      this.waiting[i] = false;
    });
    return left === 0 && this.forceComplete();
  }

  protected onComplete(): void {
    this.respond(this.codes);
  }

  protected onExpiration(): void {
    // The partitions still waiting answer REQUEST_TIMED_OUT, set when the write started waiting.
  }
}
