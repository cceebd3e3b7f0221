import { ErrorCode } from '../protocol/generated/errors.js';
import type { PartitionLog } from '../storage/partition-log.js';
import type { CoordinatorLog } from './coordinator-host.js';

/** The leader of a replicated coordinator partition: its epoch, and the wait until the ISR holds an append. */
interface CoordinatorReplicaLeader {
  readonly leaderEpoch: number;
  /** 0 once the high watermark reached `endOffset`; a Kafka error code when it did not in time. */
  awaitReplication(endOffset: number, timeoutMs: number): Promise<number>;
}

interface CoordinatorLogOptions {
  /**
   * Who takes the append: 'not-leader' refuses it (NOT_LEADER_OR_FOLLOWER), null appends to a log
   * with no other replica, a leader appends at its epoch and then waits for its ISR. Absent: the
   * log has no other replica.
   */
  readonly leader?: () => CoordinatorReplicaLeader | null | 'not-leader';
  /** The leader epoch an append takes when no replica leader gives one (default: the log's latest, at least 0). */
  readonly epoch?: () => number;
  /** How long an append waits for the ISR (offsets.commit.timeout.ms, Kafka's default 5 s). */
  readonly commitTimeoutMs?: () => number;
}

/**
 * A PartitionLog seen as a coordinator's log, for the node and for tests alike. Appends are
 * acks=all with origin 'coordinator': on one node the answer comes once the records are durable
 * per the log's flush policy; on a replicated partition only once the ISR holds them (the high
 * watermark passed them), as Kafka's coordinators append through ReplicaManager with acks=-1.
 * Replay reads up to the log end, and a read error fails the load rather than ending it early
 * (a shard loaded from part of its log would answer from state the log does not hold).
 */
export function coordinatorLogOf(log: PartitionLog, opts: CoordinatorLogOptions = {}): CoordinatorLog {
  const epochOf = opts.epoch ?? (() => Math.max(0, log.latestEpoch));
  return {
    get logStartOffset() {
      return log.logStartOffset;
    },
    get logEndOffset() {
      return log.logEndOffset;
    },
    async append(batch) {
      const leader = opts.leader?.() ?? null;
      if (leader === 'not-leader') return { errorCode: ErrorCode.NOT_LEADER_OR_FOLLOWER, baseOffset: -1, lastOffset: -1 };
      const r = await log.appendAsLeader(batch, leader?.leaderEpoch ?? epochOf(), { requiredAcks: -1, origin: 'coordinator' });
      if (r.errorCode !== 0 || leader === null) return { errorCode: r.errorCode, baseOffset: r.baseOffset, lastOffset: r.lastOffset };
      const code = await leader.awaitReplication(r.lastOffset + 1, opts.commitTimeoutMs?.() ?? 5000);
      return { errorCode: code, baseOffset: r.baseOffset, lastOffset: r.lastOffset };
    },
    async readFrom(fetchOffset, maxBytes) {
      const r = await log.readToBuffer({ fetchOffset, maxOffset: log.logEndOffset, maxBytes, minOneMessage: true });
      if (r.errorCode !== 0) throw new Error(`reading ${log.dir} at ${fetchOffset} failed with error ${r.errorCode}`);
      return r.records;
    },
  };
}
