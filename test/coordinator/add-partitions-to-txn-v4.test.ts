/**
 * AddPartitionsToTxn v4-5, the request partition leaders send to the transaction coordinator
 * (KIP-890), through the handler's decode and encode on real partition logs: several transactions
 * in one request, VerifyOnly answering per partition NONE or TRANSACTION_ABORTABLE without writing,
 * the whole-transaction errors of Kafka's handleVerifyPartitionsInTransaction
 * (INVALID_PRODUCER_ID_MAPPING, PRODUCER_FENCED, INVALID_REQUEST for an empty id), and
 * VerifyOnly=false adding the partitions for a transactions V2 producer.
 */
import { afterEach, expect, it } from 'vitest';
import { GroupCoordinator } from '../../src/coordinator/group-coordinator.js';
import { createTxnApiHandlers } from '../../src/coordinator/txn-api-handlers.js';
import { ErrorCode } from '../../src/protocol/generated/errors.js';
import { encodeAddPartitionsToTxnRequest, type AddPartitionsToTxnRequestInput } from '../../src/protocol/generated/messages/add-partitions-to-txn-request.js';
import { decodeAddPartitionsToTxnResponse, type AddPartitionsToTxnResponse } from '../../src/protocol/generated/messages/add-partitions-to-txn-response.js';
import { Reader } from '../../src/protocol/reader.js';
import { Writer } from '../../src/protocol/writer.js';
import type { RequestContext } from '../../src/server/api-handler.js';
import { testHost } from './harness.js';
import { TempLogs } from './logs.js';

const temps: TempLogs[] = [];
afterEach(async () => {
  for (const t of temps.splice(0)) await t.destroy();
});

it('verifies and adds partitions for several transactions in one request', async () => {
  const t = new TempLogs();
  temps.push(t);
  let nextId = 7000;
  const host = { ...testHost(t.openLog, { 'offsets.topic.num.partitions': '2', 'transaction.state.log.num.partitions': '2' }, {}, { orders: 2 }), allocateProducerId: async () => nextId++ };
  const gc = await GroupCoordinator.start(host);
  const txns = await createTxnApiHandlers(host, gc);
  try {
    const handler = txns.handlers.find((h) => h.apiKey === 24)!;
    expect([handler.minVersion, handler.maxVersion]).toEqual([0, 5]);
    const call = async (version: number, req: AddPartitionsToTxnRequestInput): Promise<AddPartitionsToTxnResponse> => {
      const w = new Writer();
      encodeAddPartitionsToTxnRequest(w, req, version);
      const decoded = handler.decode(new Reader(w.toBuffer()), version);
      const ctx: RequestContext = { apiKey: 24, apiVersion: version, correlationId: 1, clientId: 'broker-2', connectionId: 'c1', principal: 'User:ANONYMOUS', clientAddress: '/127.0.0.1', signal: new AbortController().signal };
      const res = await handler.handle(ctx, decoded);
      const out = new Writer();
      handler.encode(out, res!, version);
      return decodeAddPartitionsToTxnResponse(new Reader(out.toBuffer()), version);
    };
    const codes = (r: AddPartitionsToTxnResponse): Record<string, number[]> =>
      Object.fromEntries(r.resultsByTransaction.map((x) => [x.transactionalId, x.topicResults.flatMap((tr) => tr.resultsByPartition.map((p) => p.partitionErrorCode))]));

    const a = await txns.coordinator.initProducerId('tx-a', 60000, -1, -1, 5);
    const b = await txns.coordinator.initProducerId('tx-b', 60000, -1, -1, 5);
    expect(await txns.coordinator.addPartitions('tx-a', a.producerId, a.producerEpoch, [{ topic: 'orders', partition: 0 }], 3)).toEqual(new Map([['orders\u00000', 0]]));
    const tx = (transactionalId: string, producerId: number, producerEpoch: number, verifyOnly: boolean) => ({ transactionalId, producerId: BigInt(producerId), producerEpoch, verifyOnly, topics: [{ name: 'orders', partitions: [0, 1] }] });

    const first = await call(4, {
      transactions: [tx('tx-a', a.producerId, a.producerEpoch, true), tx('tx-b', b.producerId, b.producerEpoch, true), tx('tx-missing', 1, 0, true), tx('', 1, 0, true)],
    });
    expect(first.errorCode).toBe(0);
    expect(codes(first)).toEqual({
      'tx-a': [ErrorCode.NONE, ErrorCode.TRANSACTION_ABORTABLE],
      'tx-b': [ErrorCode.TRANSACTION_ABORTABLE, ErrorCode.TRANSACTION_ABORTABLE],
      'tx-missing': [ErrorCode.INVALID_PRODUCER_ID_MAPPING, ErrorCode.INVALID_PRODUCER_ID_MAPPING],
      '': [ErrorCode.INVALID_REQUEST, ErrorCode.INVALID_REQUEST],
    });
    // Verification wrote nothing: tx-b is still empty.
    expect((await txns.coordinator.describe('tx-b'))?.partitions.size).toBe(0);

    const second = await call(5, { transactions: [tx('tx-a', a.producerId, a.producerEpoch + 1, true), tx('tx-b', b.producerId, b.producerEpoch, false)] });
    expect(codes(second)).toEqual({ 'tx-a': [ErrorCode.PRODUCER_FENCED, ErrorCode.PRODUCER_FENCED], 'tx-b': [ErrorCode.NONE, ErrorCode.NONE] });
    const added = await txns.coordinator.describe('tx-b');
    expect([...(added?.partitions ?? [])].sort()).toEqual(['orders\u00000', 'orders\u00001']);
    expect(added?.clientTransactionVersion).toBe(2);
  } finally {
    await txns.close();
    await gc.close();
  }
});
