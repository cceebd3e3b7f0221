/**
 * ShareFetch (key 78), v1-2 (KIP-932).
 *
 * Behavior:
 * - The member's share session (ShareSessionEpoch 0 opens it, n > 0 continues it with the topics
 *   added and ForgottenTopicsData removed, -1 only acknowledges and closes it) names the
 *   partitions to fetch; session errors are top-level (SHARE_SESSION_NOT_FOUND,
 *   INVALID_SHARE_SESSION_EPOCH, SHARE_SESSION_LIMIT_REACHED). No GroupId or MemberId is
 *   INVALID_REQUEST.
 * - Piggybacked AcknowledgementBatches are applied first, per partition (AcknowledgeErrorCode).
 * - Per partition led here, records are acquired for the member (share-partition.ts) and the
 *   stored batches holding them are returned unchanged, with AcquiredRecords naming the offsets
 *   acquired and their delivery count; a partition not led here is NOT_LEADER_OR_FOLLOWER.
 * - With nothing acquirable the request waits up to MaxWaitMs for new records or released ones.
 *
 * Version notes: v1 MaxRecords, BatchSize and AcquisitionLockTimeoutMs; v2 ShareAcquireMode
 * (record_limit caps MaxRecords exactly) and the RENEW acknowledge type.
 */
import { decodeShareFetchRequest, type ShareFetchRequest } from '../../protocol/generated/messages/share-fetch-request.js';
import { encodeShareFetchResponse, type ShareFetchResponseInput } from '../../protocol/generated/messages/share-fetch-response.js';
import type { ApiHandler } from '../../server/api-handler.js';
import type { ShareFetchPartition, SharePartitionResult } from '../../share/share-partition-manager.js';
import type { ShareGroups } from '../share-wiring.js';

/** ShareAcquireMode record_limit (Kafka's ShareAcquireMode.RECORD_LIMIT). */
const RECORD_LIMIT = 1;

export function byTopic<T>(results: readonly SharePartitionResult[], part: (r: SharePartitionResult) => T): { topicId: string; partitions: T[] }[] {
  const topics = new Map<string, T[]>();
  for (const r of results) {
    const list = topics.get(r.topicId) ?? [];
    list.push(part(r));
    topics.set(r.topicId, list);
  }
  return [...topics].map(([topicId, partitions]) => ({ topicId, partitions }));
}

export function shareFetchHandler(share: ShareGroups): ApiHandler<ShareFetchRequest, ShareFetchResponseInput> {
  return {
    apiKey: 78,
    minVersion: 1,
    maxVersion: 2,
    decode: decodeShareFetchRequest,
    encode: encodeShareFetchResponse,
    async handle(rc, req) {
      const partitions: ShareFetchPartition[] = [];
      for (const t of req.topics) {
        for (const p of t.partitions) partitions.push({ topicId: t.topicId, partition: p.partitionIndex, acks: p.acknowledgementBatches });
      }
      const forgotten = req.forgottenTopicsData.flatMap((f) => f.partitions.map((partition) => ({ topicId: f.topicId, partition })));
      const r = await share.partitions.shareFetch({
        groupId: req.groupId ?? '',
        memberId: req.memberId ?? '',
        epoch: req.shareSessionEpoch,
        maxWaitMs: req.maxWaitMs,
        maxBytes: req.maxBytes,
        maxRecords: req.maxRecords > 0 ? req.maxRecords : 500,
        strict: rc.apiVersion >= 2 && req.shareAcquireMode === RECORD_LIMIT,
        partitions,
        forgotten,
        signal: rc.signal,
      });
      return {
        throttleTimeMs: 0,
        errorCode: r.errorCode,
        errorMessage: r.errorMessage,
        acquisitionLockTimeoutMs: r.lockDurationMs,
        responses: byTopic(r.partitions, (p) => ({
          partitionIndex: p.partition,
          errorCode: p.errorCode,
          errorMessage: p.errorMessage,
          acknowledgeErrorCode: p.acknowledgeErrorCode,
          acknowledgeErrorMessage: p.acknowledgeErrorMessage,
          currentLeader: { leaderId: p.leaderId, leaderEpoch: p.leaderEpoch },
          records: p.records,
          acquiredRecords: p.acquired,
        })),
        nodeEndpoints: [],
      };
    },
  };
}
