import type { PartitionLog } from '../storage/partition-log.js';
import type { CoordinatorLog } from './coordinator-host.js';

/**
 * A PartitionLog seen as a coordinator's log. Appends are acks=all (a coordinator answers only
 * once its records are durable, per the log's flush policy) with origin 'coordinator'. Replay
 * reads up to the log end: on a single node every appended coordinator batch was acknowledged
 * or failed before the next one was written, so nothing beyond the high watermark is pending.
 */
export function coordinatorLogOf(log: PartitionLog, leaderEpoch: () => number = () => Math.max(0, log.latestEpoch)): CoordinatorLog {
  return {
    get logStartOffset() {
      return log.logStartOffset;
    },
    get logEndOffset() {
      return log.logEndOffset;
    },
    async append(batch) {
      const r = await log.appendAsLeader(batch, leaderEpoch(), { requiredAcks: -1, origin: 'coordinator' });
      return { errorCode: r.errorCode, baseOffset: r.baseOffset, lastOffset: r.lastOffset };
    },
    async readFrom(fetchOffset, maxBytes) {
      const r = await log.readToBuffer({ fetchOffset, maxOffset: log.logEndOffset, maxBytes, minOneMessage: true });
      if (r.errorCode !== 0) throw new Error(`reading ${log.dir} at ${fetchOffset} failed with error ${r.errorCode}`);
      return r.records;
    },
  };
}
