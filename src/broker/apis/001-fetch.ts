/**
 * Fetch (key 1), v4-19, consumer form (replica id -1).
 *
 * Behavior:
 * - Per partition: unknown topic/partition → UNKNOWN_TOPIC_OR_PARTITION (v13+ by id:
 *   UNKNOWN_TOPIC_ID); CurrentLeaderEpoch (a negative one is none) older/newer than the
 *   partition's → FENCED_LEADER_EPOCH / UNKNOWN_LEADER_EPOCH; LastFetchedEpoch (v12+) that diverges from the log → DivergingEpoch
 *   (epoch, end offset) and no records; fetch offset outside [log start, log end] →
 *   OFFSET_OUT_OF_RANGE.
 * - Replicated partitions: only the unfenced leader answers (else NOT_LEADER_OR_FOLLOWER). A
 *   follower fetch (replica id >= 0; v15+ in ReplicaState) records the follower's log end for the
 *   ISR and the high watermark (src/replication) and reads up to the log end. A replica id that is
 *   not a follower of the partition (the leader's own included) → UNKNOWN_LEADER_EPOCH when the
 *   request names a current leader epoch, else NOT_LEADER_OR_FOLLOWER, with no offsets.
 * - Reads up to the high watermark (read_uncommitted) or the last stable offset with the aborted
 *   transactions in range (read_committed). Response MaxBytes and PartitionMaxBytes are honoured,
 *   but the first batch of the response is returned whole even above them (KIP-74).
 * - Long poll: with fewer than MinBytes and no error, the request waits for appends to any of
 *   its partitions (woken by the log's onAppend), up to MaxWaitMs, never blocking the loop; a
 *   closed connection ends the wait.
 * - Sessions (KIP-227, v7+): fetch-manager.ts decides the session of each request (open, continue,
 *   close, close-and-new, or a session error) and which partitions an incremental response carries.
 * - Records are read once, when the answer is known (a long poll's wakes compare offsets and
 *   re-read only partitions whose range can have changed), into one pooled buffer per response
 *   (storage/read-buffer-pool.ts), and handed to the Writer by reference: the socket takes them
 *   with no further copy, and the buffer is reused once the socket has taken the whole response.
 *
 * Version notes: v4 isolation level, v5 log start offset, v7 sessions, v11 rack (no preferred
 * read replica: -1), v12 flexible + DivergingEpoch, v13 topic ids, v19 MirrorLeaderEpoch
 * (KIP-1279 §9.6).
 *
 * MirrorLeaderEpoch: when a partition of a mirror topic whose desired state is not STOPPED is
 * fetched with MirrorLeaderEpoch set (>= 0), the response carries the latest epoch in this log,
 * whether or not records come with it, so a mirror follower can validate batches against the
 * source epochs it copies rather than the destination leader epoch. A requested value below the
 * log's latest epoch ends the long poll at once (the news is the epoch). Every other partition
 * leaves the field at its default (-1, not written).
 */
import { ErrorCode } from '../../protocol/generated/errors.js';
import { decodeFetchRequest, type FetchRequest } from '../../protocol/generated/messages/fetch-request.js';
import { encodeFetchResponse, type FetchResponseInput } from '../../protocol/generated/messages/fetch-response.js';
import type { PartitionLog } from '../../storage/partition-log.js';
import type { ApiHandler } from '../../server/api-handler.js';
import type { BrokerContext } from '../broker-context.js';
import type { CachedPartition } from '../fetch-session.js';
import { FetchManager, type PartitionResult, type SessionRequest } from '../fetch-manager.js';
import { AppendWatch } from '../fetch-append-watch.js';
import type { FileSlice } from '../../storage/file-slice.js';
import { ReadBufferPool } from '../../storage/read-buffer-pool.js';
import { readSlicesPooled } from '../../storage/segment-read.js';
import type { TopicImage } from '../../controller/metadata-image.js';

const ZERO_UUID = '00000000-0000-0000-0000-000000000000';
const EMPTY = Buffer.alloc(0);

type TopicOut = NonNullable<FetchResponseInput['responses']>[number];
type PartOut = NonNullable<TopicOut['partitions']>[number];

/** A partition to read: its request parameters (kept by the session, if any) and its topic now. */
interface Wanted {
  readonly p: CachedPartition;
  readonly topic: TopicImage | undefined;
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
  /** The latest epoch of the log when MirrorLeaderEpoch applies to this partition, else -1. */
  readonly mirrorEpoch: number;
  /** What the range was read with: the same inputs on an unchanged log give the same range. */
  readonly key: string;
  /** A follower read of a partition under leader.replication.throttled.replicas: its bytes count against the leader quota. */
  readonly throttled?: boolean;
}

/**
 * Buffers the responses' records are read into, reused once the socket has sent them: 32 MiB
 * kept at most (a few default-sized responses of 8 partitions × max.partition.fetch.bytes).
 */
const POOL_RETAINED_BYTES = 32 * 1024 * 1024;

export function fetchHandler(ctx: BrokerContext, sessions: FetchManager): ApiHandler<FetchRequest, FetchResponseInput> {
  const pool = new ReadBufferPool(POOL_RETAINED_BYTES);
  /** The pooled buffer each response's records are views of, until the socket has sent it. */
  const leases = new WeakMap<FetchResponseInput, Buffer>();
  const readPartition = async (w: Wanted, maxBytes: number, minOneMessage: boolean, readCommitted: boolean, v: number, replicaId: number, prev: ReadOutcome | undefined): Promise<ReadOutcome> => {
    const fail = (errorCode: number, log?: PartitionLog): ReadOutcome => {
      const hw = log?.highWatermark ?? -1;
      const lso = log?.lastStableOffset ?? -1;
      const logStart = log?.logStartOffset ?? -1;
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
    if (v >= 12 && w.p.lastFetchedEpoch >= 0) {
      const eo = log.endOffsetForEpoch(w.p.lastFetchedEpoch);
      // (-1, -1), no epoch at or below the follower's, cannot be told from "no divergence" on the
      // wire: the read below answers it, OFFSET_OUT_OF_RANGE past a log cut below the follower's
      // end (a mirror's LOG_TRUNCATION, KIP-1279 §9.3), so the follower truncates to our high watermark.
      if (eo.endOffset >= 0 && (eo.epoch < w.p.lastFetchedEpoch || eo.endOffset < w.p.fetchOffset)) {
        return {
          out: { ...base, divergingEpoch: { epoch: eo.epoch, endOffset: BigInt(eo.endOffset) }, abortedTransactions: null, records: EMPTY },
          slice: null,
          bytes: 0,
          error: false,
          log,
          hw,
          lso,
          logStart,
          mirrorEpoch,
          key: '',
        };
      }
    }
    // Kafka's ReplicaManager.readFromLocalLog: a throttled follower outside the ISR gets no records
    // while leader.replication.throttled.rate is exceeded (src/replication/replication-quotas.ts).
    const throttle = replicaId >= 0 ? (replication?.leaderThrottle(t.name, p, replicaId) ?? 'free') : 'free';
    if (throttle === 'held') {
      return { out: { ...base, abortedTransactions: null, records: EMPTY }, slice: null, bytes: 0, error: false, log, hw, lso, logStart, mirrorEpoch, key: '', throttled: true };
    }
    // A long poll woken by another partition's append does not read this one again when nothing
    // it reads from moved (Kafka's DelayedFetch.tryComplete compares offsets, it reads no data).
    const key = `${w.p.fetchOffset}:${maxBytes}:${minOneMessage}:${hw}:${lso}:${logStart}:${mirrorEpoch}:${replicaId >= 0 ? log.logEndOffset : -1}`;
    if (prev !== undefined && prev.log === log && prev.key === key) return prev;
    const r = await log.read({
      fetchOffset: w.p.fetchOffset,
      // Followers read up to the log end: their copies are what moves the high watermark.
      maxOffset: replicaId >= 0 ? log.logEndOffset : readCommitted ? lso : hw,
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
      log,
      hw,
      lso,
      logStart,
      mirrorEpoch,
      key,
      throttled: throttle === 'counted',
    };
  };

  return {
    apiKey: 1,
    minVersion: 4,
    maxVersion: 19,
    decode: decodeFetchRequest,
    encode: encodeFetchResponse,
    async handle(rc, req) {
      const v = rc.apiVersion;
      const byId = v >= 13;
      const replicaId = v >= 15 ? req.replicaState.replicaId : req.replicaId;
      const readCommitted = req.isolationLevel === 1 && replicaId < 0;
      const now = Date.now();
      const resolveTopic = (name: string, id: string): TopicImage | undefined => (byId ? ctx.image.topicsById.get(id) : ctx.image.topic(name));

      const requested: CachedPartition[] = [];
      for (const ft of req.topics) {
        const topic = resolveTopic(ft.topic, ft.topicId);
        for (const fp of ft.partitions) {
          requested.push({
            topicId: byId ? ft.topicId : (topic?.topicId ?? ZERO_UUID),
            topicName: byId ? (topic?.name ?? '') : ft.topic,
            partition: fp.partition,
            fetchOffset: Number(fp.fetchOffset),
            maxBytes: fp.partitionMaxBytes,
            currentLeaderEpoch: fp.currentLeaderEpoch,
            lastFetchedEpoch: fp.lastFetchedEpoch,
            highWatermark: -1,
            logStartOffset: -1,
            mirrorLeaderEpoch: v >= 19 ? fp.mirrorLeaderEpoch : -1,
            sentMirrorLeaderEpoch: -1,
          });
        }
      }
      const forgotten: string[] = [];
      for (const f of req.forgottenTopicsData) {
        const topicName = byId ? (ctx.image.topicsById.get(f.topicId)?.name ?? '') : f.topic;
        for (const partition of f.partitions) forgotten.push(FetchManager.key(byId, { topicId: f.topicId, topicName, partition }));
      }
      const sessionRequest: SessionRequest = {
        version: v,
        sessionId: req.sessionId,
        epoch: req.sessionEpoch,
        isFollower: replicaId >= 0,
        partitions: requested,
        forgotten,
        clientId: rc.clientId,
        client: rc.clientAddress,
      };
      const consumer = !sessionRequest.isFollower;
      const fc = sessions.newContext(sessionRequest);
      if (fc.kind === 'error') return { throttleTimeMs: 0, errorCode: fc.errorCode, sessionId: 0, responses: [] };
      // Partitions kept by a session resolve their topic again: it may have been created or
      // deleted since the request that named them.
      const wanted: Wanted[] = fc.partitions.map((p) => {
        const topic = byId ? ctx.image.topicsById.get(p.topicId) : ctx.image.topic(p.topicName);
        if (topic !== undefined) p.topicName = topic.name;
        return { p, topic };
      });

      const readAll = async (prev?: readonly ReadOutcome[]): Promise<{ outcomes: ReadOutcome[]; bytes: number; error: boolean }> => {
        let budget = consumer ? ctx.quotas.fetchMaxBytes(rc, req.maxBytes) : req.maxBytes;
        let bytes = 0;
        let error = false;
        const outcomes: ReadOutcome[] = [];
        for (const [i, w] of wanted.entries()) {
          const o = await readPartition(w, Math.max(0, Math.min(w.p.maxBytes, budget)), bytes === 0, readCommitted, v, replicaId, prev?.[i]);
          outcomes.push(o);
          bytes += o.bytes;
          budget -= o.bytes;
          if (o.error) error = true;
        }
        return { outcomes, bytes, error };
      };

      let result = await readAll();
      const deadline = now + Math.max(0, req.maxWaitMs);
      // Kafka's ReplicaManager.fetchMessages answers at once when nothing is asked for, MinBytes is
      // met (MinBytes 0 included), or a partition has an error or a diverging epoch.
      // Once a session has sent the epoch it is no news, whatever the follower last asked with.
      const mirrorNews = (o: ReadOutcome, w: Wanted): boolean => o.mirrorEpoch > Math.max(w.p.mirrorLeaderEpoch, w.p.sentMirrorLeaderEpoch);
      const mustWait = (): boolean =>
        wanted.length > 0 &&
        !result.error &&
        result.bytes < req.minBytes &&
        !result.outcomes.some((o, i) => o.out.divergingEpoch !== undefined || mirrorNews(o, wanted[i]!));
      if (mustWait()) {
        rc.waitingRemotely?.(); // from here the request is a delayed fetch (Kafka's purgatory)
        const watch = new AppendWatch();
        try {
          while (mustWait() && Date.now() < deadline && !rc.signal.aborted) {
            watch.watch(result.outcomes.map((o) => o.log));
            // A log that moved before it was watched (during the first read) is read again at once.
            const moved = result.outcomes.some(
              (o, i) =>
                o.log !== undefined &&
                (o.log.highWatermark !== o.hw || o.log.lastStableOffset !== o.lso || (replicaId >= 0 && o.bytes === 0 && o.log.logEndOffset > wanted[i]!.p.fetchOffset)),
            );
            if (!moved) await watch.next(deadline - Date.now(), rc.signal);
            if (rc.signal.aborted) break;
            result = await readAll(result.outcomes);
          }
        } finally {
          watch.close();
        }
      }

      // The data is read once, when the answer is known, into one pooled buffer for the response.
      const { records, buffer } = await readSlicesPooled(
        result.outcomes.map((o) => o.slice),
        pool,
      );
      let sentBytes = 0;
      result.outcomes.forEach((o, i) => {
        o.out.records = records[i] ?? EMPTY;
        sentBytes += o.out.records.length;
      });
      const results: PartitionResult[] = result.outcomes.map((o) => ({
        errorCode: o.out.errorCode ?? ErrorCode.NONE,
        recordBytes: o.out.records?.length ?? 0,
        diverging: o.out.divergingEpoch !== undefined,
        highWatermark: o.hw,
        logStartOffset: o.logStart,
        mirrorEpoch: o.mirrorEpoch,
      }));
      let sessionId = 0;
      let selected: readonly number[] | null = null;
      if (fc.kind === 'full') {
        sessionId = sessions.openSession(fc, results);
      } else if (fc.kind === 'incremental') {
        sessionId = fc.session.id;
        const picked = sessions.selectIncremental(fc, results, sessionRequest);
        if (!Array.isArray(picked)) {
          if (buffer !== null) pool.release(buffer);
          return { throttleTimeMs: 0, errorCode: picked.errorCode, sessionId, responses: [] };
        }
        selected = picked;
      }

      const responses: TopicOut[] = [];
      let current: TopicOut | null = null;
      let currentKey = '';
      for (const i of selected ?? result.outcomes.keys()) {
        const w = wanted[i]!.p;
        const tk = byId ? w.topicId : w.topicName;
        if (!current || currentKey !== tk) {
          current = { ...(byId ? { topicId: w.topicId } : { topic: w.topicName }), partitions: [] };
          currentKey = tk;
          responses.push(current);
        }
        (current.partitions as PartOut[]).push(result.outcomes[i]!.out);
      }
      // Kafka's KafkaApis.sizeOfThrottledPartitions: what throttled partitions were sent counts against the leader quota.
      if (!consumer) ctx.replicas.replication?.quotas.leader.record(result.outcomes.reduce((n, o) => (o.throttled === true ? n + (o.out.records?.length ?? 0) : n), 0));
      // consumer_byte_rate (src/quota) counts what a consumer is sent; followers are not client-quota'd.
      const throttleTimeMs = consumer ? ctx.quotas.throttleFetch(rc, sentBytes) : 0;
      const response: FetchResponseInput = {
        throttleTimeMs,
        errorCode: ErrorCode.NONE,
        ...(v >= 7 ? { sessionId } : {}),
        responses,
      };
      if (buffer !== null) leases.set(response, buffer);
      return response;
    },
    release(res) {
      const buffer = leases.get(res);
      if (buffer === undefined) return;
      leases.delete(res);
      pool.release(buffer);
    },
  };
}
