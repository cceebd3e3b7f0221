/**
 * Epoch bump at failover (KIP-1279 §9.4, §8.5): a consumer group on the source commits an offset
 * whose committed leader epoch is the source's high partition epoch (41); group-offset sync carries
 * offset and epoch to the destination; after the mirror is stopped, consumers of the same group
 * resume on the destination. The Java consumer takes the committed epoch as the partition's last
 * seen epoch and ignores metadata with a lower one, so a destination epoch below 41 leaves it
 * polling without records (seen: 0 records in 12 s against epoch 0, 6..9 in about 1 s once the
 * committed epoch is not above the partition's). It must get the records after the committed
 * offset, promptly, and without an offset reset (auto.offset.reset=none / error).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Kafka, logLevel } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KafkaConnection } from '../../src/client/kafka-connection.js';
import { clusterMirrors, type CliRun } from '../helpers/mirror-cli.js';
import { encodeBumpLeaderEpochsRequest } from '../../src/protocol/generated/messages/bump-leader-epochs-request.js';
import { decodeBumpLeaderEpochsResponse } from '../../src/protocol/generated/messages/bump-leader-epochs-response.js';
import { encodeMetadataRequest } from '../../src/protocol/generated/messages/metadata-request.js';
import { decodeMetadataResponse } from '../../src/protocol/generated/messages/metadata-response.js';
import { encodeOffsetForLeaderEpochRequest } from '../../src/protocol/generated/messages/offset-for-leader-epoch-request.js';
import { decodeOffsetForLeaderEpochResponse } from '../../src/protocol/generated/messages/offset-for-leader-epoch-response.js';
import { startNode, type RunningNode } from '../helpers/node.js';
import { LOG4J2_CONFIG, VENV_PYTHON, clientsClasspath } from '../interop/lib/paths.js';
import { lastJsonLine, run, tail } from '../interop/lib/run.js';
import { waitFor } from '../helpers/wait.js';

const HERE = new URL('.', import.meta.url).pathname;
const SCRIPT = join(HERE, 'helpers/epoch_consumer.py');
const JAVA_CONSUMER = join(HERE, 'helpers/EpochConsumer.java');
const FAST = { 'mirror.failed.retry.initial.backoff.ms': 200, 'mirror.failed.retry.max.backoff.ms': 1000, 'mirror.metadata.refresh.interval.ms': 1000 };
const ZERO = '00000000-0000-0000-0000-000000000000';

let a: RunningNode;
let b: RunningNode;
const work = mkdtempSync(join(tmpdir(), 'fjord-mirror-epoch-'));

beforeAll(async () => {
  [a, b] = await Promise.all([startNode({ overrides: FAST }), startNode({ overrides: FAST })]);
}, 60_000);

afterAll(async () => {
  await Promise.all([a?.destroy(), b?.destroy()]);
  rmSync(work, { recursive: true, force: true });
});

const cli = (node: RunningNode, ...argv: string[]): Promise<CliRun> => clusterMirrors(node.bootstrap, ...argv);

async function states(node: RunningNode, mirror: string): Promise<{ topic: string; state: string; lag: number }[]> {
  const r = await cli(node, '--describe', '--mirror', mirror, '--json');
  if (r.code !== 0) throw new Error(r.err);
  return JSON.parse(r.out) as never;
}

async function python(...args: string[]): Promise<Record<string, unknown>> {
  const r = await run(VENV_PYTHON, [SCRIPT, ...args], { timeoutMs: 40_000 });
  const obs = lastJsonLine(r);
  if (r.code !== 0 || 'error' in obs) throw new Error(`epoch_consumer ${args[0]} failed: ${JSON.stringify(obs)}\n${tail(r.stderr, 15)}`);
  return obs;
}

/** The Java consumer (run as a single-file source program on the interop clients classpath). */
async function javaConsume(bootstrap: string, topic: string, group: string, want: number, secs: number): Promise<{ offsets: number[]; values: string[]; elapsedMs: number; error: string | null }> {
  const args = ['-Xmx256m', '-XX:TieredStopAtLevel=1', `-Dlog4j2.configurationFile=${LOG4J2_CONFIG}`, '-Dfjord.loglevel=WARN', '-cp', clientsClasspath()];
  const r = await run('java', [...args, JAVA_CONSUMER, bootstrap, topic, group, String(want), String(secs)], { timeoutMs: (secs + 30) * 1000 });
  if (r.code !== 0) throw new Error(`EpochConsumer exited ${r.code}\n${tail(r.stderr, 15)}`);
  return lastJsonLine(r) as never;
}

async function withConnection<T>(node: RunningNode, f: (c: KafkaConnection) => Promise<T>): Promise<T> {
  const c = await KafkaConnection.connect({ host: '127.0.0.1', port: node.port, clientId: 'epoch-test' });
  try {
    return await f(c);
  } finally {
    c.close();
  }
}

async function topicInfo(node: RunningNode, topic: string): Promise<{ topicId: string; leaderEpoch: number }> {
  const md = await withConnection(node, (c) =>
    c.request(3, 12, (w) => encodeMetadataRequest(w, { topics: [{ topicId: ZERO, name: topic }], allowAutoTopicCreation: false, includeTopicAuthorizedOperations: false }, 12), (r) => decodeMetadataResponse(r, 12)),
  );
  const t = md.topics[0];
  return { topicId: t?.topicId ?? ZERO, leaderEpoch: t?.partitions[0]?.leaderEpoch ?? -1 };
}

describe('epoch bump at failover', () => {
  it('lets a consumer whose committed offset carries a higher source epoch resume on the destination', async () => {
    const topic = 'payments';
    const group = 'settlement';
    const kafka = new Kafka({ clientId: 'epoch-test', brokers: [a.bootstrap], logLevel: logLevel.NOTHING });
    const admin = kafka.admin();
    await admin.connect();
    await admin.createTopics({ topics: [{ topic, numPartitions: 1 }], waitForLeaders: true });
    await admin.disconnect();

    // Source partition epoch 41 (BumpLeaderEpochs on the source node): its batches carry epoch 41.
    const { topicId } = await topicInfo(a, topic);
    const bumped = await withConnection(a, (c) =>
      c.request(105, 0, (w) => encodeBumpLeaderEpochsRequest(w, { topics: [{ topicId, partitions: [{ partitionIndex: 0, minLeaderEpoch: 40 }] }] }, 0), (r) => decodeBumpLeaderEpochsResponse(r, 0)),
    );
    expect(bumped.topics[0]?.partitions[0]?.errorCode).toBe(0);
    expect((await topicInfo(a, topic)).leaderEpoch).toBe(41);
    const producer = kafka.producer({ allowAutoTopicCreation: false });
    await producer.connect();
    await producer.send({ topic, acks: -1, messages: Array.from({ length: 10 }, (_, i) => ({ partition: 0, value: `p-${i}` })) });
    await producer.disconnect();

    // The group reads 6 records on the source and commits offset 6 with leader epoch 41.
    const committed = await python('commit', a.bootstrap, topic, group, '6');
    expect(committed).toMatchObject({ committedOffset: 6, committedLeaderEpoch: 41, lastEpoch: 41 });

    // Mirror to B, then fail over.
    const cfg = join(work, 'from-a.properties');
    writeFileSync(cfg, `bootstrap.servers=${a.bootstrap}\nmirror.fetch.wait.max.ms=100\nmirror.socket.timeout.ms=2000\n`);
    expect((await cli(b, '--create', '--mirror', 'from-a', '--mirror-config', cfg)).code).toBe(0);
    expect((await cli(b, '--start', '--mirror', 'from-a', '--topics', topic)).code).toBe(0);
    await waitFor('mirrored', async () => (await states(b, 'from-a')).some((p) => p.topic === topic && p.state === 'MIRRORING' && p.lag === 0));
    expect((await cli(b, '--stop', '--mirror', 'from-a', '--topics', topic)).code).toBe(0);
    await waitFor('stopped', async () => (await states(b, 'from-a')).every((p) => p.state === 'STOPPED'));

    // The destination holds the group's offset and its source epoch, and its own epoch is above it.
    const bAdmin = new Kafka({ clientId: 'epoch-test', brokers: [b.bootstrap], logLevel: logLevel.NOTHING }).admin();
    await bAdmin.connect();
    const synced = await bAdmin.fetchOffsets({ groupId: group, topics: [topic] });
    await bAdmin.disconnect();
    expect(synced[0]?.partitions[0]?.offset).toBe('6');
    const dest = await topicInfo(b, topic);
    expect(dest.leaderEpoch).toBeGreaterThan(41);
    // What the consumer's validation asks: the end of epoch 41 here is the end of the mirrored log.
    const olfe = await withConnection(b, (c) =>
      c.request(
        23,
        4,
        (w) => encodeOffsetForLeaderEpochRequest(w, { replicaId: -1, topics: [{ topic, partitions: [{ partition: 0, currentLeaderEpoch: dest.leaderEpoch, leaderEpoch: 41 }] }] }, 4),
        (r) => decodeOffsetForLeaderEpochResponse(r, 4),
      ),
    );
    expect(olfe.topics[0]?.partitions[0]).toMatchObject({ errorCode: 0, leaderEpoch: 41, endOffset: 10n });

    // The same group on the destination resumes at 6 with the Java client (which trusts the
    // committed epoch over lower metadata epochs): no hang, no reset.
    const java = await javaConsume(b.bootstrap, topic, group, 4, 20);
    expect(java.error).toBeNull();
    expect(java.offsets).toEqual([6, 7, 8, 9]);
    expect(java.values).toEqual(['p-6', 'p-7', 'p-8', 'p-9']);
    expect(java.elapsedMs).toBeLessThan(20_000);

    // And with librdkafka, which validates the committed position too.
    const consumed = await python('consume', b.bootstrap, topic, group, '4', '20');
    const records = consumed.records as { offset: number; value: string }[];
    expect(consumed.errors).toEqual([]);
    expect(records.map((r) => r.offset)).toEqual([6, 7, 8, 9]);
    expect(records.map((r) => r.value)).toEqual(['p-6', 'p-7', 'p-8', 'p-9']);
    expect(consumed.elapsedMs as number).toBeLessThan(20_000);
  }, 60_000);
});
