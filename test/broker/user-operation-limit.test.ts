/**
 * Kafka's controller refuses a CreateTopics whose metadata records would pass 10,000 (a topic
 * record, one per partition and one per config) with POLICY_VIOLATION, "Unable to perform
 * excessively large batch operation.", for every topic of the request, validate-only included.
 * Apache Kafka 4.1.2 answered exactly so here (9,999 partitions pass, 10,000 do not, two topics of
 * 5,000 both fail). A CreatePartitions past the bound fails only the topic that crosses it, with
 * UNKNOWN_SERVER_ERROR (10,000 new partitions pass, 10,001 do not). Fjord used to build the
 * placement of every asked partition first: a CreateTopics or CreatePartitions asking for
 * 2,147,483,647 partitions filled the heap and killed the node.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ErrorCode } from '../../src/protocol/generated/errors.js';
import { encodeCreatePartitionsRequest } from '../../src/protocol/generated/messages/create-partitions-request.js';
import { decodeCreatePartitionsResponse } from '../../src/protocol/generated/messages/create-partitions-response.js';
import { encodeCreateTopicsRequest } from '../../src/protocol/generated/messages/create-topics-request.js';
import { decodeCreateTopicsResponse } from '../../src/protocol/generated/messages/create-topics-response.js';
import { startNode, type RunningNode } from '../helpers/node.js';
import { WireClient } from './wire.js';

const EXCESSIVE = 'Unable to perform excessively large batch operation.';
let node: RunningNode;
let c: WireClient;

beforeAll(async () => {
  node = await startNode();
  c = await WireClient.connect(node.port);
}, 180_000);
afterAll(async () => {
  c?.close();
  await node?.destroy();
});

async function create(topics: { name: string; numPartitions: number }[], validateOnly: boolean) {
  const r = decodeCreateTopicsResponse(
    await c.call(19, 7, (w) => encodeCreateTopicsRequest(w, { topics: topics.map((t) => ({ ...t, replicationFactor: 1, assignments: [], configs: [] })), timeoutMs: 10_000, validateOnly }, 7)),
    7,
  );
  return r.topics.map((t) => ({ name: t.name, errorCode: t.errorCode, errorMessage: t.errorMessage ?? null }));
}

it('CreateTopics over 10,000 records is POLICY_VIOLATION for every topic, and the node keeps serving', async () => {
  for (const validateOnly of [true, false]) {
    expect(await create([{ name: 'huge', numPartitions: 2_147_483_647 }], validateOnly)).toEqual([{ name: 'huge', errorCode: ErrorCode.POLICY_VIOLATION, errorMessage: EXCESSIVE }]);
  }
  expect(await create([{ name: 'ten-thousand', numPartitions: 10_000 }], true)).toEqual([{ name: 'ten-thousand', errorCode: ErrorCode.POLICY_VIOLATION, errorMessage: EXCESSIVE }]);
  expect((await create([{ name: 'a1', numPartitions: 5000 }, { name: 'a2', numPartitions: 5000 }], true)).map((t) => t.errorCode)).toEqual([ErrorCode.POLICY_VIOLATION, ErrorCode.POLICY_VIOLATION]);
  // 1 topic record + 9,999 partition records is within the limit.
  expect(await create([{ name: 'just-under', numPartitions: 9_999 }], true)).toEqual([{ name: 'just-under', errorCode: ErrorCode.NONE, errorMessage: null }]);
  expect(await create([{ name: 'small', numPartitions: 2 }], false)).toEqual([{ name: 'small', errorCode: ErrorCode.NONE, errorMessage: null }]);
}, 60_000);

it('CreatePartitions adding over 10,000 partitions is UNKNOWN_SERVER_ERROR for that topic, and the node keeps serving', async () => {
  expect((await create([{ name: 'grow', numPartitions: 1 }], false))[0]!.errorCode).toBe(ErrorCode.NONE);
  const grow = async (count: number, validateOnly: boolean) =>
    decodeCreatePartitionsResponse(await c.call(37, 3, (w) => encodeCreatePartitionsRequest(w, { topics: [{ name: 'grow', count, assignments: null }], timeoutMs: 10_000, validateOnly }, 3)), 3).results.map((r) => ({
      errorCode: r.errorCode,
      errorMessage: r.errorMessage ?? null,
    }));
  expect(await grow(2_147_483_647, false)).toEqual([{ errorCode: ErrorCode.UNKNOWN_SERVER_ERROR, errorMessage: EXCESSIVE }]);
  expect(await grow(10_002, true)).toEqual([{ errorCode: ErrorCode.UNKNOWN_SERVER_ERROR, errorMessage: EXCESSIVE }]);
  expect(await grow(10_001, true)).toEqual([{ errorCode: ErrorCode.NONE, errorMessage: null }]);
  expect(await grow(3, false)).toEqual([{ errorCode: ErrorCode.NONE, errorMessage: null }]);
}, 60_000);
