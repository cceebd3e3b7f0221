/**
 * The share coordinator's RPCs (KIP-932; Kafka's ShareCoordinatorService), served by the node
 * that leads the key's `__share_group_state` partition (else NOT_COORDINATOR per partition):
 *
 * - InitializeShareGroupState (83) v0: a new state epoch (older or equal is FENCED_STATE_EPOCH)
 *   at a start offset, with no in-flight batches.
 * - ReadShareGroupState (84) v0: the state epoch, start offset and state batches; a
 *   share-partition with no state answers start offset -1 and state epoch 0, as Kafka does.
 * - WriteShareGroupState (85) v0-1: the whole state; an older state epoch is FENCED_STATE_EPOCH,
 *   an older leader epoch FENCED_LEADER_EPOCH.
 * - DeleteShareGroupState (86) v0: removes the state (a tombstone).
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
import type { ApiHandler } from '../server/api-handler.js';
import type { ShareCoordinator } from './share-coordinator.js';

type Outcome = { partition: number; errorCode: number; errorMessage: string | null };

async function perPartition<P extends { partition: number }>(topics: readonly { topicId: string; partitions: readonly P[] }[], op: (topicId: string, p: P) => Promise<number>): Promise<{ topicId: string; partitions: Outcome[] }[]> {
  return Promise.all(
    topics.map(async (t) => ({
      topicId: t.topicId,
      partitions: await Promise.all(t.partitions.map(async (p) => ({ partition: p.partition, errorCode: await op(t.topicId, p).catch(errorCodeOf), errorMessage: null }))),
    })),
  );
}

export function shareStateHandlers(state: ShareCoordinator): ApiHandler[] {
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
      const results = await Promise.all(
        req.topics.map(async (t) => ({
          topicId: t.topicId,
          partitions: await Promise.all(
            t.partitions.map(async (p) => {
              try {
                const s = await state.readState(req.groupId, t.topicId, p.partition);
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
            }),
          ),
        })),
      );
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
  return [initialize, read, write, del] as ApiHandler[];
}
