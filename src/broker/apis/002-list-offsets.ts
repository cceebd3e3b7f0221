/**
 * ListOffsets (key 2), v1-11.
 *
 * Behavior: Timestamp -2 earliest (log start), -1 latest (high watermark, or the last stable
 * offset for read_committed), -3 the record with the largest timestamp (v7+), -4 earliest local
 * (= log start; no tiered storage), -5 latest tiered and -6 earliest pending upload (KIP-1023;
 * both none without tiered storage: -1, as UnifiedLog.fetchOffsetByTimestamp answers when
 * remote storage is off); for -3 the exact record is
 * found inside the batch with the largest timestamp; otherwise the first offset whose
 * timestamp is ≥ the target, below the fetchable end, else (-1, -1). CurrentLeaderEpoch older or
 * newer than the partition's → FENCED_LEADER_EPOCH / UNKNOWN_LEADER_EPOCH. A partition listed
 * twice → INVALID_REQUEST for each. A negative timestamp the request's version does not know
 * (-3 before v7, -4 before v8, -5 before v9, -6 before v11, any other) → UNSUPPORTED_VERSION,
 * checked before the partition is looked up, as Kafka's ReplicaManager.fetchOffset does.
 * The answer is grouped by topic name, as Kafka's (a map by partition): a topic named in two
 * entries is answered once with all its partitions, a partition named twice once, and a topic
 * entry with no partitions not at all.
 *
 * Version notes: v2 isolation level, v4 leader epochs, v7 max-timestamp, v8 earliest-local,
 * v9 latest-tiered, v10 timeout (ignored: answers are local), v11 earliest-pending-upload.
 */
import { ErrorCode } from '../../protocol/generated/errors.js';
import { decodeListOffsetsRequest, type ListOffsetsRequest } from '../../protocol/generated/messages/list-offsets-request.js';
import { encodeListOffsetsResponse, type ListOffsetsResponseInput } from '../../protocol/generated/messages/list-offsets-response.js';
import { ATTR, iterateBatches } from '../../protocol/record-batch.js';
import { decodeRecords } from '../../protocol/records.js';
import type { PartitionLog } from '../../storage/partition-log.js';
import type { ApiHandler } from '../../server/api-handler.js';
import type { BrokerContext } from '../broker-context.js';

type TopicOut = NonNullable<ListOffsetsResponseInput['topics']>[number];

/**
 * The log indexes the max timestamp per batch; Kafka (since KAFKA-16310) answers the offset of
 * the first record carrying it, so the batch is read and its records walked (one batch only).
 */
async function exactMaxTimestampOffset(log: PartitionLog, batchOffset: number, maxTimestamp: number): Promise<number> {
  const r = await log.readToBuffer({ fetchOffset: batchOffset, maxOffset: log.logEndOffset, maxBytes: 1, minOneMessage: true });
  if (r.errorCode !== 0) return batchOffset;
  for (const batch of iterateBatches(r.records)) {
    if (batch.lastOffset < batchOffset) continue;
    if (batch.baseOffset > batchOffset) break;
    if ((batch.attributes & ATTR.TIMESTAMP_LOG_APPEND) !== 0) return batch.baseOffset;
    try {
      for (const rec of decodeRecords(batch)) if (rec.timestamp === maxTimestamp) return rec.offset;
    } catch {
      return batchOffset;
    }
  }
  return batchOffset;
}
type PartOut = NonNullable<TopicOut['partitions']>[number];

/** The first version knowing each special timestamp (ReplicaManager.timestampMinSupportedVersion). */
const TIMESTAMP_MIN_VERSION: ReadonlyMap<number, number> = new Map([[-2, 1], [-1, 1], [-3, 7], [-4, 8], [-5, 9], [-6, 11]]);

export function listOffsetsHandler(ctx: BrokerContext): ApiHandler<ListOffsetsRequest, ListOffsetsResponseInput> {
  return {
    apiKey: 2,
    minVersion: 1,
    maxVersion: 11,
    decode: decodeListOffsetsRequest,
    encode: encodeListOffsetsResponse,
    async handle(rc, req) {
      const v = rc.apiVersion;
      const seen = new Map<string, number>();
      for (const t of req.topics) for (const p of t.partitions) seen.set(`${t.name}\u0000${p.partitionIndex}`, (seen.get(`${t.name}\u0000${p.partitionIndex}`) ?? 0) + 1);
      const byName = new Map<string, Map<number, PartOut>>();
      for (const t of req.topics) {
        let answered = byName.get(t.name);
        const topic = ctx.image.topic(t.name);
        for (const p of t.partitions) {
          if (answered?.has(p.partitionIndex)) continue;
          if (answered === undefined) byName.set(t.name, (answered = new Map()));
          const into = answered;
          const answer = (o: PartOut): void => void into.set(p.partitionIndex, o);
          const out = (errorCode: number, timestamp = -1, offset = -1, leaderEpoch = -1): PartOut => ({
            partitionIndex: p.partitionIndex,
            errorCode,
            timestamp: BigInt(timestamp),
            offset: BigInt(offset),
            ...(v >= 4 ? { leaderEpoch } : {}),
          });
          if ((seen.get(`${t.name}\u0000${p.partitionIndex}`) ?? 0) > 1) {
            answer(out(ErrorCode.INVALID_REQUEST));
            continue;
          }
          const ts = Number(p.timestamp);
          if (ts < 0 && !(v >= (TIMESTAMP_MIN_VERSION.get(ts) ?? Infinity))) {
            answer(out(ErrorCode.UNSUPPORTED_VERSION));
            continue;
          }
          // Only -1 names no epoch in ListOffsets, as in Kafka: any other value below the partition's, a negative one included, is fenced.
          const found = await ctx.replicas.leaderLog(topic, p.partitionIndex, { currentLeaderEpoch: p.currentLeaderEpoch === -1 ? null : p.currentLeaderEpoch });
          if ('errorCode' in found) {
            answer(out(found.errorCode));
            continue;
          }
          const { part, log } = found;
          const fetchableEnd = req.isolationLevel === 1 ? log.lastStableOffset : log.highWatermark;
          if (ts === -2 || ts === -4) {
            const r = await log.offsetForTimestamp(-2);
            answer(out(ErrorCode.NONE, -1, log.logStartOffset, r?.leaderEpoch ?? -1));
          } else if (ts === -1) {
            answer(out(ErrorCode.NONE, -1, fetchableEnd, part.leaderEpoch));
          } else if (ts === -5 || ts === -6) {
            answer(out(ErrorCode.NONE));
          } else if (ts === -3) {
            const r = log.maxTimestampOffset();
            const exact = r ? await exactMaxTimestampOffset(log, r.offset, r.timestamp) : -1;
            if (r && exact >= 0 && exact < fetchableEnd) answer(out(ErrorCode.NONE, r.timestamp, exact, r.leaderEpoch));
            else answer(out(ErrorCode.NONE));
          } else {
            const r = await log.offsetForTimestamp(ts);
            if (r && r.offset < fetchableEnd) answer(out(ErrorCode.NONE, r.timestamp, r.offset, r.leaderEpoch));
            else answer(out(ErrorCode.NONE));
          }
        }
      }
      const topics: TopicOut[] = [...byName].map(([name, parts]) => ({ name, partitions: [...parts.values()] }));
      return { throttleTimeMs: 0, topics };
    },
  };
}
