/** The node drives compaction and keeps log start offsets across restarts (SIGTERM and SIGKILL). */
import { afterAll, expect, it } from 'vitest';
import { encodeCreateTopicsRequest } from '../../src/protocol/generated/messages/create-topics-request.js';
import { decodeCreateTopicsResponse } from '../../src/protocol/generated/messages/create-topics-response.js';
import { encodeDeleteRecordsRequest } from '../../src/protocol/generated/messages/delete-records-request.js';
import { decodeDeleteRecordsResponse } from '../../src/protocol/generated/messages/delete-records-response.js';
import { encodeFetchRequest } from '../../src/protocol/generated/messages/fetch-request.js';
import { decodeFetchResponse } from '../../src/protocol/generated/messages/fetch-response.js';
import { encodeListOffsetsRequest } from '../../src/protocol/generated/messages/list-offsets-request.js';
import { decodeListOffsetsResponse } from '../../src/protocol/generated/messages/list-offsets-response.js';
import { encodeProduceRequest } from '../../src/protocol/generated/messages/produce-request.js';
import { decodeProduceResponse } from '../../src/protocol/generated/messages/produce-response.js';
import { iterateBatches } from '../../src/protocol/record-batch.js';
import { buildRecordBatch, decodeRecords } from '../../src/protocol/records.js';
import { startNode, type RunningNode } from '../helpers/node.js';
import { waitFor } from '../helpers/wait.js';
import { WireClient } from './wire.js';

const nodes: RunningNode[] = [];
afterAll(async () => {
  for (const n of nodes.reverse()) await n.destroy();
});

async function createTopic(c: WireClient, name: string, configs: { name: string; value: string }[] = []): Promise<void> {
  const r = await c.call(19, 7, (w) => encodeCreateTopicsRequest(w, { topics: [{ name, numPartitions: 1, replicationFactor: 1, configs }], timeoutMs: 5000 }, 7));
  expect(decodeCreateTopicsResponse(r, 7).topics[0]!.errorCode).toBe(0);
}

async function produce(c: WireClient, topic: string, key: string | null, value: string): Promise<void> {
  const batch = buildRecordBatch({ records: [{ key: key === null ? null : Buffer.from(key), value: Buffer.from(value) }] });
  const pr = decodeProduceResponse(await c.call(0, 9, (w) => encodeProduceRequest(w, { transactionalId: null, acks: -1, timeoutMs: 5000, topicData: [{ name: topic, partitionData: [{ index: 0, records: batch }] }] }, 9)), 9);
  expect(pr.responses[0]!.partitionResponses[0]!.errorCode).toBe(0);
}

async function listOffset(c: WireClient, topic: string, timestamp: bigint): Promise<bigint> {
  const r = await c.call(2, 5, (w) => encodeListOffsetsRequest(w, { replicaId: -1, isolationLevel: 0, topics: [{ name: topic, partitions: [{ partitionIndex: 0, timestamp }] }] }, 5));
  const p = decodeListOffsetsResponse(r, 5).topics[0]!.partitions[0]!;
  expect(p.errorCode).toBe(0);
  return p.offset;
}

/** Every record from offset 0 to the end, as [offset, key, value]. */
async function readAll(c: WireClient, topic: string): Promise<[number, string, string][]> {
  const out: [number, string, string][] = [];
  let next = 0n;
  for (;;) {
    const fr = decodeFetchResponse(
      await c.call(1, 11, (w) => encodeFetchRequest(w, { replicaId: -1, maxWaitMs: 0, minBytes: 0, maxBytes: 1 << 20, topics: [{ topic, partitions: [{ partition: 0, fetchOffset: next, partitionMaxBytes: 1 << 20 }] }] }, 11)),
      11,
    );
    const p = fr.responses[0]!.partitions[0]!;
    expect(p.errorCode).toBe(0);
    const batches = [...iterateBatches(p.records ?? Buffer.alloc(0))];
    if (batches.length === 0) return out;
    for (const b of batches) {
      for (const r of decodeRecords(b)) out.push([r.offset, r.key?.toString() ?? '', r.value?.toString() ?? '']);
      next = BigInt(b.baseOffset + b.lastOffsetDelta + 1);
    }
  }
}

it('compacts a cleanup.policy=compact topic in the background, keeping the latest value per key', async () => {
  const node = await startNode({ overrides: { 'log.cleaner.backoff.ms': 200 } });
  nodes.push(node);
  const c = await WireClient.connect(node.port);
  await createTopic(c, 'compacted', [
    { name: 'cleanup.policy', value: 'compact' },
    // Kafka 4.x's smallest segment (1 MiB): 30 values of 40 kB roll a segment for the cleaner.
    { name: 'segment.bytes', value: '1048576' },
    { name: 'min.cleanable.dirty.ratio', value: '0.01' },
  ]);
  for (let i = 0; i < 30; i++) await produce(c, 'compacted', `k${i % 3}`, `v${i}-${'x'.repeat(40_000)}`);
  const before = await readAll(c, 'compacted');
  expect(before).toHaveLength(30);
  let after = before;
  await waitFor('the cleaner to compact the log', async () => (after = await readAll(c, 'compacted')).length < 30, 30_000, 300);
  expect(after.length).toBeLessThan(30);
  // The latest value of each key survives at its original offset; offsets stay increasing.
  const latest = new Map<string, [number, string]>();
  for (const [o, k, v] of before) latest.set(k, [o, v]);
  for (const [k, [o, v]] of latest) expect(after).toContainEqual([o, k, v]);
  expect(after.map((x) => x[0])).toEqual([...after.map((x) => x[0])].sort((a, b) => a - b));
  // The cleaner logs after it swaps the segments in, so the line can trail the compacted read.
  await waitFor("the cleaner's 'compacted log' line", () => node.logs().includes('compacted log'), 10_000, 50);
  expect(node.logs()).toContain('compacted log');
  c.close();
}, 60_000);

it('keeps a DeleteRecords log start inside a segment across SIGTERM and SIGKILL restarts', async () => {
  let node = await startNode();
  nodes.push(node);
  let c = await WireClient.connect(node.port);
  await createTopic(c, 'trimmed');
  for (let i = 0; i < 10; i++) await produce(c, 'trimmed', null, `r${i}`);
  const dr = decodeDeleteRecordsResponse(
    await c.call(21, 2, (w) => encodeDeleteRecordsRequest(w, { topics: [{ name: 'trimmed', partitions: [{ partitionIndex: 0, offset: 6n }] }], timeoutMs: 5000 }, 2)),
    2,
  );
  expect(dr.topics[0]!.partitions[0]).toMatchObject({ errorCode: 0, lowWatermark: 6n });
  expect(await listOffset(c, 'trimmed', -2n)).toBe(6n);
  c.close();

  expect(await node.stop()).toBe(0);
  node = await node.restart();
  nodes.push(node);
  c = await WireClient.connect(node.port);
  expect(await listOffset(c, 'trimmed', -2n)).toBe(6n);
  const fetchedFrom6 = decodeFetchResponse(
    await c.call(1, 11, (w) => encodeFetchRequest(w, { replicaId: -1, maxWaitMs: 0, minBytes: 0, maxBytes: 1 << 20, topics: [{ topic: 'trimmed', partitions: [{ partition: 0, fetchOffset: 6n, partitionMaxBytes: 1 << 20 }] }] }, 11)),
    11,
  ).responses[0]!.partitions[0]!;
  expect(fetchedFrom6).toMatchObject({ errorCode: 0, logStartOffset: 6n });
  expect([...iterateBatches(fetchedFrom6.records!)].flatMap((b) => decodeRecords(b).map((r) => r.value!.toString()))).toEqual(['r6', 'r7', 'r8', 'r9']);

  // Move it again, then SIGKILL straight after the answer.
  const dr2 = decodeDeleteRecordsResponse(
    await c.call(21, 2, (w) => encodeDeleteRecordsRequest(w, { topics: [{ name: 'trimmed', partitions: [{ partitionIndex: 0, offset: 8n }] }], timeoutMs: 5000 }, 2)),
    2,
  );
  expect(dr2.topics[0]!.partitions[0]).toMatchObject({ errorCode: 0, lowWatermark: 8n });
  c.close();
  await node.kill();
  node = await node.restart();
  nodes.push(node);
  expect(node.logs()).toContain('"cleanShutdown":false');
  c = await WireClient.connect(node.port);
  expect(await listOffset(c, 'trimmed', -2n)).toBe(8n);
  expect(await listOffset(c, 'trimmed', -1n)).toBe(10n);
  c.close();
}, 60_000);
