/**
 * A replicated partition led by this node (Kafka's Partition on the leader, with its Replica
 * objects): each follower's fetch offset (its log end) and last caught-up time, the ISR changes
 * they call for, the high watermark, and the acks=all produces waiting for it.
 *
 * - Follower fetch (Replica.updateFetchStateOrThrow): a fetch at or past the leader's log end
 *   makes the follower caught up now; one at or past the leader's log end of its previous fetch
 *   makes it caught up as of that fetch.
 * - High watermark (Partition.maybeIncrementLeaderHW): the smallest log end among the leader and
 *   the ISR's followers; a follower not heard from since this node became leader has none, so
 *   the high watermark waits for it. It never moves backwards.
 * - ISR expand (maybeExpandIsr): a follower outside the ISR whose log end reached the high
 *   watermark and the start of this leader epoch. ISR shrink (maybeShrinkIsr, every half
 *   `replica.lag.time.max.ms`): followers not caught up for longer than it. Both go to the
 *   controller as AlterPartition at the current leader and partition epochs; one change is in
 *   flight at a time, and a refused one (INVALID_UPDATE_VERSION, FENCED_LEADER_EPOCH) is asked
 *   again only once the image has moved past the partition epoch it was proposed at.
 *
 * Concurrency contract: event loop only. `part` is the image's live PartitionImage: the ISR and
 * epochs read here are always the latest applied.
 */
import { ErrorCode } from '../protocol/generated/errors.js';
import type { PartitionImage } from '../controller/metadata-image.js';
import type { PartitionLog } from '../storage/partition-log.js';
import type { ReplicationSeam } from './replication-seam.js';
import type { DelayedOperationPurgatory } from '../common/purgatory.js';
import { DelayedProduce, type ReplicatedPartition } from './delayed-produce.js';

interface FollowerState {
  logEndOffset: number;
  lastCaughtUpTimeMs: number;
  lastFetchLeaderLogEndOffset: number;
  lastFetchTimeMs: number;
}

interface LeaderOptions {
  readonly lagTimeMaxMs: number;
  readonly retryBackoffMs: number;
  readonly minInsyncReplicas: () => number;
  readonly now: () => number;
  readonly warn: (msg: string, fields: Record<string, unknown>) => void;
  /** The node's acks=all writes waiting for the ISR, watched under `topicId:partition`. */
  readonly produces: DelayedOperationPurgatory<string>;
}

export class PartitionLeader implements ReplicatedPartition {
  readonly followers = new Map<number, FollowerState>();
  /** What the partition's waiting produces are watched under in the purgatory. */
  private readonly key: string;
  /** The log end when this node became leader at `leaderEpoch`. */
  readonly leaderEpochStartOffset: number;
  readonly leaderEpoch: number;
  /** The partition epoch an ISR change was last proposed at; -1 when none is pending. */
  private proposedAt = -1;
  private readonly offAppend: () => void;
  /** Set once this node stopped leading the partition at this epoch: the code its waiting writes get. */
  private resignedWith: number | null = null;

  constructor(
    readonly topic: string,
    readonly topicId: string,
    public part: PartitionImage,
    readonly log: PartitionLog,
    private readonly view: ReplicationSeam,
    private readonly opts: LeaderOptions,
  ) {
    this.key = `${topicId}:${part.partition}`;
    this.leaderEpoch = part.leaderEpoch;
    this.leaderEpochStartOffset = log.logEndOffset;
    const now = opts.now();
    for (const id of part.replicas) {
      if (id === view.nodeId) continue;
      // Kafka's Replica.resetReplicaState: ISR members count as caught up at the election.
      this.followers.set(id, { logEndOffset: -1, lastCaughtUpTimeMs: part.isr.includes(id) ? now : 0, lastFetchLeaderLogEndOffset: -1, lastFetchTimeMs: 0 });
    }
    this.offAppend = log.onAppend(() => this.onLogChange());
    this.maybeIncrementHighWatermark();
  }

  /**
   * Waits for an appended write (last offset + 1 = `requiredOffset`) to reach the ISR; resolves
   * with the partition's error code (see DelayedProduce), REQUEST_TIMED_OUT after `timeoutMs`.
   */
  awaitReplication(requiredOffset: number, timeoutMs: number): Promise<number> {
    return new Promise((resolve) => {
      const op = new DelayedProduce(timeoutMs, [{ partition: this, requiredOffset }], (codes) => resolve(codes[0] ?? ErrorCode.REQUEST_TIMED_OUT));
      this.opts.produces.tryCompleteElseWatch(op, [this.key]);
    });
  }

  /** Kafka's Partition.checkEnoughReplicasReachOffset, and a resigned leader's code. */
  replicationOutcome(requiredOffset: number): number | null {
    if (this.resignedWith !== null) return this.resignedWith;
    if (this.log.highWatermark < requiredOffset) return null;
    return this.part.isr.length >= this.opts.minInsyncReplicas() ? ErrorCode.NONE : ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND;
  }

  /** A follower fetched at `fetchOffset`: its log end. Returns an error code for the fetch. */
  onFollowerFetch(replicaId: number, fetchOffset: number): number {
    let f = this.followers.get(replicaId);
    if (f === undefined) {
      if (!this.part.replicas.includes(replicaId)) return ErrorCode.NOT_LEADER_OR_FOLLOWER;
      f = { logEndOffset: -1, lastCaughtUpTimeMs: 0, lastFetchLeaderLogEndOffset: -1, lastFetchTimeMs: 0 };
      this.followers.set(replicaId, f);
    }
    const now = this.opts.now();
    const leaderEnd = this.log.logEndOffset;
    if (fetchOffset >= leaderEnd) f.lastCaughtUpTimeMs = Math.max(f.lastCaughtUpTimeMs, now);
    else if (fetchOffset >= f.lastFetchLeaderLogEndOffset) f.lastCaughtUpTimeMs = Math.max(f.lastCaughtUpTimeMs, f.lastFetchTimeMs);
    f.logEndOffset = fetchOffset;
    f.lastFetchLeaderLogEndOffset = leaderEnd;
    f.lastFetchTimeMs = now;
    this.maybeExpandIsr(replicaId, f);
    this.maybeIncrementHighWatermark();
    return ErrorCode.NONE;
  }

  /** The ISR or the image changed: the high watermark and the waiting produces are checked again. */
  onImageChange(): void {
    for (const id of this.part.replicas) {
      if (id !== this.view.nodeId && !this.followers.has(id)) this.followers.set(id, { logEndOffset: -1, lastCaughtUpTimeMs: 0, lastFetchLeaderLogEndOffset: -1, lastFetchTimeMs: 0 });
    }
    this.maybeIncrementHighWatermark();
    this.opts.produces.checkAndComplete(this.key);
  }

  /** Removes from the ISR the followers that have not caught up within replica.lag.time.max.ms. */
  maybeShrinkIsr(): void {
    const now = this.opts.now();
    const out = this.part.isr.filter((id) => {
      if (id === this.view.nodeId) return false;
      const f = this.followers.get(id);
      return f === undefined || now - f.lastCaughtUpTimeMs > this.opts.lagTimeMaxMs;
    });
    if (out.length === 0) return;
    this.propose(
      this.part.isr.filter((id) => !out.includes(id)),
      'shrink',
    );
  }

  private maybeExpandIsr(replicaId: number, f: FollowerState): void {
    if (this.part.isr.includes(replicaId)) return;
    if (f.logEndOffset < this.log.highWatermark || f.logEndOffset < this.leaderEpochStartOffset) return;
    this.propose([...this.part.isr, replicaId], 'expand');
  }

  private propose(isr: number[], why: 'shrink' | 'expand'): void {
    const p = this.part;
    if (this.proposedAt === p.partitionEpoch) return;
    this.proposedAt = p.partitionEpoch;
    const atEpoch = p.partitionEpoch;
    this.view
      .alterPartition({ topicId: this.topicId, partition: p.partition, leaderId: this.view.nodeId, leaderEpoch: this.leaderEpoch, partitionEpoch: atEpoch, newIsr: isr })
      .then(
        (r) => {
          if (r.errorCode === ErrorCode.NONE || r.errorCode === ErrorCode.INVALID_UPDATE_VERSION || r.errorCode === ErrorCode.FENCED_LEADER_EPOCH) {
            // Asked again once the image has the change (or the newer partition epoch that refused it).
            if (r.errorCode !== ErrorCode.NONE) this.opts.warn('ISR change refused; waiting for metadata', { partition: `${this.topic}-${p.partition}`, why, errorCode: r.errorCode });
            return;
          }
          this.retryLater(atEpoch, why, r.errorCode);
        },
        (err: unknown) => this.retryLater(atEpoch, why, String(err)),
      );
  }

  private retryLater(atEpoch: number, why: string, error: unknown): void {
    this.opts.warn('ISR change failed; retrying', { partition: `${this.topic}-${this.part.partition}`, why, error });
    setTimeout(() => {
      if (this.proposedAt === atEpoch) this.proposedAt = -1;
    }, this.opts.retryBackoffMs).unref();
  }

  private onLogChange(): void {
    this.maybeIncrementHighWatermark();
    this.opts.produces.checkAndComplete(this.key);
  }

  private maybeIncrementHighWatermark(): void {
    let hw = this.log.logEndOffset;
    for (const id of this.part.isr) {
      if (id === this.view.nodeId) continue;
      const f = this.followers.get(id);
      hw = Math.min(hw, f === undefined ? -1 : f.logEndOffset);
    }
    if (hw > this.log.highWatermark) this.log.updateHighWatermark(hw);
  }

  /** This node no longer leads the partition: its waiting produces are never acknowledged. */
  resign(errorCode: number = ErrorCode.NOT_LEADER_OR_FOLLOWER): void {
    if (this.resignedWith !== null) return;
    this.resignedWith = errorCode;
    this.offAppend();
    this.opts.produces.checkAndComplete(this.key);
  }
}
