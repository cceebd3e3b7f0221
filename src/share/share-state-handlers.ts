/**
 * The share coordinator's RPCs (KIP-932; Kafka's ShareCoordinatorService), served by the node
 * that leads the key's `__share_group_state` partition (else NOT_COORDINATOR per partition):
 *
 * - InitializeShareGroupState (83) v0: a state epoch (an older one than stored is FENCED_STATE_EPOCH)
 *   at a start offset, with no in-flight batches.
 * - ReadShareGroupState (84) v0: the state epoch, start offset and state batches; a
 *   share-partition with no state answers start offset -1 and state epoch 0, as Kafka does.
 * - WriteShareGroupState (85) v0-1: the whole state; an older state epoch is FENCED_STATE_EPOCH,
 *   an older leader epoch FENCED_LEADER_EPOCH.
 * - DeleteShareGroupState (86) v0: removes the state (a tombstone).
 * - ReadShareGroupStateSummary (87) v0-1: the start offset, state epoch and leader epoch, and v1
 *   DeliveryCompleteCount (in-flight records acknowledged or archived); a share-partition with
 *   no state (an unknown group among them) answers start offset -1, state epoch 0, leader epoch
 *   -1 and count -1, as Kafka's ShareCoordinatorShard does.
 *
 * A read or summary naming a topic id or partition the metadata image does not hold is
 * UNKNOWN_TOPIC_OR_PARTITION, as in ShareCoordinatorShard.maybeGetReadStateError.
 */
import { errorCodeOf } from '../protocol/kafka-error.js';
import { decodeDeleteShareGroupStateRequest, type DeleteShareGroupStateRequest } from '../protocol/generated/messages/delete-share-group-state-request.js';
import { encodeDeleteShareGroupStateResponse, type DeleteShareGroupStateResponseInput } from '../protocol/generated/messages/delete-share-group-state-response.js';
import { decodeInitializeShareGroupStateRequest, type InitializeShareGroupStateRequest } from '../protocol/generated/messages/initialize-share-group-state-request.js';
import { encodeInitializeShareGroupStateResponse, type InitializeShareGroupStateResponseInput } from '../protocol/generated/messages/initialize-share-group-state-response.js';
import { decodeReadShareGroupStateRequest, type ReadShareGroupStateRequest } from '../protocol/generated/messages/read-share-group-state-request.js';
import { encodeReadShareGroupStateResponse, type ReadShareGroupStateResponseInput } from '../protocol/generated/messages/read-share-group-state-response.js';
import { decodeWriteShareGroupStateRequest, type WriteShareGroupStateRequest } from '../protocol/generated/messages/write-share-group-state-request.js';
import { encodeWriteShareGroupStateResponse, type WriteShareGroupStateResponseInput } from '../protocol/generated/messages/write-share-group-state-response.js';
import { decodeReadShareGroupStateSummaryRequest, type ReadShareGroupStateSummaryRequest } from '../protocol/generated/messages/read-share-group-state-summary-request.js';
import { encodeReadShareGroupStateSummaryResponse, type ReadShareGroupStateSummaryResponseInput } from '../protocol/generated/messages/read-share-group-state-summary-response.js';
import { ErrorCode } from '../protocol/generated/errors.js';
import type { ApiHandler } from '../server/api-handler.js';
import type { ShareCoordinator } from './share-coordinator.js';

type Outcome = { partition: number; errorCode: number; errorMessage: string | null };

/** Runs `op` on every partition of every topic of a state request, answering in the same shape. */
async function eachPartition<P, R>(topics: readonly { topicId: string; partitions: readonly P[] }[], op: (topicId: string, p: P) => Promise<R>): Promise<{ topicId: string; partitions: R[] }[]> {
  return Promise.all(topics.map(async (t) => ({ topicId: t.topicId, partitions: await Promise.all(t.partitions.map((p) => op(t.topicId, p))) })));
}

async function perPartition<P extends { partition: number }>(topics: readonly { topicId: string; partitions: readonly P[] }[], op: (topicId: string, p: P) => Promise<number>): Promise<{ topicId: string; partitions: Outcome[] }[]> {
  return eachPartition(topics, async (topicId, p) => ({ partition: p.partition, errorCode: await op(topicId, p).catch(errorCodeOf), errorMessage: null }));
}

/** Whether the metadata image holds a topic id's partition. */
type PartitionExists = (topicId: string, partition: number) => boolean;

export function shareStateHandlers(state: ShareCoordinator, exists: PartitionExists): ApiHandler[] {
  const initialize: ApiHandler<InitializeShareGroupStateRequest, InitializeShareGroupStateResponseInput> = {
    apiKey: 83,
    minVersion: 0,
    maxVersion: 0,
    decode: decodeInitializeShareGroupStateRequest,
    encode: encodeInitializeShareGroupStateResponse,
    async handle(_rc, req) {
      return { results: await perPartition(req.topics, (topicId, p) => state.initializeState(req.groupId, topicId, p.partition, p.stateEpoch, Number(p.startOffset))) };
    },
  };
  const read: ApiHandler<ReadShareGroupStateRequest, ReadShareGroupStateResponseInput> = {
    apiKey: 84,
    minVersion: 0,
    maxVersion: 0,
    decode: decodeReadShareGroupStateRequest,
    encode: encodeReadShareGroupStateResponse,
    async handle(_rc, req) {
      const results = await eachPartition(req.topics, async (topicId, p) => {
        if (!exists(topicId, p.partition)) return { partition: p.partition, errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, errorMessage: null, stateEpoch: 0, startOffset: -1n, stateBatches: [] };
        try {
          const s = await state.readState(req.groupId, topicId, p.partition);
          return {
            partition: p.partition,
            errorCode: 0,
            stateEpoch: s?.stateEpoch ?? 0,
            startOffset: BigInt(s?.startOffset ?? -1),
            stateBatches: (s?.stateBatches ?? []).map((b) => ({ firstOffset: BigInt(b.firstOffset), lastOffset: BigInt(b.lastOffset), deliveryState: b.deliveryState, deliveryCount: b.deliveryCount })),
          };
        } catch (e) {
          return { partition: p.partition, errorCode: errorCodeOf(e), stateEpoch: 0, startOffset: -1n, stateBatches: [] };
        }
      });
      return { results };
    },
  };
  const write: ApiHandler<WriteShareGroupStateRequest, WriteShareGroupStateResponseInput> = {
    apiKey: 85,
    minVersion: 0,
    maxVersion: 1,
    decode: decodeWriteShareGroupStateRequest,
    encode: encodeWriteShareGroupStateResponse,
    async handle(_rc, req) {
      return {
        results: await perPartition(req.topics, (topicId, p) =>
          state.writeStateFenced(req.groupId, topicId, p.partition, {
            stateEpoch: p.stateEpoch,
            snapshotEpoch: 0,
            leaderEpoch: p.leaderEpoch,
            startOffset: Number(p.startOffset),
            stateBatches: p.stateBatches.map((b) => ({ firstOffset: Number(b.firstOffset), lastOffset: Number(b.lastOffset), deliveryState: b.deliveryState, deliveryCount: b.deliveryCount })),
          }),
        ),
      };
    },
  };
  const del: ApiHandler<DeleteShareGroupStateRequest, DeleteShareGroupStateResponseInput> = {
    apiKey: 86,
    minVersion: 0,
    maxVersion: 0,
    decode: decodeDeleteShareGroupStateRequest,
    encode: encodeDeleteShareGroupStateResponse,
    async handle(_rc, req) {
      return { results: await perPartition(req.topics, (topicId, p) => state.deleteState(req.groupId, topicId, p.partition).then(() => 0)) };
    },
  };
  const summary: ApiHandler<ReadShareGroupStateSummaryRequest, ReadShareGroupStateSummaryResponseInput> = {
    apiKey: 87,
    minVersion: 0,
    maxVersion: 1,
    decode: decodeReadShareGroupStateSummaryRequest,
    encode: encodeReadShareGroupStateSummaryResponse,
    async handle(_rc, req) {
      const results = await eachPartition(req.topics, async (topicId, p) => {
        const none = { partition: p.partition, errorMessage: null, stateEpoch: 0, leaderEpoch: -1, startOffset: -1n, deliveryCompleteCount: -1 };
        if (!exists(topicId, p.partition)) return { ...none, errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION };
        try {
          const s = await state.readSummary(req.groupId, topicId, p.partition);
          if (s === null) return { ...none, errorCode: ErrorCode.NONE };
          return { partition: p.partition, errorCode: ErrorCode.NONE, errorMessage: null, stateEpoch: s.stateEpoch, leaderEpoch: s.leaderEpoch, startOffset: BigInt(s.startOffset), deliveryCompleteCount: s.deliveryCompleteCount };
        } catch (e) {
          return { ...none, errorCode: errorCodeOf(e) };
        }
      });
      return { results };
    },
  };
  return [initialize, read, write, del, summary] as ApiHandler[];
}
