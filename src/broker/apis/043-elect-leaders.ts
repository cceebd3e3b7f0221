/**
 * ElectLeaders (key 43), v0-2.
 *
 * Behavior (Kafka's ReplicationControlManager.electLeaders):
 * - PREFERRED (0, and every v0 request): the first replica becomes leader when it is live and in
 *   the ISR; already leading → ELECTION_NOT_NEEDED; not live or not in the ISR →
 *   PREFERRED_LEADER_NOT_AVAILABLE.
 * - UNCLEAN (1): only for a partition without a live leader: a live ISR member if any, else the
 *   first live replica outside the ISR (which becomes the whole ISR); a live leader →
 *   ELECTION_NOT_NEEDED; no live replica → ELIGIBLE_LEADERS_NOT_AVAILABLE.
 * - Unknown partitions → UNKNOWN_TOPIC_OR_PARTITION. A null list means every partition, and the
 *   answer lists only the partitions whose leader changed. A named list is answered entry by
 *   entry (a topic entry with no partitions gets an empty result).
 * - Any node serves it: the election is a metadata write validated against the image at the
 *   log's last offset (compare-and-swap), so two nodes cannot elect from stale views.
 * Other election types → INVALID_REQUEST.
 * - TimeoutMs ≤ 0: Kafka's controller gives such a request a deadline already passed, so it
 *   answers REQUEST_TIMED_OUT before looking at anything (ElectLeadersRequest.getErrorResponse:
 *   the code at top level from v1 and on every requested partition, no message, an empty list
 *   for a null one); nothing is elected.
 */
import { ErrorCode } from '../../protocol/generated/errors.js';
import { decodeElectLeadersRequest, type ElectLeadersRequest } from '../../protocol/generated/messages/elect-leaders-request.js';
import { encodeElectLeadersResponse, type ElectLeadersResponseInput } from '../../protocol/generated/messages/elect-leaders-response.js';
import type { ApiHandler } from '../../server/api-handler.js';
import type { BrokerContext } from '../broker-context.js';
import { electLeaders } from '../../controller/partition-ops.js';

export function electLeadersHandler(ctx: BrokerContext): ApiHandler<ElectLeadersRequest, ElectLeadersResponseInput> {
  return {
    apiKey: 43,
    minVersion: 0,
    maxVersion: 2,
    decode: decodeElectLeadersRequest,
    encode: encodeElectLeadersResponse,
    async handle(rc, req) {
      const v = rc.apiVersion;
      if (req.timeoutMs <= 0) return timedOut(req, v);
      const type = v >= 1 ? req.electionType : 0;
      if (type !== 0 && type !== 1) {
        return { throttleTimeMs: 0, errorCode: ErrorCode.INVALID_REQUEST, replicaElectionResults: [] };
      }
      const wanted = req.topicPartitions === null ? null : req.topicPartitions.flatMap((tp) => tp.partitions.map((partition) => ({ topic: tp.topic, partition })));
      const out = await electLeaders(ctx.controller, type, wanted);
      if (!Array.isArray(out)) {
        return { throttleTimeMs: 0, ...(v >= 1 ? { errorCode: out.errorCode } : {}), replicaElectionResults: [] };
      }
      const byTopic = new Map<string, { partitionId: number; errorCode: number; errorMessage: string | null }[]>();
      for (const r of out) {
        let l = byTopic.get(r.topic);
        if (!l) byTopic.set(r.topic, (l = []));
        l.push({ partitionId: r.partition, errorCode: r.errorCode, errorMessage: r.errorMessage });
      }
      // A named list is answered entry by entry, as Kafka's controller answers it: a topic entry with
      // no partitions gets an empty result, a topic named in two entries two results.
      const results =
        req.topicPartitions === null
          ? [...byTopic].map(([topic, partitionResult]) => ({ topic, partitionResult }))
          : req.topicPartitions.map((tp) => {
              const all = byTopic.get(tp.topic) ?? [];
              return { topic: tp.topic, partitionResult: tp.partitions.map((id) => all.find((r) => r.partitionId === id)).filter((r) => r !== undefined) };
            });
      return {
        throttleTimeMs: 0,
        ...(v >= 1 ? { errorCode: ErrorCode.NONE } : {}),
        replicaElectionResults: results,
      };
    },
  };
}

/** Kafka's answer to a request whose deadline has passed: the error everywhere, nothing elected. */
function timedOut(req: ElectLeadersRequest, v: number): ElectLeadersResponseInput {
  return {
    throttleTimeMs: 0,
    ...(v >= 1 ? { errorCode: ErrorCode.REQUEST_TIMED_OUT } : {}),
    replicaElectionResults: (req.topicPartitions ?? []).map((tp) => ({
      topic: tp.topic,
      partitionResult: tp.partitions.map((partitionId) => ({ partitionId, errorCode: ErrorCode.REQUEST_TIMED_OUT, errorMessage: null })),
    })),
  };
}
