/**
 * A mirror's control requests to the source (the loop check and the last-mirrored-epoch lookup of
 * LOG_TRUNCATION, Metadata) do not queue behind its fetcher's long poll. A broker answers one
 * connection's requests in order, so on a connection shared with a Fetch waiting
 * `mirror.fetch.wait.max.ms` for data, each lookup of a topic started on an idle mirror waited
 * for what was left of that poll: a 200-partition start took seconds in LOG_TRUNCATION. The
 * fetch loops have connections of their own, as Kafka's replica fetcher threads do.
 */
import { rmSync } from 'node:fs';
import { Kafka, logLevel } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MirrorAdmin, type PartitionMirrorDescription } from '../../src/admin/mirror-admin.js';
import { startNode, type RunningNode } from '../helpers/node.js';
import { waitFor } from '../helpers/wait.js';

const LONG_POLL_MS = 10_000;
const LATE_PARTITIONS = 4;
const RECORDS_PER_PARTITION = 4;

let source: RunningNode;
let dest: RunningNode;
let admin: MirrorAdmin;

beforeAll(async () => {
  [source, dest] = await Promise.all([startNode(), startNode()]);
  admin = new MirrorAdmin({ bootstrapServers: [dest.bootstrap], requestTimeoutMs: 30_000 });
}, 120_000);

afterAll(async () => {
  admin?.close();
  await Promise.all([source?.destroy(), dest?.destroy()]);
  for (const n of [source, dest]) if (n) rmSync(n.dataDir, { recursive: true, force: true });
});

async function described(): Promise<readonly PartitionMirrorDescription[]> {
  const [m] = await admin.describeClusterMirrors(['dr']);
  return m?.partitions ?? [];
}

describe('a mirror whose fetcher is long-polling an idle source', () => {
  it('takes a newly started topic through LOG_TRUNCATION to MIRRORING without waiting for the poll', async () => {
    const kafka = new Kafka({ clientId: 'control-connection', brokers: [source.bootstrap], logLevel: logLevel.NOTHING });
    const a = kafka.admin();
    await a.connect();
    await a.createTopics({ topics: [{ topic: 'idle', numPartitions: 1 }, { topic: 'late', numPartitions: LATE_PARTITIONS }], waitForLeaders: true });
    await a.disconnect();
    const producer = kafka.producer({ allowAutoTopicCreation: false });
    await producer.connect();
    await producer.send({ topic: 'idle', acks: -1, messages: [{ partition: 0, value: 'one' }] });
    await producer.send({ topic: 'late', acks: -1, messages: Array.from({ length: RECORDS_PER_PARTITION * LATE_PARTITIONS }, (_, i) => ({ partition: i % LATE_PARTITIONS, value: `late-${i}` })) });
    await producer.disconnect();

    await admin.createClusterMirror('dr', { 'bootstrap.servers': source.bootstrap, 'mirror.fetch.wait.max.ms': String(LONG_POLL_MS) });
    expect((await admin.startMirrorTopics('dr', ['idle'])).map((t) => t.errorCode)).toEqual([0]);
    // Caught up: the fetcher's next Fetch finds no data and waits LONG_POLL_MS on the source.
    await waitFor('idle caught up', async () => (await described()).some((p) => p.topic === 'idle' && p.state === 'MIRRORING' && p.lag === 0), 30_000);

    const started = Date.now();
    expect((await admin.startMirrorTopics('dr', ['late'])).map((t) => t.errorCode)).toEqual([0]);
    await waitFor('late MIRRORING', async () => (await described()).filter((p) => p.topic === 'late' && p.state === 'MIRRORING').length === LATE_PARTITIONS, 4 * LONG_POLL_MS);
    const tookMs = Date.now() - started;
    // Each lookup behind the poll took up to LONG_POLL_MS; on a connection of their own, far less.
    expect(tookMs, `LOG_TRUNCATION → MIRRORING of ${LATE_PARTITIONS} partitions took ${tookMs} ms`).toBeLessThan(LONG_POLL_MS / 4);
    // The records follow once the fetch loop takes the new partitions in (at most one poll later).
    await waitFor('late copied', async () => (await described()).filter((p) => p.topic === 'late' && p.lag === 0 && p.destinationOffset === RECORDS_PER_PARTITION).length === LATE_PARTITIONS, 4 * LONG_POLL_MS);
  }, 120_000);
});
