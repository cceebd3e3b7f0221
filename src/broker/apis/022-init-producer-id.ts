/**
 * InitProducerId (key 22), v0-5, for idempotent producers.
 *
 * Behavior: a null TransactionalId gets a fresh producer id at epoch 0 (Kafka always hands a
 * non-transactional producer a new id, even when v3+ carries its old id and epoch). Ids come
 * from blocks persisted in the metadata log. A transactional id is served by the transaction
 * coordinator when its handlers are registered (they replace this one); until then it is
 * answered COORDINATOR_NOT_AVAILABLE.
 */
import { ErrorCode } from '../../protocol/generated/errors.js';
import { decodeInitProducerIdRequest, type InitProducerIdRequest } from '../../protocol/generated/messages/init-producer-id-request.js';
import { encodeInitProducerIdResponse, type InitProducerIdResponseInput } from '../../protocol/generated/messages/init-producer-id-response.js';
import type { ApiHandler } from '../../server/api-handler.js';
import type { BrokerContext } from '../broker-context.js';
import type { ProducerIdManager } from '../../controller/producer-ids.js';

export function initProducerIdHandler(ctx: BrokerContext, ids: ProducerIdManager): ApiHandler<InitProducerIdRequest, InitProducerIdResponseInput> {
  return {
    apiKey: 22,
    minVersion: 0,
    maxVersion: 5,
    decode: decodeInitProducerIdRequest,
    encode: encodeInitProducerIdResponse,
    async handle(_rc, req) {
      if (req.transactionalId !== null) {
        return { throttleTimeMs: 0, errorCode: ErrorCode.COORDINATOR_NOT_AVAILABLE, producerId: -1n, producerEpoch: -1 };
      }
      try {
        const id = await ids.nextId();
        return { throttleTimeMs: 0, errorCode: ErrorCode.NONE, producerId: BigInt(id), producerEpoch: 0 };
      } catch (err) {
        ctx.log.error('producer id allocation failed', { err: err instanceof Error ? err : String(err) });
        return { throttleTimeMs: 0, errorCode: ErrorCode.UNKNOWN_SERVER_ERROR, producerId: -1n, producerEpoch: -1 };
      }
    },
  };
}
