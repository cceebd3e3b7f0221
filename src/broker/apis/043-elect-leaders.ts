/**
 * ElectLeaders (key 43), v0-2.
 *
 * Behavior: every partition is led by its only (preferred) replica, so a named partition answers
 * ELECTION_NOT_NEEDED, an unknown one UNKNOWN_TOPIC_OR_PARTITION, and a request for all
 * partitions (null list) lists none, since no election ran (Kafka's ReplicationControlManager).
 * Election types 0 (preferred) and 1 (unclean) behave alike here; others → INVALID_REQUEST.
 */
import { ErrorCode } from '../../protocol/generated/errors.js';
import { decodeElectLeadersRequest, type ElectLeadersRequest } from '../../protocol/generated/messages/elect-leaders-request.js';
import { encodeElectLeadersResponse, type ElectLeadersResponseInput } from '../../protocol/generated/messages/elect-leaders-response.js';
import type { ApiHandler } from '../../server/api-handler.js';
import type { BrokerContext } from '../broker-context.js';

export function electLeadersHandler(ctx: BrokerContext): ApiHandler<ElectLeadersRequest, ElectLeadersResponseInput> {
  return {
    apiKey: 43,
    minVersion: 0,
    maxVersion: 2,
    decode: decodeElectLeadersRequest,
    encode: encodeElectLeadersResponse,
    handle(rc, req) {
      const v = rc.apiVersion;
      if (v >= 1 && req.electionType !== 0 && req.electionType !== 1) {
        return { throttleTimeMs: 0, errorCode: ErrorCode.INVALID_REQUEST, replicaElectionResults: [] };
      }
      const results = (req.topicPartitions ?? []).map((tp) => {
        const topic = ctx.image.topic(tp.topic);
        return {
          topic: tp.topic,
          partitionResult: tp.partitions.map((p) =>
            topic?.partitions[p]
              ? { partitionId: p, errorCode: ErrorCode.ELECTION_NOT_NEEDED, errorMessage: 'Leader election not needed for topic partition.' }
              : { partitionId: p, errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, errorMessage: 'The topic or partition does not exist.' },
          ),
        };
      });
      return { throttleTimeMs: 0, ...(v >= 1 ? { errorCode: ErrorCode.NONE } : {}), replicaElectionResults: results };
    },
  };
}
