/** Metadata lookups by topic id (v12+) and their refusal in v10-11, over raw frames to a real node. */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { encodeCreateTopicsRequest } from '../../src/protocol/generated/messages/create-topics-request.js';
import { decodeCreateTopicsResponse } from '../../src/protocol/generated/messages/create-topics-response.js';
import { encodeMetadataRequest } from '../../src/protocol/generated/messages/metadata-request.js';
import { decodeMetadataResponse, type MetadataResponse } from '../../src/protocol/generated/messages/metadata-response.js';
import { startNode, type RunningNode } from '../helpers/node.js';
import { WireClient } from './wire.js';

const ZERO = '00000000-0000-0000-0000-000000000000';
const UNKNOWN_ID = '0b1c2d3e-4f50-4a6b-8c7d-9e0f1a2b3c4d';
let node: RunningNode;
let c: WireClient;
let idOf: string;

beforeAll(async () => {
  node = await startNode();
  c = await WireClient.connect(node.port);
  const r = decodeCreateTopicsResponse(await c.call(19, 7, (w) => encodeCreateTopicsRequest(w, { topics: [{ name: 'by-id', numPartitions: 2, replicationFactor: 1 }], timeoutMs: 5000 }, 7)), 7);
  expect(r.topics[0]!.errorCode).toBe(0);
  idOf = r.topics[0]!.topicId;
  expect(idOf).not.toBe(ZERO);
});
afterAll(async () => {
  c?.close();
  await node?.destroy();
});

const metadata = async (v: number, topics: { name: string | null; topicId?: string }[], allowAutoTopicCreation = true): Promise<MetadataResponse> =>
  decodeMetadataResponse(await c.call(3, v, (w) => encodeMetadataRequest(w, { topics, allowAutoTopicCreation }, v)), v);

it('v12 and v13 answer a known topic id with its name and partitions, an unknown one with UNKNOWN_TOPIC_ID and a null name', async () => {
  for (const v of [12, 13]) {
    const r = await metadata(v, [{ name: null, topicId: idOf }, { name: null, topicId: UNKNOWN_ID }, { name: null, topicId: idOf }]);
    expect(r.topics).toHaveLength(2);
    const known = r.topics.find((t) => t.topicId === idOf)!;
    expect(known).toMatchObject({ errorCode: 0, name: 'by-id' });
    expect(known.partitions.map((p) => [p.partitionIndex, p.errorCode, p.leaderId])).toEqual([
      [0, 0, 1],
      [1, 0, 1],
    ]);
    expect(r.topics.find((t) => t.topicId === UNKNOWN_ID)).toMatchObject({ errorCode: 100, name: null, partitions: [] });
  }
});

it('ids win over names in one request and an id lookup never auto-creates', async () => {
  const r = await metadata(12, [{ name: 'not-created-by-id', topicId: UNKNOWN_ID }]);
  expect(r.topics).toEqual([expect.objectContaining({ errorCode: 100, name: null, topicId: UNKNOWN_ID })]);
  const check = await metadata(12, [{ name: 'not-created-by-id' }], false);
  expect(check.topics[0]!.errorCode).toBe(3);
});

it('a name lookup still works in v12 and answers the topic id', async () => {
  const r = await metadata(12, [{ name: 'by-id' }], false);
  expect(r.topics[0]).toMatchObject({ errorCode: 0, name: 'by-id', topicId: idOf });
});

it('v10 and v11 refuse a null name or a topic id with INVALID_REQUEST', async () => {
  for (const v of [10, 11]) {
    const r = await metadata(v, [{ name: null, topicId: idOf }]);
    expect(r.topics.map((t) => t.errorCode)).toEqual([42]);
    const byName = await metadata(v, [{ name: 'by-id' }], false);
    expect(byName.topics[0]).toMatchObject({ errorCode: 0, topicId: idOf });
  }
});
