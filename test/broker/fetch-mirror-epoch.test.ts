/**
 * Fetch v19 MirrorLeaderEpoch (KIP-1279 §9.6) on a real node that mirrors a topic from another
 * real node: raw generated-codec Fetch requests, v19 with and without the tagged field, and v18.
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
import { encodeFetchRequest } from '../../src/protocol/generated/messages/fetch-request.js';
import { decodeFetchResponse, type FetchResponse } from '../../src/protocol/generated/messages/fetch-response.js';
import { encodeMetadataRequest } from '../../src/protocol/generated/messages/metadata-request.js';
import { decodeMetadataResponse } from '../../src/protocol/generated/messages/metadata-response.js';
import { startNode, type RunningNode } from '../helpers/node.js';
import { waitFor } from '../helpers/wait.js';

let a: RunningNode;
let b: RunningNode;
const work = mkdtempSync(join(tmpdir(), 'fjord-fetch-v19-'));
const FAST = { 'mirror.failed.retry.initial.backoff.ms': 200, 'mirror.failed.retry.max.backoff.ms': 1000, 'mirror.metadata.refresh.interval.ms': 1000 };
const ZERO = '00000000-0000-0000-0000-000000000000';

beforeAll(async () => {
  [a, b] = await Promise.all([startNode({ overrides: FAST }), startNode({ overrides: FAST })]);
}, 120_000);

afterAll(async () => {
  await Promise.all([a?.destroy(), b?.destroy()]);
  rmSync(work, { recursive: true, force: true });
});

const cli = (node: RunningNode, ...argv: string[]): Promise<CliRun> => clusterMirrors(node.bootstrap, ...argv);

async function kafkaAdmin<T>(node: RunningNode, f: (k: Kafka) => Promise<T>): Promise<T> {
  return f(new Kafka({ clientId: 'fetch-v19', brokers: [node.bootstrap], logLevel: logLevel.NOTHING, retry: { retries: 3 } }));
}

async function createTopic(node: RunningNode, topic: string): Promise<void> {
  await kafkaAdmin(node, async (k) => {
    const admin = k.admin();
    await admin.connect();
    await admin.createTopics({ topics: [{ topic, numPartitions: 1 }], waitForLeaders: true });
    await admin.disconnect();
  });
}

async function produce(node: RunningNode, topic: string, values: string[]): Promise<void> {
  await kafkaAdmin(node, async (k) => {
    const p = k.producer({ allowAutoTopicCreation: false });
    await p.connect();
    await p.send({ topic, acks: -1, messages: values.map((value) => ({ partition: 0, value })) });
    await p.disconnect();
  });
}

async function topicId(node: RunningNode, topic: string): Promise<string> {
  const c = await KafkaConnection.connect({ host: '127.0.0.1', port: node.port, clientId: 'md' });
  try {
    const md = await c.request(3, 12, (w) => encodeMetadataRequest(w, { topics: [{ topicId: ZERO, name: topic }], allowAutoTopicCreation: false, includeTopicAuthorizedOperations: false }, 12), (r) => decodeMetadataResponse(r, 12));
    return md.topics[0]!.topicId;
  } finally {
    c.close();
  }
}

interface FetchPart {
  readonly errorCode: number;
  readonly mirrorLeaderEpoch: number;
  readonly records: number;
  readonly highWatermark: bigint;
}

/** One sessionless Fetch by topic id at `version`; `mirrorLeaderEpoch` undefined leaves the tag out. */
async function fetchOnce(node: RunningNode, version: number, id: string, fetchOffset: number, mirrorLeaderEpoch?: number, maxWaitMs = 0): Promise<FetchPart> {
  const c = await KafkaConnection.connect({ host: '127.0.0.1', port: node.port, clientId: 'fetch-v19' });
  try {
    const res: FetchResponse = await c.request(
      1,
      version,
      (w) =>
        encodeFetchRequest(
          w,
          {
            replicaId: -1,
            maxWaitMs,
            minBytes: 1,
            maxBytes: 1 << 20,
            isolationLevel: 0,
            sessionId: 0,
            sessionEpoch: -1,
            topics: [{ topicId: id, partitions: [{ partition: 0, currentLeaderEpoch: -1, fetchOffset: BigInt(fetchOffset), lastFetchedEpoch: -1, logStartOffset: -1n, partitionMaxBytes: 1 << 20, ...(mirrorLeaderEpoch === undefined ? {} : { mirrorLeaderEpoch }) }] }],
            forgottenTopicsData: [],
            rackId: '',
          },
          version,
        ),
      (r) => decodeFetchResponse(r, version),
    );
    const p = res.responses[0]?.partitions[0];
    if (!p) throw new Error('no partition in the response');
    return { errorCode: p.errorCode, mirrorLeaderEpoch: p.mirrorLeaderEpoch, records: p.records?.length ?? 0, highWatermark: p.highWatermark };
  } finally {
    c.close();
  }
}

describe('Fetch v19 MirrorLeaderEpoch', () => {
  it('answers with the latest epoch of a mirror partition, and only there', async () => {
    const topic = 'mle';
    const plain = 'not-mirrored';
    await createTopic(a, topic);
    await createTopic(b, plain);
    await produce(b, plain, ['p0']);
    // The source's epoch goes to 6 (BumpLeaderEpochs with MinLeaderEpoch 5), so copied batches carry 6.
    const srcId = await topicId(a, topic);
    const c = await KafkaConnection.connect({ host: '127.0.0.1', port: a.port, clientId: 'bump' });
    const bumped = await c.request(105, 0, (w) => encodeBumpLeaderEpochsRequest(w, { topics: [{ topicId: srcId, partitions: [{ partitionIndex: 0, minLeaderEpoch: 5 }] }] }, 0), (r) => decodeBumpLeaderEpochsResponse(r, 0));
    c.close();
    expect(bumped.topics[0]?.partitions[0]?.errorCode).toBe(0);
    await produce(a, topic, ['m0', 'm1', 'm2']);

    const props = join(work, 'from-a.properties');
    writeFileSync(props, `bootstrap.servers=${a.bootstrap}\nmirror.fetch.wait.max.ms=100\nmirror.socket.timeout.ms=2000\n`);
    expect((await cli(b, '--create', '--mirror', 'from-a', '--mirror-config', props)).code).toBe(0);
    expect((await cli(b, '--start', '--mirror', 'from-a', '--topics', topic)).code).toBe(0);
    const id = await topicId(b, topic);
    expect(id).toBe(srcId);
    await waitFor('mirrored', async () => (await fetchOnce(b, 18, id, 0)).highWatermark === 3n);

    // v19 with the field: records and the source epoch in the log (6), not the destination's own epoch.
    const withData = await fetchOnce(b, 19, id, 0, 0);
    expect(withData.errorCode).toBe(0);
    expect(withData.records).toBeGreaterThan(0);
    expect(withData.mirrorLeaderEpoch).toBe(6);
    // No data (fetch at the log end) but a higher epoch than asked: answered at once, epoch included.
    const t0 = Date.now();
    const empty = await fetchOnce(b, 19, id, 3, 0, 5000);
    expect(Date.now() - t0).toBeLessThan(4000);
    expect(empty.records).toBe(0);
    expect(empty.mirrorLeaderEpoch).toBe(6);
    // v19 without the field, v18, and a topic that is not mirrored: default (-1).
    expect((await fetchOnce(b, 19, id, 0)).mirrorLeaderEpoch).toBe(-1);
    const v18 = await fetchOnce(b, 18, id, 0, 0);
    expect(v18.mirrorLeaderEpoch).toBe(-1);
    expect(v18.records).toBe(withData.records);
    expect((await fetchOnce(b, 19, await topicId(b, plain), 0, 0)).mirrorLeaderEpoch).toBe(-1);
    // The source node's own topic is not a mirror there either.
    expect((await fetchOnce(a, 19, srcId, 0, 0)).mirrorLeaderEpoch).toBe(-1);

    // Fetch session: the full response carries the epoch; an incremental request that names no
    // partition then long-polls (the epoch was sent already) and lists nothing.
    const conn = await KafkaConnection.connect({ host: '127.0.0.1', port: b.port, clientId: 'fetch-v19-session' });
    try {
      const send = (sessionId: number, sessionEpoch: number, withPartition: boolean): Promise<FetchResponse> =>
        conn.request(
          1,
          19,
          (w) =>
            encodeFetchRequest(
              w,
              {
                replicaId: -1,
                maxWaitMs: 600,
                minBytes: 1,
                maxBytes: 1 << 20,
                isolationLevel: 0,
                sessionId,
                sessionEpoch,
                topics: withPartition ? [{ topicId: id, partitions: [{ partition: 0, currentLeaderEpoch: -1, fetchOffset: 3n, lastFetchedEpoch: -1, logStartOffset: -1n, partitionMaxBytes: 1 << 20, mirrorLeaderEpoch: 0 }] }] : [],
                forgottenTopicsData: [],
                rackId: '',
              },
              19,
            ),
          (r) => decodeFetchResponse(r, 19),
        );
      const full = await send(0, 0, true);
      expect(full.sessionId).toBeGreaterThan(0);
      expect(full.responses[0]?.partitions[0]?.mirrorLeaderEpoch).toBe(6);
      const t1 = Date.now();
      const inc = await send(full.sessionId, 1, false);
      expect(Date.now() - t1).toBeGreaterThanOrEqual(450);
      expect(inc.responses).toEqual([]);
    } finally {
      conn.close();
    }

    // Stopped (failover): the field goes back to its default.
    expect((await cli(b, '--stop', '--mirror', 'from-a', '--topics', topic)).code).toBe(0);
    await waitFor('stopped', async () => (await fetchOnce(b, 19, id, 0, 0)).mirrorLeaderEpoch === -1);
  });
});
