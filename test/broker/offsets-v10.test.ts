/**
 * OffsetCommit v10 and OffsetFetch v10 (topics by id) against a real node over raw requests:
 * commits by id and by name read back by the other version, UNKNOWN_TOPIC_ID for an unknown id.
 * The same exchange runs against Apache Kafka 4.4 in test/interop/kafka-44-protocol.test.ts.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { encodeOffsetFetchRequest } from '../../src/protocol/generated/messages/offset-fetch-request.js';
import { decodeOffsetFetchResponse } from '../../src/protocol/generated/messages/offset-fetch-response.js';
import { startNode, type RunningNode } from '../helpers/node.js';
import { checkOffsetsV10, runOffsetsV10 } from './offsets-v10-wire.js';
import { WireClient } from './wire.js';

let node: RunningNode;
beforeAll(async () => {
  node = await startNode({ overrides: { 'offsets.topic.num.partitions': 2 } });
}, 120_000);
afterAll(async () => {
  await node?.destroy();
});

it('commits and fetches offsets by topic id, readable by name and the other way round', async () => {
  const c = await WireClient.connect(node.port);
  try {
    checkOffsetsV10(await runOffsetsV10(c, 'offsets-v10'));
  } finally {
    c.close();
  }
  // What v10 wrote is replayed by name after a restart.
  node = await node.restart();
  const again = await WireClient.connect(node.port);
  try {
    const r = decodeOffsetFetchResponse(await again.call(9, 9, (w) => encodeOffsetFetchRequest(w, { groups: [{ groupId: 'offsets-v10-group', topics: null }], requireStable: false }, 9)), 9);
    expect(r.groups[0]!.topics.map((t) => [t.name, t.partitions.map((p) => [p.partitionIndex, Number(p.committedOffset), p.metadata])])).toEqual([['offsets-v10', [[0, 5, 'by-id'], [1, 7, '']]]]);
  } finally {
    again.close();
  }
}, 90_000);
