/**
 * Multi-process mirroring scenarios: two Fjord node processes on loopback, driven through the
 * `fjord cluster-mirrors` CLI, with kafkajs as the producing client.
 *
 *  - start → byte-identical segments, produce to the mirror topic fails with READ_ONLY_TOPIC;
 *  - stop (failover) → the destination accepts writes;
 *  - failback with a reverse mirror: the old source truncates what the destination never saw
 *    and copies what it wrote after failover; the logs converge byte for byte;
 *  - a mirror loop is detected and refused before the topic is bound (TOPIC_ALREADY_IN_CLUSTER_MIRROR),
 *    so the original source's topic stays writable.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Kafka, logLevel } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KafkaConnection } from '../../src/client/kafka-connection.js';
import { clusterMirrors, type CliRun } from '../helpers/mirror-cli.js';
import { ErrorCode } from '../../src/protocol/generated/errors.js';
import { encodeBumpLeaderEpochsRequest } from '../../src/protocol/generated/messages/bump-leader-epochs-request.js';
import { decodeBumpLeaderEpochsResponse } from '../../src/protocol/generated/messages/bump-leader-epochs-response.js';
import { encodeMetadataRequest } from '../../src/protocol/generated/messages/metadata-request.js';
import { decodeMetadataResponse } from '../../src/protocol/generated/messages/metadata-response.js';
import { encodeProduceRequest } from '../../src/protocol/generated/messages/produce-request.js';
import { decodeProduceResponse } from '../../src/protocol/generated/messages/produce-response.js';
import { buildRecordBatch } from '../../src/protocol/records.js';
import { ROOT, startNode, type RunningNode } from '../helpers/node.js';
import { waitFor } from '../helpers/wait.js';

let a: RunningNode;
let b: RunningNode;
const work = mkdtempSync(join(tmpdir(), 'fjord-mirror-scenarios-'));
const FAST = { 'mirror.failed.retry.initial.backoff.ms': 200, 'mirror.failed.retry.max.backoff.ms': 1000, 'mirror.metadata.refresh.interval.ms': 1000 };

beforeAll(async () => {
  [a, b] = await Promise.all([startNode({ overrides: FAST }), startNode({ overrides: FAST })]);
}, 120_000);

afterAll(async () => {
  await Promise.all([a?.destroy(), b?.destroy()]);
  // A restarted node keeps its data directory on destroy: remove both explicitly.
  for (const n of [a, b]) if (n) rmSync(n.dataDir, { recursive: true, force: true });
  rmSync(work, { recursive: true, force: true });
});

const cli = (node: RunningNode, ...argv: string[]): Promise<CliRun> => clusterMirrors(node.bootstrap, ...argv);

async function describe_(node: RunningNode, mirror: string): Promise<{ topic: string; partition: number; state: string; lag: number; errorMessage: string | null; retryAttempt: number }[]> {
  const r = await cli(node, '--describe', '--mirror', mirror, '--json');
  if (r.code !== 0) throw new Error(r.err);
  return JSON.parse(r.out) as never;
}

async function produce(node: RunningNode, topic: string, values: string[]): Promise<void> {
  const kafka = new Kafka({ clientId: 'scenario', brokers: [node.bootstrap], logLevel: logLevel.NOTHING, retry: { retries: 3 } });
  const p = kafka.producer({ allowAutoTopicCreation: false });
  await p.connect();
  try {
    await p.send({ topic, acks: -1, messages: values.map((value) => ({ partition: 0, value })) });
  } finally {
    await p.disconnect();
  }
}

/** Produce v9 with our own connection, to see the exact error code. */
async function rawProduceError(node: RunningNode, topic: string): Promise<number> {
  const conn = await KafkaConnection.connect({ host: '127.0.0.1', port: node.port, clientId: 'raw' });
  try {
    const batch = buildRecordBatch({ records: [{ value: Buffer.from('should not land') }] });
    const res = await conn.request(
      0,
      9,
      (w) => encodeProduceRequest(w, { transactionalId: null, acks: -1, timeoutMs: 5000, topicData: [{ name: topic, partitionData: [{ index: 0, records: batch }] }] }, 9),
      (r) => decodeProduceResponse(r, 9),
    );
    return res.responses[0]?.partitionResponses[0]?.errorCode ?? -999;
  } finally {
    conn.close();
  }
}

async function createTopic(node: RunningNode, topic: string, partitions = 1): Promise<void> {
  const kafka = new Kafka({ clientId: 'scenario', brokers: [node.bootstrap], logLevel: logLevel.NOTHING });
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({ topics: [{ topic, numPartitions: partitions }], waitForLeaders: true });
  await admin.disconnect();
}

function segments(node: RunningNode, topic: string): Buffer {
  const dir = join(node.dataDir, `${topic}-0`);
  const files = readdirSync(dir).filter((f) => f.endsWith('.log')).sort();
  return Buffer.concat(files.map((f) => readFileSync(join(dir, f))));
}

function mirrorConfig(name: string, source: RunningNode): string {
  const file = join(work, `${name}.properties`);
  // The overlap of fetching and appending is on (loopback alone would leave it off): these
  // scenarios, restarts of either side included, must hold with it.
  writeFileSync(file, `bootstrap.servers=${source.bootstrap}\nmirror.fetch.wait.max.ms=100\nmirror.socket.timeout.ms=2000\nmirror.fetch.pipeline.max.bytes=10485760\n`);
  return file;
}

describe('mirroring between two Fjord nodes', () => {
  it('starts, stops (failover) and fails back with converging logs', async () => {
    const topic = 'ledger';
    await createTopic(a, topic);
    await produce(a, topic, Array.from({ length: 20 }, (_, i) => `a-${i}`));

    // B mirrors A.
    expect((await cli(b, '--create', '--mirror', 'from-a', '--mirror-config', mirrorConfig('from-a', a))).code).toBe(0);
    expect((await cli(b, '--start', '--mirror', 'from-a', '--topics', topic)).code).toBe(0);
    await waitFor('B caught up', async () => (await describe_(b, 'from-a')).some((p) => p.state === 'MIRRORING' && p.lag === 0));
    await waitFor('B segments equal A', () => segments(b, topic).equals(segments(a, topic)));
    expect(await rawProduceError(b, topic)).toBe(ErrorCode.READ_ONLY_TOPIC);

    // Failover: stop on B, B becomes writable; A (the old source) also gets a write B never sees.
    expect((await cli(b, '--stop', '--mirror', 'from-a', '--topics', topic)).code).toBe(0);
    await waitFor('B stopped', async () => (await describe_(b, 'from-a')).every((p) => p.state === 'STOPPED'));
    await produce(b, topic, ['b-after-failover-1', 'b-after-failover-2']);
    await produce(a, topic, ['a-never-mirrored']);
    expect(segments(a, topic).equals(segments(b, topic))).toBe(false);

    // Failback: A mirrors B. A drops its unmirrored record and copies B's post-failover writes.
    expect((await cli(a, '--create', '--mirror', 'from-b', '--mirror-config', mirrorConfig('from-b', b))).code).toBe(0);
    const started = await cli(a, '--start', '--mirror', 'from-b', '--topics', topic);
    expect(started.code, started.err).toBe(0);
    await waitFor('A converged with B', () => segments(a, topic).equals(segments(b, topic)), 45_000);
    const d = await describe_(a, 'from-b');
    expect(d.map((p) => p.state)).toEqual(['MIRRORING']);
    expect(await rawProduceError(a, topic)).toBe(ErrorCode.READ_ONLY_TOPIC);
  });

  it('goes FAILED when the source is down and comes back with no gap and no duplicate', async () => {
    const topic = 'flaky';
    await createTopic(a, topic);
    await produce(a, topic, ['f0', 'f1', 'f2', 'f3', 'f4']);
    expect((await cli(b, '--start', '--mirror', 'from-a', '--topics', topic)).code).toBe(0);
    await waitFor('B mirroring', async () => (await describe_(b, 'from-a')).some((p) => p.topic === topic && p.state === 'MIRRORING' && p.lag === 0));
    await a.stop();
    await waitFor('FAILED while the source is down', async () => {
      const p = (await describe_(b, 'from-a')).find((x) => x.topic === topic);
      return p?.state === 'FAILED' && p.retryAttempt >= 1;
    });
    // A FAILED partition is retried, so between two reads it can be in a retry's state for a
    // moment: the CLI's --failed view is read until it shows the partition, as an operator would.
    await waitFor('--describe --failed lists the partition', async () =>
      /flaky\s+0\s+-\s+-\s+-\s+FAILED\s+MIRRORING\s+\d+\s+/.test((await cli(b, '--describe', '--mirror', 'from-a', '--failed')).out),
    );
    a = await a.restart();
    await produce(a, topic, ['f5', 'f6', 'f7']);
    await waitFor('back to MIRRORING and caught up', () => segments(b, topic).equals(segments(a, topic)), 45_000);
    await waitFor('MIRRORING', async () => (await describe_(b, 'from-a')).some((p) => p.topic === topic && p.state === 'MIRRORING'));
  });

  it('keeps the destination leader epoch above the source epoch of every mirrored batch', async () => {
    const topic = 'epochs';
    await createTopic(a, topic);
    // Raise the source's leader epoch well above anything the destination has (BumpLeaderEpochs
    // on the source node), then write there: the batches carry epoch 41.
    const conn = await KafkaConnection.connect({ host: '127.0.0.1', port: a.port, clientId: 'bump' });
    const md = await conn.request(3, 12, (w) => encodeMetadataRequest(w, { topics: [{ topicId: '00000000-0000-0000-0000-000000000000', name: topic }], allowAutoTopicCreation: false, includeTopicAuthorizedOperations: false }, 12), (r) => decodeMetadataResponse(r, 12));
    const topicId = md.topics[0]!.topicId;
    const bumped = await conn.request(105, 0, (w) => encodeBumpLeaderEpochsRequest(w, { topics: [{ topicId, partitions: [{ partitionIndex: 0, minLeaderEpoch: 40 }] }] }, 0), (r) => decodeBumpLeaderEpochsResponse(r, 0));
    conn.close();
    expect(bumped.topics[0]?.partitions[0]?.errorCode).toBe(0);
    await produce(a, topic, ['e0', 'e1', 'e2']);
    expect((await cli(b, '--start', '--mirror', 'from-a', '--topics', topic)).code).toBe(0);
    await waitFor('mirrored', () => segments(b, topic).length > 0 && segments(b, topic).equals(segments(a, topic)));
    const epochOf = async (node: RunningNode): Promise<number> => {
      const c = await KafkaConnection.connect({ host: '127.0.0.1', port: node.port, clientId: 'epoch' });
      try {
        const m = await c.request(3, 12, (w) => encodeMetadataRequest(w, { topics: [{ topicId: '00000000-0000-0000-0000-000000000000', name: topic }], allowAutoTopicCreation: false, includeTopicAuthorizedOperations: false }, 12), (r) => decodeMetadataResponse(r, 12));
        return m.topics[0]?.partitions[0]?.leaderEpoch ?? -1;
      } finally {
        c.close();
      }
    };
    expect(await epochOf(a)).toBe(41);
    const destEpoch = await epochOf(b);
    // A consumer whose committed position carries epoch 41 finds a partition epoch ≥ 41 here.
    expect(destEpoch).toBeGreaterThanOrEqual(41 + 1);
    expect((await describe_(b, 'from-a')).find((p) => p.topic === topic)?.state).toBe('MIRRORING');
  });

  it('converges byte for byte after bouncing destination and source in turn under load', async () => {
    const topic = 'bounced';
    await createTopic(a, topic);
    expect((await cli(b, '--start', '--mirror', 'from-a', '--topics', topic)).code).toBe(0);
    let written = 0;
    const write = async (round: number): Promise<void> => {
      // A fresh client per round: the source may have just restarted.
      await waitFor(`round ${round} written`, async () => {
        await produce(a, topic, Array.from({ length: 10 }, (_, i) => `round-${round}-${i}`));
        return true;
      });
      written += 10;
    };
    for (let round = 0; round < 16; round++) {
      await write(round);
      if (round === 4) b = await b.restart();
      if (round === 8) a = await a.restart();
      if (round === 12) b = await b.restart();
    }
    expect(written).toBe(160);
    await waitFor('converged after bounces', () => segments(b, topic).equals(segments(a, topic)), 60_000);
    await waitFor('MIRRORING', async () => (await describe_(b, 'from-a')).some((p) => p.topic === topic && p.state === 'MIRRORING' && p.lag === 0));
  });

  it('restarts mirroring in the same direction after a failover by re-copying from the source', async () => {
    const topic = 'again';
    await createTopic(a, topic);
    await produce(a, topic, ['g0', 'g1', 'g2', 'g3', 'g4']);
    expect((await cli(b, '--start', '--mirror', 'from-a', '--topics', topic)).code).toBe(0);
    await waitFor('mirrored', () => segments(b, topic).length > 0 && segments(b, topic).equals(segments(a, topic)));
    expect((await cli(b, '--stop', '--mirror', 'from-a', '--topics', topic)).code).toBe(0);
    await waitFor('stopped', async () => (await describe_(b, 'from-a')).filter((p) => p.topic === topic).every((p) => p.state === 'STOPPED'));
    await produce(b, topic, ['b-only-1', 'b-only-2']);
    await produce(a, topic, ['g5', 'g6', 'g7']);
    // The source holds no last mirrored epoch for us: the destination truncates to 0 and copies again.
    expect((await cli(b, '--start', '--mirror', 'from-a', '--topics', topic)).code).toBe(0);
    await waitFor('re-copied from the source', () => segments(b, topic).equals(segments(a, topic)), 45_000);
    expect(await rawProduceError(b, topic)).toBe(ErrorCode.READ_ONLY_TOPIC);
  });

  it('answers through the real fjord binary', () => {
    const r = spawnSync(process.execPath, [join(ROOT, 'bin/fjord.js'), 'cluster-mirrors', '--bootstrap-server', b.bootstrap, '--list'], { encoding: 'utf8', timeout: 30_000 });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toMatch(new RegExp(`^from-a\\s+\\d+\\s+\\S+\\s+${a.bootstrap.replace(/\./g, '\\.')}$`, 'm'));
    const bad = spawnSync(process.execPath, [join(ROOT, 'bin/fjord.js'), 'cluster-mirrors', '--list'], { encoding: 'utf8', timeout: 30_000 });
    expect(bad.status).toBe(2);
  });

  it('detects a mirror loop and refuses it', async () => {
    const topic = 'looped';
    await createTopic(a, topic);
    await produce(a, topic, ['x', 'y']);
    expect((await cli(b, '--start', '--mirror', 'from-a', '--topics', topic)).code).toBe(0);
    await waitFor('B mirroring', async () => (await describe_(b, 'from-a')).some((p) => p.topic === topic && p.state === 'MIRRORING'));
    // A now tries to mirror the same topic back from B while B still mirrors it from A: refused
    // before binding, so A's topic, the one B copies, stays writable.
    const refused = await cli(a, '--start', '--mirror', 'from-b', '--topics', topic);
    expect(refused.code).toBe(1);
    expect(refused.err).toMatch(/mirror loop/);
    const lines = (await describe_(a, 'from-b')).filter((x) => x.topic === topic);
    expect(lines).toEqual([]);
    expect(await rawProduceError(a, topic)).toBe(ErrorCode.NONE);
  });
});
