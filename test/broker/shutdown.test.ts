/** SIGTERM answers in-flight requests and leaves a clean-shutdown marker; SIGKILL loses no acknowledged write. */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { encodeCreateTopicsRequest } from '../../src/protocol/generated/messages/create-topics-request.js';
import { decodeCreateTopicsResponse } from '../../src/protocol/generated/messages/create-topics-response.js';
import { encodeFetchRequest } from '../../src/protocol/generated/messages/fetch-request.js';
import { decodeFetchResponse } from '../../src/protocol/generated/messages/fetch-response.js';
import { encodeListOffsetsRequest } from '../../src/protocol/generated/messages/list-offsets-request.js';
import { decodeListOffsetsResponse } from '../../src/protocol/generated/messages/list-offsets-response.js';
import { encodeProduceRequest } from '../../src/protocol/generated/messages/produce-request.js';
import { decodeProduceResponse } from '../../src/protocol/generated/messages/produce-response.js';
import { Reader } from '../../src/protocol/reader.js';
import { buildRecordBatch } from '../../src/protocol/records.js';
import { startNode, type RunningNode } from '../helpers/node.js';
import { WireClient } from './wire.js';

let node: RunningNode | undefined;
afterAll(async () => {
  await node?.destroy();
});

const latest = async (c: WireClient, topic: string): Promise<bigint> => {
  const r = await c.call(2, 5, (w) => encodeListOffsetsRequest(w, { replicaId: -1, isolationLevel: 0, topics: [{ name: topic, partitions: [{ partitionIndex: 0, timestamp: -1n }] }] }, 5));
  return decodeListOffsetsResponse(r, 5).topics[0]!.partitions[0]!.offset;
};

it('answers a pending long poll on SIGTERM, exits 0, and restarts cleanly; after SIGKILL acknowledged data is intact', async () => {
  node = await startNode();
  let c = await WireClient.connect(node.port);
  const created = decodeCreateTopicsResponse(await c.call(19, 7, (w) => encodeCreateTopicsRequest(w, { topics: [{ name: 'sd', numPartitions: 1, replicationFactor: 1 }], timeoutMs: 5000 }, 7)), 7);
  expect(created.topics[0]!.errorCode).toBe(0);
  for (let i = 0; i < 3; i++) {
    const batch = buildRecordBatch({ records: [{ value: Buffer.from(`r${i}`) }] });
    const pr = decodeProduceResponse(await c.call(0, 9, (w) => encodeProduceRequest(w, { transactionalId: null, acks: -1, timeoutMs: 5000, topicData: [{ name: 'sd', partitionData: [{ index: 0, records: batch }] }] }, 9)), 9);
    expect(pr.responses[0]!.partitionResponses[0]!.errorCode).toBe(0);
  }
  // A long poll at the log end, then SIGTERM while it waits.
  c.write(c.frame(1, 11, (w) => encodeFetchRequest(w, { replicaId: -1, maxWaitMs: 30_000, minBytes: 1, maxBytes: 1 << 20, topics: [{ topic: 'sd', partitions: [{ partition: 0, fetchOffset: 3n, partitionMaxBytes: 1 << 20 }] }] }, 11)));
  // A fixed wait for the fetch to be parked: the broker tells of a parked fetch only by its answer.
  await new Promise((r) => setTimeout(r, 200));
  const exit = node.stop();
  const raw = await c.next(10_000);
  const fr = decodeFetchResponse(new Reader(raw.body), 11);
  expect(fr.responses[0]!.partitions[0]).toMatchObject({ errorCode: 0, highWatermark: 3n });
  expect(await exit).toBe(0);
  expect(existsSync(join(node.dataDir, '.kafka_cleanshutdown'))).toBe(true);

  node = await node.restart();
  expect(node.logs()).toContain('"cleanShutdown":true');
  c = await WireClient.connect(node.port);
  expect(await latest(c, 'sd')).toBe(3n);
  const batch = buildRecordBatch({ records: [{ value: Buffer.from('last') }] });
  await c.call(0, 9, (w) => encodeProduceRequest(w, { transactionalId: null, acks: -1, timeoutMs: 5000, topicData: [{ name: 'sd', partitionData: [{ index: 0, records: batch }] }] }, 9));
  c.close();

  await node.kill();
  expect(existsSync(join(node.dataDir, '.kafka_cleanshutdown'))).toBe(false);
  node = await node.restart();
  expect(node.logs()).toContain('"cleanShutdown":false');
  c = await WireClient.connect(node.port);
  expect(await latest(c, 'sd')).toBe(4n);
  c.close();
}, 180_000);
