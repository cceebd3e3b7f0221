/**
 * Produce requests pipelined on one connection reach each partition's log in the order they
 * were sent, as Kafka's one-request-at-a-time processing per connection guarantees, also on the
 * first writes to a topic just created, whose logs may still be opening when the requests come.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KafkaConnection } from '../../src/client/kafka-connection.js';
import { encodeCreateTopicsRequest } from '../../src/protocol/generated/messages/create-topics-request.js';
import { decodeCreateTopicsResponse } from '../../src/protocol/generated/messages/create-topics-response.js';
import { encodeProduceRequest, type ProduceRequestTopicProduceDataInput } from '../../src/protocol/generated/messages/produce-request.js';
import { decodeProduceResponse, type ProduceResponse } from '../../src/protocol/generated/messages/produce-response.js';
import { startNode, type RunningNode } from '../helpers/node.js';
import { batch } from '../storage/helpers.js';

const PRODUCE_VERSION = 9;
let node: RunningNode;

beforeAll(async () => {
  node = await startNode();
}, 60_000);

afterAll(async () => {
  await node?.destroy();
});

function produce(c: KafkaConnection, topicData: ProduceRequestTopicProduceDataInput[]): Promise<ProduceResponse> {
  return c.request(
    0,
    PRODUCE_VERSION,
    (w) => encodeProduceRequest(w, { transactionalId: null, acks: 1, timeoutMs: 30_000, topicData }, PRODUCE_VERSION),
    (r) => decodeProduceResponse(r, PRODUCE_VERSION),
  );
}

/** partition → [errorCode, baseOffset] of one answer. */
function offsets(res: ProduceResponse): Map<number, [number, number]> {
  return new Map(res.responses.flatMap((t) => t.partitionResponses.map((p) => [p.index, [p.errorCode, Number(p.baseOffset)]] as const)));
}

describe('produce ordering on one connection', () => {
  it('appends a later request after an earlier one to the same partition, on a topic created a moment before', async () => {
    const c = await KafkaConnection.connect({ host: '127.0.0.1', port: node.port, clientId: 'produce-order' });
    try {
      for (let round = 0; round < 20; round++) {
        const topic = `order-${round}`;
        const created = await c.request(
          19,
          5,
          (w) => encodeCreateTopicsRequest(w, { topics: [{ name: topic, numPartitions: 8, replicationFactor: 1, assignments: [], configs: [] }], timeoutMs: 30_000, validateOnly: false }, 5),
          (r) => decodeCreateTopicsResponse(r, 5),
        );
        expect(created.topics[0]?.errorCode).toBe(0);
        // The first request names every partition, the second only the last: the second's batch
        // must land after the first's there, whichever logs were open when each arrived.
        const first = produce(c, [{ name: topic, partitionData: Array.from({ length: 8 }, (_, index) => ({ index, records: batch(1, { tag: 'first' }) })) }]);
        const second = produce(c, [{ name: topic, partitionData: [{ index: 7, records: batch(1, { tag: 'second' }) }] }]);
        const [a, b] = await Promise.all([first, second]);
        expect(offsets(a).get(7), `round ${round}`).toEqual([0, 0]);
        expect(offsets(b).get(7), `round ${round}`).toEqual([0, 1]);
      }
    } finally {
      c.close();
    }
  }, 120_000);
});
