/**
 * The mirroring control plane end to end, every call through the RPC handlers and the generated
 * wire codecs, with a real Apache Kafka broker as the source and real partition logs as the
 * destination: create (with cluster-id resolution and validation), start (topic created with the
 * source's id and partition count), byte-identical mirroring, read-only guard, pause/resume,
 * deletion refused while mirroring, the STOPPING sequence (LME, epoch bump, MIRROR_PID_RESET),
 * writable after stop, delete, config changes, and a deleted source topic.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CompressionTypes, Kafka, logLevel, type Admin } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiHandler, RequestContext } from '../../src/server/api-handler.js';
import { createMirrorApiHandlers } from '../../src/mirror/mirror-api-handlers.js';
import type { MirrorApiHandlers } from '../../src/mirror/mirror-host.js';
import { ApiKey } from '../../src/protocol/generated/api-table.js';
import { ErrorCode } from '../../src/protocol/generated/errors.js';
import { encodeCreateClusterMirrorRequest, type CreateClusterMirrorRequestInput } from '../../src/protocol/generated/messages/create-cluster-mirror-request.js';
import { decodeCreateClusterMirrorResponse } from '../../src/protocol/generated/messages/create-cluster-mirror-response.js';
import { encodeDeleteClusterMirrorRequest } from '../../src/protocol/generated/messages/delete-cluster-mirror-request.js';
import { decodeDeleteClusterMirrorResponse } from '../../src/protocol/generated/messages/delete-cluster-mirror-response.js';
import { encodeDescribeClusterMirrorsRequest } from '../../src/protocol/generated/messages/describe-cluster-mirrors-request.js';
import { decodeDescribeClusterMirrorsResponse } from '../../src/protocol/generated/messages/describe-cluster-mirrors-response.js';
import { encodeListClusterMirrorsRequest } from '../../src/protocol/generated/messages/list-cluster-mirrors-request.js';
import { decodeListClusterMirrorsResponse } from '../../src/protocol/generated/messages/list-cluster-mirrors-response.js';
import { encodePauseMirrorTopicsRequest } from '../../src/protocol/generated/messages/pause-mirror-topics-request.js';
import { decodePauseMirrorTopicsResponse } from '../../src/protocol/generated/messages/pause-mirror-topics-response.js';
import { encodeReadMirrorStatesRequest } from '../../src/protocol/generated/messages/read-mirror-states-request.js';
import { decodeReadMirrorStatesResponse } from '../../src/protocol/generated/messages/read-mirror-states-response.js';
import { encodeResumeMirrorTopicsRequest } from '../../src/protocol/generated/messages/resume-mirror-topics-request.js';
import { decodeResumeMirrorTopicsResponse } from '../../src/protocol/generated/messages/resume-mirror-topics-response.js';
import { encodeStartMirrorTopicsRequest } from '../../src/protocol/generated/messages/start-mirror-topics-request.js';
import { decodeStartMirrorTopicsResponse } from '../../src/protocol/generated/messages/start-mirror-topics-response.js';
import { encodeStopMirrorTopicsRequest } from '../../src/protocol/generated/messages/stop-mirror-topics-request.js';
import { decodeStopMirrorTopicsResponse } from '../../src/protocol/generated/messages/stop-mirror-topics-response.js';
import { ControlRecordType, controlTypeOf } from '../../src/protocol/control-records.js';
import { iterateBatches } from '../../src/protocol/record-batch.js';
import { buildRecordBatch } from '../../src/protocol/records.js';
import { Reader } from '../../src/protocol/reader.js';
import { Writer } from '../../src/protocol/writer.js';
import { KafkaClient } from '../../src/client/kafka-client.js';
import { startKafkaSource as startKafkaBroker, type KafkaBroker } from './helpers/kafka-source.js';
import { MirrorTestHost } from './helpers/mirror-test-host.js';
import { waitFor } from '../helpers/wait.js';

let kafka: KafkaBroker;
let kafkaClient: Kafka;
let admin: Admin;
let host: MirrorTestHost;
let mirror: MirrorApiHandlers;
const work = mkdtempSync(join(tmpdir(), 'fjord-mirror-control-'));
const ZERO = '00000000-0000-0000-0000-000000000000';

const ctx: RequestContext = {
  apiKey: 0,
  apiVersion: 0,
  correlationId: 1,
  clientId: 'test',
  connectionId: 'c1',
  principal: 'User:ANONYMOUS',
  clientAddress: '127.0.0.1',
  signal: new AbortController().signal,
};

/** Encodes a request, runs the handler, and decodes the encoded response: the whole wire path. */
async function call<Req, Res>(apiKey: number, encode: (w: Writer, m: Req, v: number) => void, req: Req, decode: (r: Reader, v: number) => Res): Promise<Res> {
  const h = mirror.handlers.find((x) => x.apiKey === apiKey) as ApiHandler | undefined;
  if (h === undefined) throw new Error(`no handler for ${apiKey}`);
  const w = new Writer();
  encode(w, req, 0);
  const decoded = h.decode(new Reader(w.toBuffer()), 0);
  const res = await h.handle({ ...ctx, apiKey }, decoded);
  const out = new Writer();
  h.encode(out, res, 0);
  return decode(new Reader(out.toBuffer()), 0);
}

const createMirror = (req: CreateClusterMirrorRequestInput) => call(ApiKey.CreateClusterMirror, encodeCreateClusterMirrorRequest, req, decodeCreateClusterMirrorResponse);
const start = (mirrorName: string, topics: string[]) =>
  call(ApiKey.StartMirrorTopics, encodeStartMirrorTopicsRequest, { mirrorName, topics: topics.map((topicName) => ({ topicName, topicId: ZERO, numPartitions: 0 })), stateValidationOffset: -1n }, decodeStartMirrorTopicsResponse);
const stop = (mirrorName: string, topics: string[]) =>
  call(ApiKey.StopMirrorTopics, encodeStopMirrorTopicsRequest, { mirrorName, topics: topics.map((topicName) => ({ topicName })), stateValidationOffset: -1n }, decodeStopMirrorTopicsResponse);
const pause = (mirrorName: string, topics: string[]) =>
  call(ApiKey.PauseMirrorTopics, encodePauseMirrorTopicsRequest, { mirrorName, topics: topics.map((topicName) => ({ topicName })), stateValidationOffset: -1n }, decodePauseMirrorTopicsResponse);
const resume = (mirrorName: string, topics: string[]) =>
  call(ApiKey.ResumeMirrorTopics, encodeResumeMirrorTopicsRequest, { mirrorName, topics: topics.map((topicName) => ({ topicName })), stateValidationOffset: -1n }, decodeResumeMirrorTopicsResponse);
const del = (mirrorName: string) => call(ApiKey.DeleteClusterMirror, encodeDeleteClusterMirrorRequest, { mirrorName, stateValidationOffset: -1n }, decodeDeleteClusterMirrorResponse);
const describeMirrors = (names: string[]) =>
  call(ApiKey.DescribeClusterMirrors, encodeDescribeClusterMirrorsRequest, { mirrorNames: names, includeAuthorizedOperations: false, clusterId: null, lastMirrorEpochLookups: [] }, decodeDescribeClusterMirrorsResponse);

function states(d: Awaited<ReturnType<typeof describeMirrors>>, topic: string): string[] {
  return d.mirrors.flatMap((m) => m.topics.filter((t) => t.topicName === topic).flatMap((t) => t.partitions.map((p) => p.stateValue)));
}

async function produce(topic: string, partition: number, batches: number, perBatch: number): Promise<void> {
  const producer = kafkaClient.producer({ allowAutoTopicCreation: false });
  await producer.connect();
  try {
    for (let b = 0; b < batches; b++) {
      const messages = Array.from({ length: perBatch }, (_, i) => ({ partition, value: `v-${b}-${i}`.padEnd(64, '.') }));
      await producer.send({ topic, messages, compression: b % 2 === 0 ? CompressionTypes.GZIP : CompressionTypes.None, acks: -1 });
    }
  } finally {
    await producer.disconnect();
  }
}

beforeAll(async () => {
  kafka = await startKafkaBroker();
  kafkaClient = new Kafka({ clientId: 'mirror-control-test', brokers: [kafka.bootstrap], logLevel: logLevel.NOTHING });
  admin = kafkaClient.admin();
  await admin.connect();
  host = new MirrorTestHost(work, { 'mirror.state.topic.num.partitions': '3', 'mirror.failed.retry.initial.backoff.ms': '200' });
  mirror = await createMirrorApiHandlers(host);
}, 120_000);

afterAll(async () => {
  await mirror?.close();
  await host?.close();
  await admin?.disconnect();
  await kafka?.stop();
  rmSync(work, { recursive: true, force: true });
});

describe('cluster mirroring control plane, Apache Kafka as the source', () => {
  it('validates CreateClusterMirror and resolves the source cluster id', async () => {
    expect((await createMirror({ mirrorName: 'bad/name', config: [{ name: 'bootstrap.servers', value: kafka.bootstrap }] })).errorCode).toBe(ErrorCode.INVALID_REQUEST);
    expect((await createMirror({ mirrorName: 'm1', config: [{ name: 'bootstrap.servers', value: kafka.bootstrap }, { name: 'no.such.key', value: 'x' }] })).errorCode).toBe(ErrorCode.INVALID_CONFIG);
    expect((await createMirror({ mirrorName: 'm1', config: [{ name: 'request.timeout.ms', value: 'soon' }, { name: 'bootstrap.servers', value: kafka.bootstrap }] })).errorCode).toBe(ErrorCode.INVALID_CONFIG);
    expect((await createMirror({ mirrorName: 'm1', config: [] })).errorCode).toBe(ErrorCode.INVALID_CONFIG);
    const created = await createMirror({ mirrorName: 'm1', config: [{ name: 'bootstrap.servers', value: kafka.bootstrap }, { name: 'mirror.fetch.wait.max.ms', value: '100' }] });
    expect(created.errorCode).toBe(0);
    expect(host.mirrorConfigs().get('m1')?.get('mirror.source.cluster.id')).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect((await createMirror({ mirrorName: 'm1', config: [{ name: 'bootstrap.servers', value: kafka.bootstrap }] })).errorCode).toBe(ErrorCode.CLUSTER_MIRROR_ALREADY_EXISTS);
    const list = await call(ApiKey.ListClusterMirrors, encodeListClusterMirrorsRequest, { includeTopicNames: true }, decodeListClusterMirrorsResponse);
    expect(list.mirrors.map((m) => [m.mirrorName, m.sourceBootstrap, m.topicCount])).toEqual([['m1', kafka.bootstrap, 0]]);
  });

  it('starts, mirrors byte for byte, pauses, resumes, refuses deletion, stops and deletes', async () => {
    const topic = 'orders';
    await admin.createTopics({ topics: [{ topic, numPartitions: 2, replicationFactor: 1 }], waitForLeaders: true });
    await produce(topic, 0, 4, 10);
    await produce(topic, 1, 3, 7);
    const source = new KafkaClient({ bootstrapServers: [kafka.bootstrap] });
    const sourceId = (await source.metadata([topic])).topics[0]?.topicId;
    source.close();

    const started = await start('m1', [topic]);
    expect(started.topics).toEqual([{ name: topic, errorCode: 0, errorMessage: null }]);
    expect(host.partitionCount(topic)).toBe(2);
    expect(host.topicIdByName(topic)).toBe(sourceId);
    await waitFor('catch-up', () => host.log(topic, 0).logEndOffset === 40 && host.log(topic, 1).logEndOffset === 21);
    await waitFor('MIRRORING', async () => states(await describeMirrors(['m1']), topic).every((s) => s === 'MIRRORING'));
    for (const p of [0, 1]) {
      const ours = readFileSync(join(work, `${topic}-${p}`, '00000000000000000000.log'));
      const theirs = readFileSync(join(kafka.dataDir, 'logs', `${topic}-${p}`, '00000000000000000000.log'));
      expect(ours.equals(theirs), `partition ${p} bytes`).toBe(true);
    }
    expect(mirror.isProduceAllowed(topic, 0)).toBe(false);
    const desc = await describeMirrors(['m1']);
    const p0 = desc.mirrors[0]?.topics[0]?.partitions.find((p) => p.partitionIndex === 0);
    expect(p0).toMatchObject({ sourceOffset: 40n, destinationOffset: 40n, lag: 0n, stateValue: 'MIRRORING' });

    // Pause: read-only, copies nothing; resume catches up.
    expect((await pause('m1', [topic])).errorCode).toBe(0);
    await waitFor('PAUSED', async () => states(await describeMirrors(['m1']), topic).every((s) => s === 'PAUSED'));
    await produce(topic, 0, 1, 5);
    await new Promise((r) => setTimeout(r, 800));
    expect(host.log(topic, 0).logEndOffset).toBe(40);
    expect(mirror.isProduceAllowed(topic, 0)).toBe(false);
    expect((await pause('m1', [topic])).errorCode).toBe(0); // already paused: no-op
    expect((await resume('m1', [topic])).errorCode).toBe(0);
    await waitFor('resumed', () => host.log(topic, 0).logEndOffset === 45);

    // Delete refused while a topic is not stopped.
    expect((await del('m1')).errorCode).toBe(ErrorCode.CLUSTER_MIRROR_NOT_EMPTY);
    expect((await resume('m1', [topic])).errorCode).toBe(0); // mirroring: no-op

    // Stop: the STOPPING sequence, then writable.
    const epochBefore = host.leaderEpoch(topic, 0)!;
    expect((await stop('m1', [topic])).errorCode).toBe(0);
    await waitFor('STOPPED', async () => states(await describeMirrors(['m1']), topic).every((s) => s === 'STOPPED'));
    expect(mirror.isProduceAllowed(topic, 0)).toBe(true);
    const log = host.log(topic, 0);
    expect(log.logEndOffset).toBe(46); // the PID reset barrier took offset 45
    const tail = await log.readToBuffer({ fetchOffset: 45, maxOffset: 46, maxBytes: 1 << 20, minOneMessage: true });
    const last = [...iterateBatches(tail.records)].pop()!;
    expect(last.isControl).toBe(true);
    expect(controlTypeOf(last)).toBe(ControlRecordType.MIRROR_PID_RESET);
    // LME = the source epoch of the mirrored data (0); the destination epoch moved past it.
    expect(host.leaderEpoch(topic, 0)).toBeGreaterThan(Math.max(0, epochBefore - 1));
    expect(host.leaderEpoch(topic, 0)).toBeGreaterThanOrEqual(1);
    expect(last.partitionLeaderEpoch).toBe(host.leaderEpoch(topic, 0));
    const read = await call(
      ApiKey.ReadMirrorStates,
      encodeReadMirrorStatesRequest,
      { mirrorName: 'm1', topics: [{ name: topic, partitions: [{ partitionIndex: 0 }] }] },
      decodeReadMirrorStatesResponse,
    );
    expect(read.topics[0]?.partitions[0]).toMatchObject({ state: 6, lastMirrorEpoch: 0, errorCode: 0 });
    const w = await host.produce(topic, 0, buildRecordBatch({ records: [{ value: Buffer.from('after failover') }] }));
    expect(w).toMatchObject({ errorCode: 0, baseOffset: 46 });
    expect((await stop('m1', [topic])).errorCode).toBe(0); // already stopped: no-op
    expect((await pause('m1', [topic])).errorCode).toBe(ErrorCode.MIRROR_TOPIC_BEING_STOPPED);
    expect((await resume('m1', [topic])).errorCode).toBe(ErrorCode.MIRROR_TOPIC_NOT_PAUSED);

    // Start-side validation on other mirrors and topics.
    expect((await stop('nope', [topic])).errorCode).toBe(ErrorCode.UNKNOWN_CLUSTER_MIRROR);
    expect((await stop('m1', ['no-such-topic'])).errorCode).toBe(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
    await host.createTopic('local-only', 1);
    expect((await stop('m1', ['local-only'])).errorCode).toBe(ErrorCode.TOPIC_NOT_IN_CLUSTER_MIRROR);
  });

  it('aborts open transactions and writes the PID reset barrier when stopping', async () => {
    const topic = 'payments';
    await admin.createTopics({ topics: [{ topic, numPartitions: 1, replicationFactor: 1 }], waitForLeaders: true });
    const committed = kafkaClient.producer({ transactionalId: 'tx-done', maxInFlightRequests: 1, idempotent: true });
    await committed.connect();
    const t1 = await committed.transaction();
    await t1.send({ topic, messages: [{ partition: 0, value: 'a' }, { partition: 0, value: 'b' }] });
    await t1.commit();
    await committed.disconnect();
    const open = kafkaClient.producer({ transactionalId: 'tx-open', maxInFlightRequests: 1, idempotent: true });
    await open.connect();
    const t2 = await open.transaction();
    await t2.send({ topic, messages: [{ partition: 0, value: 'never committed' }] });
    // Source: 2 records + COMMIT marker + 1 open transactional record = log end 4.
    expect((await start('m1', [topic])).errorCode).toBe(0);
    // The high watermark follows the log end once the mirrored append is flushed.
    await waitFor('copy', () => host.partitionLog(topic, 0)?.logEndOffset === 4 && host.partitionLog(topic, 0)?.highWatermark === 4);
    const log = host.log(topic, 0);
    expect(log.ongoingTransactions().length).toBe(1);
    expect(log.lastStableOffset).toBe(3); // the open transaction pins the LSO
    expect((await stop('m1', [topic])).errorCode).toBe(0);
    await waitFor('STOPPED', async () => states(await describeMirrors(['m1']), topic)[0] === 'STOPPED');
    const tail = await log.readToBuffer({ fetchOffset: 4, maxOffset: log.logEndOffset, maxBytes: 1 << 20, minOneMessage: true });
    const batches = [...iterateBatches(tail.records)];
    expect(batches.map((b) => [b.baseOffset, b.isControl, b.isTransactional, controlTypeOf(b)])).toEqual([
      [4, true, true, ControlRecordType.ABORT],
      [5, true, false, ControlRecordType.MIRROR_PID_RESET],
    ]);
    expect(log.ongoingTransactions()).toEqual([]);
    expect(log.lastStableOffset).toBe(log.logEndOffset); // read_committed consumers can move on
    expect(log.producerStates()).toEqual([]); // the barrier cleared all producer state
    await t2.abort().catch(() => undefined);
    await open.disconnect();
  });

  it('refuses a start whose local topic has another topic id', async () => {
    await admin.createTopics({ topics: [{ topic: 'clash', numPartitions: 1, replicationFactor: 1 }], waitForLeaders: true });
    await host.createTopic('clash', 1);
    const r = await start('m1', ['clash']);
    expect(r.topics[0]?.errorCode).toBe(ErrorCode.INCONSISTENT_TOPIC_ID);
  });

  it('marks partitions FAILED, non-retryable, when the source topic is deleted', async () => {
    const topic = 'ephemeral';
    await admin.createTopics({ topics: [{ topic, numPartitions: 1, replicationFactor: 1 }], waitForLeaders: true });
    await produce(topic, 0, 1, 3);
    expect((await start('m1', [topic])).errorCode).toBe(0);
    await waitFor('copy', () => host.partitionLog(topic, 0)?.logEndOffset === 3);
    await admin.deleteTopics({ topics: [topic] });
    await waitFor('FAILED', async () => states(await describeMirrors(['m1']), topic)[0] === 'FAILED');
    const p = (await describeMirrors(['m1'])).mirrors[0]?.topics.find((t) => t.topicName === topic)?.partitions[0];
    expect(p).toMatchObject({ retryAttempt: -1, errorMessage: 'The source topic is deleted.' });
    expect(mirror.isProduceAllowed(topic, 0)).toBe(false);
    // A FAILED topic can still be stopped (failover away from a broken source).
    expect((await stop('m1', [topic])).errorCode).toBe(0);
    await waitFor('STOPPED', async () => states(await describeMirrors(['m1']), topic)[0] === 'STOPPED');
  });

  it('rejects invalid config changes and applies valid ones', async () => {
    expect((await mirror.alterMirrorConfig('m1', [{ name: 'bootstrap.servers', op: 0, value: 'no-port' }], false)).errorCode).toBe(ErrorCode.INVALID_CONFIG);
    expect((await mirror.alterMirrorConfig('m1', [{ name: 'mirror.source.cluster.id', op: 0, value: 'other' }], false)).errorCode).toBe(ErrorCode.INVALID_CONFIG);
    expect((await mirror.alterMirrorConfig('zz', [{ name: 'client.id', op: 0, value: 'x' }], false)).errorCode).toBe(ErrorCode.UNKNOWN_CLUSTER_MIRROR);
    expect((await mirror.alterMirrorConfig('m1', [{ name: 'client.id', op: 0, value: 'renamed' }], false)).errorCode).toBe(0);
    const entries = mirror.describeMirrorConfig('m1')!;
    expect(entries.find((e) => e.name === 'client.id')).toMatchObject({ value: 'renamed', isDefault: false });
    expect(entries.find((e) => e.name === 'mirror.groups.include')).toMatchObject({ value: '.*', isDefault: true });
    expect(mirror.describeMirrorConfig('zz')).toBeNull();
  });

  it('resumes persisted states after a restart of the mirroring side, without truncating', async () => {
    const topic = 'resumable';
    await admin.createTopics({ topics: [{ topic, numPartitions: 1, replicationFactor: 1 }], waitForLeaders: true });
    await produce(topic, 0, 2, 5);
    expect((await start('m1', [topic])).errorCode).toBe(0);
    await waitFor('copy', () => host.partitionLog(topic, 0)?.logEndOffset === 10);
    await waitFor('MIRRORING', async () => states(await describeMirrors(['m1']), topic)[0] === 'MIRRORING');
    await mirror.close();
    await produce(topic, 0, 1, 5);
    const transitions: string[] = [];
    mirror = await createMirrorApiHandlers(host, { log: (m) => transitions.push(m) });
    await waitFor('caught up after restart', () => host.partitionLog(topic, 0)?.logEndOffset === 15);
    const mine = transitions.filter((t) => t.includes(` ${topic}-0:`));
    expect(mine).toEqual([`mirror m1 ${topic}-0: MIRRORING -> MIRRORING`]);
    // The stopped topic stayed stopped and writable.
    expect(states(await describeMirrors(['m1']), 'orders')).toEqual(['STOPPED', 'STOPPED']);
    expect(mirror.isProduceAllowed('orders', 0)).toBe(true);
    expect(mirror.isProduceAllowed(topic, 0)).toBe(false);
    expect((await stop('m1', [topic])).errorCode).toBe(0);
    await waitFor('STOPPED', async () => states(await describeMirrors(['m1']), topic)[0] === 'STOPPED');
  });

  it('deletes a mirror whose topics are all stopped, and tombstones its state', async () => {
    expect((await del('m1')).errorCode).toBe(0);
    const list = await call(ApiKey.ListClusterMirrors, encodeListClusterMirrorsRequest, { includeTopicNames: true }, decodeListClusterMirrorsResponse);
    expect(list.mirrors).toEqual([]);
    expect(host.mirrorTopicBindings()).toEqual([]);
    expect(mirror.isProduceAllowed('orders', 0)).toBe(true);
    const read = await call(
      ApiKey.ReadMirrorStates,
      encodeReadMirrorStatesRequest,
      { mirrorName: 'm1', topics: [{ name: 'orders', partitions: [{ partitionIndex: 0 }] }] },
      decodeReadMirrorStatesResponse,
    );
    expect(read.topics[0]?.partitions[0]).toMatchObject({ state: -1, lastMirrorEpoch: -1 });
  });
});
