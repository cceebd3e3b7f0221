/**
 * CreateTopics v8 MirrorInfo (KIP-1279): the topic id is the source's. The zero id is no topic's
 * id (INVALID_REQUEST); an id another topic already has is that topic's (TOPIC_ALREADY_EXISTS).
 * Each is the answer for that topic only: the other topics of the batch are created.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiSpec } from '../../src/client/apis.js';
import { KafkaClient } from '../../src/client/kafka-client.js';
import { ErrorCode } from '../../src/protocol/generated/errors.js';
import { encodeCreateTopicsRequest, type CreateTopicsRequestInput } from '../../src/protocol/generated/messages/create-topics-request.js';
import { decodeCreateTopicsResponse, type CreateTopicsResponse } from '../../src/protocol/generated/messages/create-topics-response.js';
import { startNode, type RunningNode } from '../helpers/node.js';

const CreateTopicsV8: ApiSpec<CreateTopicsRequestInput, CreateTopicsResponse> = { apiKey: 19, versions: [8, 8], encode: encodeCreateTopicsRequest, decode: decodeCreateTopicsResponse };
const ZERO = '00000000-0000-0000-0000-000000000000';
const TAKEN = '3c9d1e2f-4a5b-4c6d-8e7f-0a1b2c3d4e5f';
const FRESH = '7e6d5c4b-3a29-4817-9f6e-5d4c3b2a1908';

let node: RunningNode;
let client: KafkaClient;

beforeAll(async () => {
  node = await startNode();
  client = new KafkaClient({ bootstrapServers: [node.bootstrap], clientId: 'mirror-info' });
}, 60_000);

afterAll(async () => {
  client?.close();
  await node?.destroy();
});

describe('CreateTopics MirrorInfo', () => {
  it('answers each topic of a batch on its own: bad id, id in use, and the good one created', async () => {
    const first = await client.send(CreateTopicsV8, { topics: [{ name: 'holder', numPartitions: 1, replicationFactor: -1, mirrorInfo: { topicId: TAKEN } }], timeoutMs: 5000 });
    expect(first.topics[0]).toMatchObject({ errorCode: 0, topicId: TAKEN });

    const r = await client.send(CreateTopicsV8, {
      topics: [
        { name: 'zero-id', numPartitions: 1, replicationFactor: -1, mirrorInfo: { topicId: ZERO } },
        { name: 'same-id', numPartitions: 1, replicationFactor: -1, mirrorInfo: { topicId: TAKEN } },
        { name: 'fresh', numPartitions: 2, replicationFactor: -1, mirrorInfo: { topicId: FRESH } },
      ],
      timeoutMs: 5000,
    });
    expect(r.topics.map((t) => [t.name, t.errorCode])).toEqual([
      ['zero-id', ErrorCode.INVALID_REQUEST],
      ['same-id', ErrorCode.TOPIC_ALREADY_EXISTS],
      ['fresh', 0],
    ]);
    expect(r.topics[1]?.errorMessage).toContain("'holder'");
    const md = await client.metadata(null);
    const names = md.topics.map((t) => t.name).sort();
    expect(names).toEqual(['fresh', 'holder']);
    expect(md.topics.find((t) => t.name === 'fresh')?.topicId).toBe(FRESH);
  });
});
