/**
 * ShareAcknowledge (key 79), v1-2 (KIP-932).
 *
 * Behavior:
 * - Needs the member's open share session: ShareSessionEpoch n > 0 must be its next epoch, -1 is
 *   the final request that closes it (releasing what the member still holds); 0 is
 *   INVALID_SHARE_SESSION_EPOCH, as an acknowledgement cannot open a session.
 * - Per partition, every batch's records must be ACQUIRED by this member, else
 *   INVALID_RECORD_STATE; ACCEPT acknowledges, RELEASE makes them available again (archived at
 *   the delivery count limit), REJECT and GAP archive, RENEW (v2) restarts their lock.
 *
 * Version notes: v2 IsRenewAck and AcquisitionLockTimeoutMs.
 */
import { decodeShareAcknowledgeRequest, type ShareAcknowledgeRequest } from '../../protocol/generated/messages/share-acknowledge-request.js';
import { encodeShareAcknowledgeResponse, type ShareAcknowledgeResponseInput } from '../../protocol/generated/messages/share-acknowledge-response.js';
import type { ApiHandler } from '../../server/api-handler.js';
import type { ShareGroups } from '../share-wiring.js';
import { byTopic } from './078-share-fetch.js';

export function shareAcknowledgeHandler(share: ShareGroups): ApiHandler<ShareAcknowledgeRequest, ShareAcknowledgeResponseInput> {
  return {
    apiKey: 79,
    minVersion: 1,
    maxVersion: 2,
    decode: decodeShareAcknowledgeRequest,
    encode: encodeShareAcknowledgeResponse,
    async handle(rc, req) {
      const partitions = req.topics.flatMap((t) => t.partitions.map((p) => ({ topicId: t.topicId, partition: p.partitionIndex, acks: p.acknowledgementBatches })));
      const r = await share.partitions.shareAcknowledge(req.groupId ?? '', req.memberId ?? '', req.shareSessionEpoch, partitions);
      return {
        throttleTimeMs: 0,
        errorCode: r.errorCode,
        errorMessage: r.errorMessage,
        ...(rc.apiVersion >= 2 ? { acquisitionLockTimeoutMs: r.lockDurationMs } : {}),
        responses: byTopic(r.partitions, (p) => ({
          partitionIndex: p.partition,
          errorCode: p.errorCode,
          errorMessage: p.errorMessage,
          currentLeader: { leaderId: p.leaderId, leaderEpoch: p.leaderEpoch },
        })),
        nodeEndpoints: [],
      };
    },
  };
}
