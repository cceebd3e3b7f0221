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
 * - Long poll: with fewer than MinBytes and no error, the request waits in the fetch purgatory
 *   (delayed-fetch.ts) for its partitions' logs to move, up to MaxWaitMs, never blocking the
 *   loop; a closed connection ends the wait. Partitions are read by fetch-read.ts.
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
import type { ApiHandler } from '../../server/api-handler.js';
import type { BrokerContext } from '../broker-context.js';
import type { CachedPartition } from '../fetch-session.js';
import { FetchManager, type PartitionResult, type SessionRequest } from '../fetch-manager.js';
import { readFetchPartitions, type FetchQuery, type FetchReads, type PartOut, type Wanted } from '../fetch-read.js';
import { awaitLongPoll, fetchPurgatory, type LongPoll } from '../delayed-fetch.js';
import { ReadBufferPool } from '../../storage/read-buffer-pool.js';
import { readSlicesPooled } from '../../storage/segment-read.js';
import type { TopicImage } from '../../controller/metadata-image.js';

const ZERO_UUID = '00000000-0000-0000-0000-000000000000';
const EMPTY = Buffer.alloc(0);

type TopicOut = NonNullable<FetchResponseInput['responses']>[number];

/**
 * Buffers the responses' records are read into, reused once the socket has sent them: 32 MiB
 * kept at most (a few default-sized responses of 8 partitions × max.partition.fetch.bytes).
 */
const POOL_RETAINED_BYTES = 32 * 1024 * 1024;

export function fetchHandler(ctx: BrokerContext, sessions: FetchManager): ApiHandler<FetchRequest, FetchResponseInput> {
  const pool = new ReadBufferPool(POOL_RETAINED_BYTES);
  const purgatory = fetchPurgatory();
  /** The pooled buffer each response's records are views of, until the socket has sent it. */
  const leases = new WeakMap<FetchResponseInput, Buffer>();
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

      const query: FetchQuery = { version: v, replicaId, readCommitted, maxBytes: () => (consumer ? ctx.quotas.fetchMaxBytes(rc, req.maxBytes) : req.maxBytes) };
      const read = (prev?: FetchReads): Promise<FetchReads> => readFetchPartitions(ctx, wanted, query, prev);
      // Kafka's ReplicaManager.fetchMessages answers at once when nothing is asked for, MinBytes is
      // met (MinBytes 0 included), or a partition has an error or a diverging epoch.
      // Once a session has sent the epoch it is no news, whatever the follower last asked with.
      const poll: LongPoll = {
        read,
        follower: replicaId >= 0,
        mustWait: (r) =>
          wanted.length > 0 &&
          !r.error &&
          r.bytes < req.minBytes &&
          !r.outcomes.some((o, i) => o.out.divergingEpoch !== undefined || o.mirrorEpoch > Math.max(wanted[i]!.p.mirrorLeaderEpoch, wanted[i]!.p.sentMirrorLeaderEpoch)),
      };
      let result = await read();
      const deadline = now + Math.max(0, req.maxWaitMs);
      if (poll.mustWait(result) && Date.now() < deadline && !rc.signal.aborted) {
        rc.waitingRemotely?.(); // from here the request is a delayed fetch, in the purgatory
        result = await awaitLongPoll(purgatory, result, poll, deadline - Date.now(), rc.signal);
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
