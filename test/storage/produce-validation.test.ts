/** The produce path validates each batch once (validateProduceRecords) and the log stores exactly that batch. */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { encodeCreateTopicsRequest } from '../../src/protocol/generated/messages/create-topics-request.js';
import { decodeCreateTopicsResponse } from '../../src/protocol/generated/messages/create-topics-response.js';
import { encodeFetchRequest } from '../../src/protocol/generated/messages/fetch-request.js';
import { decodeFetchResponse } from '../../src/protocol/generated/messages/fetch-response.js';
import { encodeProduceRequest } from '../../src/protocol/generated/messages/produce-request.js';
import { decodeProduceResponse } from '../../src/protocol/generated/messages/produce-response.js';
import { ErrorCode } from '../../src/protocol/generated/errors.js';
import { BATCH, iterateBatches } from '../../src/protocol/record-batch.js';
import { buildRecordBatch, decodeRecords } from '../../src/protocol/records.js';
import { startNode, type RunningNode } from '../helpers/node.js';
import { WireClient } from '../broker/wire.js';

let node: RunningNode;
let c: WireClient;
beforeAll(async () => {
  node = await startNode();
  c = await WireClient.connect(node.port);
  const r = await c.call(19, 7, (w) => encodeCreateTopicsRequest(w, { topics: [{ name: 'v', numPartitions: 1, replicationFactor: 1, configs: [] }], timeoutMs: 5000 }, 7));
  expect(decodeCreateTopicsResponse(r, 7).topics[0]!.errorCode).toBe(0);
}, 120_000);
afterAll(async () => {
  c?.close();
  await node?.destroy();
});

async function produce(records: Buffer): Promise<{ errorCode: number; baseOffset: bigint }> {
  const pr = decodeProduceResponse(await c.call(0, 9, (w) => encodeProduceRequest(w, { transactionalId: null, acks: -1, timeoutMs: 5000, topicData: [{ name: 'v', partitionData: [{ index: 0, records }] }] }, 9)), 9);
  return pr.responses[0]!.partitionResponses[0]!;
}

it('stores only the whole batch when a produce carries trailing bytes that form no batch, as Kafka trims them', async () => {
  const first = buildRecordBatch({ records: [{ key: null, value: Buffer.from('a') }, { key: null, value: Buffer.from('b') }] });
  const second = buildRecordBatch({ records: [{ key: null, value: Buffer.from('c') }] });
  expect(await produce(Buffer.concat([first, Buffer.alloc(BATCH.HEADER_SIZE + 3, 7)]))).toMatchObject({ errorCode: 0, baseOffset: 0n });
  expect(await produce(Buffer.concat([second, Buffer.alloc(5, 1)]))).toMatchObject({ errorCode: 0, baseOffset: 2n });
  const fr = decodeFetchResponse(
    await c.call(1, 11, (w) => encodeFetchRequest(w, { replicaId: -1, maxWaitMs: 0, minBytes: 0, maxBytes: 1 << 20, topics: [{ topic: 'v', partitions: [{ partition: 0, fetchOffset: 0n, partitionMaxBytes: 1 << 20 }] }] }, 11)),
    11,
  ).responses[0]!.partitions[0]!;
  expect(fr).toMatchObject({ errorCode: 0, highWatermark: 3n });
  expect(fr.records!.length).toBe(first.length + second.length);
  const batches = [...iterateBatches(fr.records!)];
  expect(batches.map((b) => b.isValid())).toEqual([true, true]);
  expect(batches.flatMap((b) => decodeRecords(b).map((r) => `${r.offset}:${r.value!.toString()}`))).toEqual(['0:a', '1:b', '2:c']);
});

it('answers the first broken rule of a batch with its Kafka error code', async () => {
  const control = buildRecordBatch({ isControl: true, records: [{ key: Buffer.from([0, 0, 0, 0]), value: Buffer.from([0, 0, 0, 0, 0, 0]) }] });
  expect((await produce(control)).errorCode).toBe(ErrorCode.INVALID_RECORD);
  const corrupt = buildRecordBatch({ records: [{ key: null, value: Buffer.from('x') }] });
  corrupt[corrupt.length - 1]! ^= 0xff;
  expect((await produce(corrupt)).errorCode).toBe(ErrorCode.CORRUPT_MESSAGE);
});
