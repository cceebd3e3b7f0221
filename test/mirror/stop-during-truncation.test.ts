/**
 * A stop that arrives while a partition is in LOG_TRUNCATION (KIP-1279 spec §8.6, §8.5). The
 * truncation asks the source first (loop check, last mirrored epoch); when those lookups answer
 * only after the partition went STOPPING → STOPPED and clients wrote to it, the late truncation
 * must leave the now writable log alone: the PID reset barrier and the client writes stay.
 *
 * Apache Kafka is the source, behind a proxy that holds its Metadata requests (the lookup the
 * truncation makes on a Kafka source) until the test lets them through.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMirrorApiHandlers } from '../../src/mirror/mirror-api-handlers.js';
import type { MirrorApiHandlers } from '../../src/mirror/mirror-host.js';
import { ControlRecordType, controlTypeOf } from '../../src/protocol/control-records.js';
import { iterateBatches } from '../../src/protocol/record-batch.js';
import { buildRecordBatch } from '../../src/protocol/records.js';
import { FrameProxy } from './helpers/frame-proxy.js';
import { createSourceTopic, startKafkaSource, type KafkaBroker } from './helpers/kafka-source.js';
import { describedPartition, mirrorRpc, waitFor } from './helpers/mirror-rpc.js';
import { MirrorTestHost } from './helpers/mirror-test-host.js';

const METADATA = 3;
let kafka: KafkaBroker;
let proxy: FrameProxy;
let host: MirrorTestHost;
let mirror: MirrorApiHandlers;
let rpc: ReturnType<typeof mirrorRpc>;
const lines: string[] = [];
const work = mkdtempSync(join(tmpdir(), 'fjord-mirror-stop-trunc-'));

beforeAll(async () => {
  proxy = new FrameProxy();
  await proxy.start();
  kafka = await startKafkaSource({ overrides: { 'advertised.listeners': `PLAINTEXT://${proxy.bootstrap}` } });
  proxy.target(Number(kafka.bootstrap.split(':')[1]));
  host = new MirrorTestHost(work, { 'mirror.state.topic.num.partitions': '1' });
  mirror = await createMirrorApiHandlers(host, { log: (l) => lines.push(l) });
  rpc = mirrorRpc(mirror);
}, 120_000);

afterAll(async () => {
  proxy?.release();
  await mirror?.close();
  await host?.close();
  await proxy?.close();
  await kafka?.stop();
  rmSync(work, { recursive: true, force: true });
});

async function stateOf(topic: string): Promise<string | undefined> {
  return describedPartition(await rpc.describe(['m1']), topic, 0)?.stateValue;
}

describe('a stop during LOG_TRUNCATION', () => {
  it('leaves the stopped, written log alone when the truncation lookups answer late', async () => {
    const topic = 'late-truncation';
    await createSourceTopic(kafka.bootstrap, topic, Array.from({ length: 5 }, (_, i) => `source-${i}`));

    expect((await rpc.create('m1', { 'bootstrap.servers': proxy.bootstrap, 'mirror.fetch.wait.max.ms': '100' })).errorCode).toBe(0);
    expect((await rpc.start('m1', [topic])).topics[0]?.errorCode).toBe(0);
    await waitFor('caught up', () => host.partitionLog(topic, 0)?.logEndOffset === 5);
    expect((await rpc.stop('m1', [topic])).errorCode).toBe(0);
    await waitFor('STOPPED', async () => (await stateOf(topic)) === 'STOPPED');
    // Failed over: clients write to it.
    expect((await host.produce(topic, 0, buildRecordBatch({ records: [{ value: Buffer.from('client-1') }] }))).errorCode).toBe(0);

    // Mirror it again; the truncation's lookup on the source is held in the network.
    proxy.hold([METADATA]);
    const held = proxy.heldRequests;
    const topicId = host.topicIdByName(topic)!;
    expect((await rpc.start('m1', [{ topicName: topic, topicId, numPartitions: 1 }])).topics[0]?.errorCode).toBe(0);
    await waitFor('LOG_TRUNCATION waiting on the source', async () => proxy.heldRequests > held && (await stateOf(topic)) === 'LOG_TRUNCATION');

    // The operator stops it again before the lookup answers; clients write again.
    expect((await rpc.stop('m1', [topic])).errorCode).toBe(0);
    await waitFor('STOPPED again', async () => (await stateOf(topic)) === 'STOPPED', 60_000);
    expect((await host.produce(topic, 0, buildRecordBatch({ records: [{ value: Buffer.from('client-2') }] }))).errorCode).toBe(0);
    const log = host.log(topic, 0);
    const endBefore = log.logEndOffset;
    const from = lines.length;

    // The lookup answers now; the stale truncation runs to its end.
    proxy.release();
    const key = `${topic}-0`;
    await waitFor('the late LOG_TRUNCATION action to end', () => lines.slice(from).some((l) => l.includes(key) && /truncating to|superseded/.test(l)));
    // Let anything it set off settle on the log's queue before looking at it.
    await new Promise((r) => setImmediate(r));

    expect(log.logEndOffset).toBe(endBefore);
    const all = await log.readToBuffer({ fetchOffset: 0, maxOffset: log.logEndOffset, maxBytes: 1 << 20, minOneMessage: true });
    const batches = [...iterateBatches(all.records)];
    expect(batches[0]?.baseOffset).toBe(0);
    const resets = batches.filter((b) => b.isControl && controlTypeOf(b) === ControlRecordType.MIRROR_PID_RESET);
    expect(resets.length).toBeGreaterThanOrEqual(2);
    expect(await stateOf(topic)).toBe('STOPPED');
    expect(mirror.isProduceAllowed(topic, 0)).toBe(true);
  });
});
