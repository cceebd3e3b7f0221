/**
 * Apache Kafka as the source, a Fjord node process as the destination: a mirror config change that
 * is invalid (a bootstrap entry without a port, a different source cluster id) is rejected and
 * leaves the mirror as it was; changing `bootstrap.servers` to a second address of the same Kafka
 * cluster makes the mirror reconnect through it, and mirroring carries on with no gap and no
 * duplicate (the destination's segments equal the source's byte for byte, offsets included).
 *
 * The second address is a loopback TCP forwarder in front of the broker: a single-node Kafka in
 * KRaft cannot advertise a listener added at run time (advertised.listeners is static there), and
 * the interop launcher picks its own listener port. The forwarder counts the connections it
 * carries, which shows the mirror bootstrapped through the new address.
 */
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, connect, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Kafka, logLevel, type Admin } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KafkaConnection } from '../../src/client/kafka-connection.js';
import { clusterMirrors, type CliRun } from '../helpers/mirror-cli.js';
import { ConfigResourceType } from '../../src/protocol/config-resource-type.js';
import { ErrorCode } from '../../src/protocol/generated/errors.js';
import { encodeIncrementalAlterConfigsRequest } from '../../src/protocol/generated/messages/incremental-alter-configs-request.js';
import { decodeIncrementalAlterConfigsResponse } from '../../src/protocol/generated/messages/incremental-alter-configs-response.js';
import { startNode, type RunningNode } from '../helpers/node.js';
import { startKafkaSource, type KafkaBroker } from './helpers/kafka-source.js';
import { waitFor } from '../helpers/wait.js';

let kafka: KafkaBroker;
let kafkaAdmin: Admin;
let fjord: RunningNode;
let forwarder: Server;
let forwarderPort = 0;
let forwarded = 0;
const sockets = new Set<Socket>();
const work = mkdtempSync(join(tmpdir(), 'fjord-mirror-reconnect-'));
const MIRROR = 'from-kafka';

beforeAll(async () => {
  [kafka, fjord] = await Promise.all([
    startKafkaSource(),
    startNode({ overrides: { 'mirror.failed.retry.initial.backoff.ms': 200, 'mirror.failed.retry.max.backoff.ms': 1000, 'mirror.metadata.refresh.interval.ms': 1000 } }),
  ]);
  kafkaAdmin = new Kafka({ clientId: 'reconnect', brokers: [kafka.bootstrap], logLevel: logLevel.NOTHING }).admin();
  await kafkaAdmin.connect();
  forwarder = createServer((down) => {
    forwarded++;
    const up = connect(kafka.port, '127.0.0.1');
    for (const s of [down, up]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => undefined);
    }
    down.pipe(up).pipe(down);
    down.on('close', () => up.destroy());
    up.on('close', () => down.destroy());
  });
  await new Promise<void>((r) => forwarder.listen(0, '127.0.0.1', r));
  const addr = forwarder.address();
  forwarderPort = typeof addr === 'object' && addr !== null ? addr.port : 0;
}, 120_000);

afterAll(async () => {
  await kafkaAdmin?.disconnect();
  for (const s of sockets) s.destroy();
  forwarder?.close();
  await Promise.all([kafka?.stop(), fjord?.destroy()]);
  rmSync(work, { recursive: true, force: true });
});

const cli = (...argv: string[]): Promise<CliRun> => clusterMirrors(fjord.bootstrap, ...argv);

async function partitions(): Promise<{ topic: string; state: string; lag: number }[]> {
  const r = await cli('--describe', '--mirror', MIRROR, '--json');
  if (r.code !== 0) throw new Error(r.err);
  return JSON.parse(r.out) as never;
}

function segments(dir: string): Buffer {
  const files = readdirSync(dir).filter((f) => f.endsWith('.log')).sort();
  return Buffer.concat(files.map((f) => readFileSync(join(dir, f))));
}

async function produce(topic: string, from: number, count: number): Promise<void> {
  const p = new Kafka({ clientId: 'reconnect', brokers: [kafka.bootstrap], logLevel: logLevel.NOTHING }).producer({ allowAutoTopicCreation: false });
  await p.connect();
  try {
    await p.send({ topic, acks: -1, messages: Array.from({ length: count }, (_, i) => ({ partition: 0, value: `r-${from + i}` })) });
  } finally {
    await p.disconnect();
  }
}

/** IncrementalAlterConfigs SET on the mirror's CLUSTER_MIRROR resource; returns the error code. */
async function alterMirror(name: string, value: string): Promise<{ errorCode: number; errorMessage: string | null }> {
  const c = await KafkaConnection.connect({ host: '127.0.0.1', port: fjord.port, clientId: 'reconnect' });
  try {
    const res = await c.request(
      44,
      1,
      (w) => encodeIncrementalAlterConfigsRequest(w, { resources: [{ resourceType: ConfigResourceType.CLUSTER_MIRROR, resourceName: MIRROR, configs: [{ name, configOperation: 0, value }] }], validateOnly: false }, 1),
      (r) => decodeIncrementalAlterConfigsResponse(r, 1),
    );
    const r = res.responses[0];
    return { errorCode: r?.errorCode ?? -999, errorMessage: r?.errorMessage ?? null };
  } finally {
    c.close();
  }
}

/** The bootstrap the node reports for the mirror (`--list`: name, partitions, state, bootstrap). */
async function listedBootstrap(): Promise<string | undefined> {
  const r = await cli('--list');
  return r.out.split('\n').map((l) => l.trim().split(/\s+/)).find((f) => f[0] === MIRROR)?.[3];
}

describe('Apache Kafka source, bootstrap change', () => {
  it('rejects an invalid config change and reconnects through a new bootstrap address with no gap or duplicate', async () => {
    const topic = 'orders';
    await kafkaAdmin.createTopics({ topics: [{ topic, numPartitions: 1 }], waitForLeaders: true });
    await produce(topic, 0, 20);
    const cfg = join(work, `${MIRROR}.properties`);
    writeFileSync(cfg, `bootstrap.servers=${kafka.bootstrap}\nmirror.fetch.wait.max.ms=100\nmirror.socket.timeout.ms=2000\n`);
    expect((await cli('--create', '--mirror', MIRROR, '--mirror-config', cfg)).code).toBe(0);
    expect((await cli('--start', '--mirror', MIRROR, '--topics', topic)).code).toBe(0);
    const kafkaDir = join(kafka.dataDir, 'logs', `${topic}-0`);
    const fjordDir = join(fjord.dataDir, `${topic}-0`);
    await waitFor('mirrored', async () => (await partitions()).every((p) => p.state === 'MIRRORING' && p.lag === 0));
    await waitFor('segments equal', () => segments(fjordDir).equals(segments(kafkaDir)));

    // Invalid changes are refused and change nothing.
    const noPort = await alterMirror('bootstrap.servers', 'no-port');
    expect(noPort.errorCode).toBe(ErrorCode.INVALID_CONFIG);
    expect(noPort.errorMessage).toMatch(/host:port/);
    expect((await alterMirror('mirror.source.cluster.id', 'some-other-cluster')).errorCode).toBe(ErrorCode.INVALID_CONFIG);
    expect(await listedBootstrap()).toBe(kafka.bootstrap);
    await produce(topic, 20, 10);
    await waitFor('still mirroring after the rejected changes', () => segments(fjordDir).equals(segments(kafkaDir)));
    expect(forwarded).toBe(0);

    // The new address: the mirror reconnects through it and carries on where it was.
    const second = `127.0.0.1:${forwarderPort}`;
    expect(await alterMirror('bootstrap.servers', second)).toEqual({ errorCode: 0, errorMessage: null });
    await produce(topic, 30, 10);
    await waitFor('bootstrapped through the new address', () => forwarded > 0);
    expect(await listedBootstrap()).toBe(second);
    await produce(topic, 40, 10);
    await waitFor('caught up after the change', async () => segments(fjordDir).equals(segments(kafkaDir)) && (await partitions()).every((p) => p.state === 'MIRRORING' && p.lag === 0));

    // Every record once, in order, at the source's offsets.
    const seen: { offset: number; value: string }[] = [];
    const consumer = new Kafka({ clientId: 'reconnect', brokers: [fjord.bootstrap], logLevel: logLevel.NOTHING }).consumer({ groupId: 'reconnect-check' });
    await consumer.connect();
    await consumer.subscribe({ topic, fromBeginning: true });
    await consumer.run({ eachMessage: async ({ message }) => void seen.push({ offset: Number(message.offset), value: message.value?.toString() ?? '' }) });
    await waitFor('read back', () => seen.length >= 50);
    await new Promise((r) => setTimeout(r, 300));
    await consumer.disconnect();
    expect(seen).toEqual(Array.from({ length: 50 }, (_, i) => ({ offset: i, value: `r-${i}` })));
  }, 60_000);
});
