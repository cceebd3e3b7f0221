/**
 * Reading a Fetch request's partitions (Kafka's ReplicaManager.readFromLocalLog): per partition
 * the leader check, the follower's fetch state, the diverging epoch, the leader throttle, and the
 * file range to send, up to the high watermark, the last stable offset or (followers) the log end.
 * No record data is read here: a range is read into the response once the answer is known.
 *
 * Concurrency contract: event loop only. A read gives the offsets it was made at, so a long poll
 * can tell whether a log moved since (`movedSince`) and read again only the partitions whose
 * range can have changed.
 */
import { ErrorCode } from '../protocol/generated/errors.js';
import type { FetchResponseInput } from '../protocol/generated/messages/fetch-response.js';
import type { TopicImage } from '../controller/metadata-image.js';
import type { FileSlice } from '../storage/file-slice.js';
import type { PartitionLog } from '../storage/partition-log.js';
import type { BrokerContext } from './broker-context.js';
import type { CachedPartition } from './fetch-session.js';

const EMPTY = Buffer.alloc(0);

type TopicOut = NonNullable<FetchResponseInput['responses']>[number];
export type PartOut = NonNullable<TopicOut['partitions']>[number];

/** A partition to read: its request parameters (kept by the session, if any) and its topic now. */
export interface Wanted {
  readonly p: CachedPartition;
  readonly topic: TopicImage | undefined;
}

/** What a request asks of every partition it reads. */
export interface FetchQuery {
  readonly version: number;
  /** -1 for a consumer, the follower's node id for a follower. */
  readonly replicaId: number;
  readonly readCommitted: boolean;
  /** The response's byte budget now (the consumer's quota can lower it between reads). */
  readonly maxBytes: () => number;
}

/** MirrorTopicStateChangeRecord.DesiredState for STOPPED (the MirrorPartitionState byte, D1). */
const MIRROR_DESIRED_STOPPED = 6;

interface ReadOutcome {
  readonly out: PartOut;
  /** The file range to send (read into the response once the wait is over), or null. */
  readonly slice: FileSlice | null;
  readonly bytes: number;
  readonly error: boolean;
  readonly log: PartitionLog | undefined;
  readonly hw: number;
  readonly lso: number;
  readonly logStart: number;
  readonly logEnd: number;
  /** The latest epoch of the log when MirrorLeaderEpoch applies to this partition, else -1. */
  readonly mirrorEpoch: number;
  /** What the range was read with: the same inputs on an unchanged log give the same range. */
  readonly key: string;
  /** A follower read of a partition under leader.replication.throttled.replicas: its bytes count against the leader quota. */
  readonly throttled?: boolean;
}

export interface FetchReads {
  readonly outcomes: readonly ReadOutcome[];
  readonly bytes: number;
  readonly error: boolean;
}

/**
 * Reads every wanted partition in order, each within what is left of the response's budget; the
 * first partition with data may exceed it (KIP-74). With `prev`, the reads of an earlier pass, a
 * partition whose inputs have not changed is not read again.
 */
export async function readFetchPartitions(ctx: BrokerContext, wanted: readonly Wanted[], q: FetchQuery, prev?: FetchReads): Promise<FetchReads> {
  let budget = q.maxBytes();
  let bytes = 0;
  let error = false;
  const outcomes: ReadOutcome[] = [];
  for (const [i, w] of wanted.entries()) {
    const o = await readPartition(ctx, w, q, Math.max(0, Math.min(w.p.maxBytes, budget)), bytes === 0, prev?.outcomes[i]);
    outcomes.push(o);
    bytes += o.bytes;
    budget -= o.bytes;
    if (o.error) error = true;
  }
  return { outcomes, bytes, error };
}

/**
 * True when a log read by `reads` moved in a way that can change its answer (Kafka's
 * DelayedFetch.tryComplete compares offsets; it reads no data): its high watermark, last stable
 * offset, log start, the latest epoch a mirror follower is told of, or, for a follower, its end.
 */
export function movedSince(reads: FetchReads, follower: boolean): boolean {
  return reads.outcomes.some((o) => {
    const log = o.log;
    if (log === undefined) return false;
    return (
      log.highWatermark !== o.hw ||
      log.lastStableOffset !== o.lso ||
      log.logStartOffset !== o.logStart ||
      (follower && log.logEndOffset !== o.logEnd) ||
      (o.mirrorEpoch >= 0 && Math.max(0, log.latestEpoch) !== o.mirrorEpoch)
    );
  });
}

async function readPartition(ctx: BrokerContext, w: Wanted, q: FetchQuery, maxBytes: number, minOneMessage: boolean, prev: ReadOutcome | undefined): Promise<ReadOutcome> {
  const { version: v, replicaId, readCommitted } = q;
  const fail = (errorCode: number, log?: PartitionLog): ReadOutcome => {
    const hw = log?.highWatermark ?? -1;
    const lso = log?.lastStableOffset ?? -1;
    const logStart = log?.logStartOffset ?? -1;
    const logEnd = log?.logEndOffset ?? -1;
    return {
      out: {
        partitionIndex: w.p.partition,
        errorCode,
        highWatermark: BigInt(hw),
        lastStableOffset: BigInt(lso),
        logStartOffset: BigInt(logStart),
        abortedTransactions: null,
        records: EMPTY,
      },
      slice: null,
      bytes: 0,
      error: true,
      log,
      hw,
      lso,
      logStart,
      logEnd,
      mirrorEpoch: -1,
      key: '',
    };
  };
  const t = w.topic;
  const p = t?.partitions[w.p.partition];
  // An id that never named a topic here is UNKNOWN_TOPIC_ID; a session partition whose topic has
  // gone since keeps its name, and Kafka's lookup by that name answers UNKNOWN_TOPIC_OR_PARTITION.
  if (!t || !p) return fail(v >= 13 && !t && w.p.topicName === '' ? ErrorCode.UNKNOWN_TOPIC_ID : ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
  // Only the unfenced leader serves fetches, consumers' and followers' alike (no KIP-392 follower
  // reads). A negative current leader epoch is no epoch at all in a fetch (Kafka 4.1.2 answers -2 as -1).
  const epochGiven = w.p.currentLeaderEpoch >= 0;
  const found = await ctx.replicas.leaderLog(t, w.p.partition, { currentLeaderEpoch: epochGiven ? w.p.currentLeaderEpoch : null });
  if ('errorCode' in found) return fail(found.errorCode, found.log);
  const log = found.log;
  const replication = ctx.replicas.replication;
  if (replicaId >= 0 && (replicaId === ctx.nodeId || !p.replicas.includes(replicaId))) {
    // Kafka's Partition.followerReplicaOrThrow: a replica id the partition does not have as a
    // follower (the leader's own included) may be a replica this leader does not know of yet, so
    // it is UNKNOWN_LEADER_EPOCH when the request names an epoch (the follower retries), else
    // NOT_LEADER_OR_FOLLOWER; as every read error in ReplicaManager, with no offsets.
    return fail(epochGiven ? ErrorCode.UNKNOWN_LEADER_EPOCH : ErrorCode.NOT_LEADER_OR_FOLLOWER);
  }
  if (replicaId >= 0) {
    // A follower's fetch offset is its log end (Kafka's Partition.updateFollowerFetchState).
    const leader = replication?.leaderOf(t.topicId, w.p.partition);
    if (leader === undefined) return fail(ErrorCode.NOT_LEADER_OR_FOLLOWER, log);
    const code = leader.onFollowerFetch(replicaId, w.p.fetchOffset);
    if (code !== ErrorCode.NONE) return fail(code, log);
  }
  const hw = log.highWatermark;
  const lso = log.lastStableOffset;
  const logStart = log.logStartOffset;
  const logEnd = log.logEndOffset;
  const mirrorEpoch =
    v >= 19 && w.p.mirrorLeaderEpoch >= 0 && t.mirror !== null && t.mirror.desiredState !== MIRROR_DESIRED_STOPPED ? Math.max(0, log.latestEpoch) : -1;
  const base = {
    partitionIndex: w.p.partition,
    errorCode: ErrorCode.NONE,
    highWatermark: BigInt(hw),
    lastStableOffset: BigInt(lso),
    logStartOffset: BigInt(logStart),
    ...(mirrorEpoch >= 0 ? { mirrorLeaderEpoch: mirrorEpoch } : {}),
  };
  // What every answer below carries of the log it read, for the next wake to compare.
  const offsets = { log, hw, lso, logStart, logEnd, mirrorEpoch };
  if (v >= 12 && w.p.lastFetchedEpoch >= 0) {
    const eo = log.endOffsetForEpoch(w.p.lastFetchedEpoch);
    // (-1, -1), no epoch at or below the follower's, cannot be told from "no divergence" on the
    // wire: the read below answers it, OFFSET_OUT_OF_RANGE past a log cut below the follower's
    // end (a mirror's LOG_TRUNCATION, KIP-1279 §9.3), so the follower truncates to our high watermark.
    if (eo.endOffset >= 0 && (eo.epoch < w.p.lastFetchedEpoch || eo.endOffset < w.p.fetchOffset)) {
      return { out: { ...base, divergingEpoch: { epoch: eo.epoch, endOffset: BigInt(eo.endOffset) }, abortedTransactions: null, records: EMPTY }, slice: null, bytes: 0, error: false, ...offsets, key: '' };
    }
  }
  // Kafka's ReplicaManager.readFromLocalLog: a throttled follower outside the ISR gets no records
  // while leader.replication.throttled.rate is exceeded (src/replication/replication-quotas.ts).
  const throttle = replicaId >= 0 ? (replication?.leaderThrottle(t.name, p, replicaId) ?? 'free') : 'free';
  if (throttle === 'held') {
    return { out: { ...base, abortedTransactions: null, records: EMPTY }, slice: null, bytes: 0, error: false, ...offsets, key: '', throttled: true };
  }
  // A long poll woken by another partition's append does not read this one again when nothing
  // it reads from moved (Kafka's DelayedFetch.tryComplete compares offsets, it reads no data).
  const key = `${w.p.fetchOffset}:${maxBytes}:${minOneMessage}:${hw}:${lso}:${logStart}:${mirrorEpoch}:${replicaId >= 0 ? logEnd : -1}`;
  if (prev !== undefined && prev.log === log && prev.key === key) return prev;
  const r = await log.read({
    fetchOffset: w.p.fetchOffset,
    // Followers read up to the log end: their copies are what moves the high watermark.
    maxOffset: replicaId >= 0 ? logEnd : readCommitted ? lso : hw,
    maxBytes,
    minOneMessage,
    readCommitted,
  });
  if (r.errorCode !== 0) return fail(r.errorCode, log);
  const slice = r.records[0] ?? null;
  return {
    out: {
      ...base,
      abortedTransactions: readCommitted ? r.abortedTransactions.map((a) => ({ producerId: BigInt(a.producerId), firstOffset: BigInt(a.firstOffset) })) : null,
      records: EMPTY,
    },
    slice,
    bytes: slice?.length ?? 0,
    error: false,
    ...offsets,
    key,
    throttled: throttle === 'counted',
  };
}
