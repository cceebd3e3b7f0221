/**
 * Two behaviours of the KIP's own system tests, between two Fjord node processes on loopback
 * (source a, destination b), driven through `fjord cluster-mirrors`, the CLUSTER_MIRROR config
 * resource and kafkajs:
 *
 *  - `mirror.groups.include` / `mirror.groups.exclude` decide which source groups, consumer and
 *    share groups alike, have their offsets synced, and only the offsets of mirrored topics cross (never those of a topic b has
 *    under the same name as a local topic);
 *  - a topic stopped by name is not picked up again by pattern discovery, also after a restart of
 *    the destination, while topics created on the source later are; adding a pattern to `mirror.topics.include` with IncrementalAlterConfigs
 *    starts the topics it matches, and adding one to `mirror.topics.exclude` stops them.
 *
 * A refresh round is counted by something it visibly does (an offset it syncs, a topic it
 * discovers) that was caused after the state under test was reached: what the round would have
 * done wrong it would have done in the same pass.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Kafka, logLevel, type Admin } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigOp, MirrorAdmin } from '../../src/admin/mirror-admin.js';
import { Apis } from '../../src/client/apis.js';
import { KafkaClient } from '../../src/client/kafka-client.js';
import { KafkaConnection } from '../../src/client/kafka-connection.js';
import { ErrorCode } from '../../src/protocol/generated/errors.js';
import { encodeProduceRequest } from '../../src/protocol/generated/messages/produce-request.js';
import { decodeProduceResponse } from '../../src/protocol/generated/messages/produce-response.js';
import { buildRecordBatch } from '../../src/protocol/records.js';
import { clusterMirrors, type CliRun } from '../helpers/mirror-cli.js';
import { startNode, type RunningNode } from '../helpers/node.js';
import { waitFor } from '../helpers/wait.js';

let a: RunningNode;
let b: RunningNode;
let src: Admin;
let dst: Admin;
const work = mkdtempSync(join(tmpdir(), 'fjord-system-groups-'));
const FAST = { 'mirror.failed.retry.initial.backoff.ms': 200, 'mirror.failed.retry.max.backoff.ms': 1000, 'mirror.metadata.refresh.interval.ms': 500 };

beforeAll(async () => {
  [a, b] = await Promise.all([startNode({ overrides: FAST }), startNode({ overrides: FAST })]);
  src = new Kafka({ clientId: 'system-src', brokers: [a.bootstrap], logLevel: logLevel.NOTHING }).admin();
  dst = new Kafka({ clientId: 'system-dst', brokers: [b.bootstrap], logLevel: logLevel.NOTHING }).admin();
  await Promise.all([src.connect(), dst.connect()]);
}, 120_000);

afterAll(async () => {
  await Promise.all([src?.disconnect(), dst?.disconnect()]);
  await Promise.all([a?.destroy(), b?.destroy()]);
  // A restarted node keeps its data directory on destroy.
  if (b) rmSync(b.dataDir, { recursive: true, force: true });
  rmSync(work, { recursive: true, force: true });
});

const cli = (...argv: string[]): Promise<CliRun> => clusterMirrors(b.bootstrap, ...argv);

async function ok(...argv: string[]): Promise<CliRun> {
  const r = await cli(...argv);
  expect(r.code, `${argv.join(' ')}: ${r.out}\n${r.err}`).toBe(0);
  return r;
}

async function createMirror(name: string, extra: Record<string, string>): Promise<void> {
  const file = join(work, `${name}.properties`);
  const props = { 'bootstrap.servers': a.bootstrap, 'mirror.fetch.wait.max.ms': '100', ...extra };
  writeFileSync(file, Object.entries(props).map(([k, v]) => `${k}=${v}\n`).join(''));
  await ok('--create', '--mirror', name, '--mirror-config', file);
}

/** Each partition's state, `topic` → states, as `--describe --json` shows them. */
async function states(mirror: string): Promise<Map<string, string[]>> {
  const r = await cli('--describe', '--mirror', mirror, '--json');
  if (r.code !== 0) throw new Error(r.err);
  const out = new Map<string, string[]>();
  for (const p of JSON.parse(r.out) as { topic: string; state: string }[]) out.set(p.topic, [...(out.get(p.topic) ?? []), p.state]);
  return out;
}

async function createTopic(admin: Admin, topic: string): Promise<void> {
  await admin.createTopics({ topics: [{ topic, numPartitions: 1 }], waitForLeaders: true });
}

async function produce(node: RunningNode, topic: string, count: number, prefix = topic): Promise<void> {
  const p = new Kafka({ clientId: 'system-producer', brokers: [node.bootstrap], logLevel: logLevel.NOTHING, retry: { retries: 0 } }).producer({ allowAutoTopicCreation: false });
  await p.connect();
  try {
    await p.send({ topic, acks: -1, messages: Array.from({ length: count }, (_, i) => ({ partition: 0, value: `${prefix}-${i}` })) });
  } finally {
    await p.disconnect();
  }
}

/** The error code of one Produce v9 to partition 0 of `topic` on b, exactly as the node answers it. */
async function produceError(topic: string): Promise<number> {
  const conn = await KafkaConnection.connect({ host: '127.0.0.1', port: b.port, clientId: 'system-raw' });
  try {
    const batch = buildRecordBatch({ records: [{ value: Buffer.from('local write') }] });
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

/**
 * Commits `offset` for partition 0 of `topic` in `groupId` on a, outside any generation, as an
 * admin's alterConsumerGroupOffsets does (kafkajs's setOffsets joins the group for it, which
 * takes seconds per call).
 */
async function commit(groupId: string, topic: string, offset: number): Promise<void> {
  const client = new KafkaClient({ bootstrapServers: [a.bootstrap], clientId: 'system-commit' });
  try {
    await client.metadata([]); // learns the brokers' addresses
    const coord = (await client.send(Apis.FindCoordinator, { keyType: 0, coordinatorKeys: [groupId] })).coordinators[0];
    expect(coord?.errorCode).toBe(ErrorCode.NONE);
    const res = await client.send(
      Apis.OffsetCommit,
      {
        groupId,
        generationIdOrMemberEpoch: -1,
        memberId: '',
        groupInstanceId: null,
        retentionTimeMs: -1n,
        topics: [{ name: topic, partitions: [{ partitionIndex: 0, committedOffset: BigInt(offset), committedLeaderEpoch: -1, committedMetadata: null }] }],
      },
      coord!.nodeId,
    );
    expect(res.topics[0]?.partitions[0]?.errorCode).toBe(ErrorCode.NONE);
  } finally {
    client.close();
  }
}

/** Sets the share-partition start offset of partition 0 of `topic` for the empty share group `groupId` on a. */
async function alterShare(groupId: string, topic: string, startOffset: number): Promise<void> {
  const client = new KafkaClient({ bootstrapServers: [a.bootstrap], clientId: 'system-share' });
  try {
    const r = await client.send(Apis.AlterShareGroupOffsets, { groupId, topics: [{ topicName: topic, partitions: [{ partitionIndex: 0, startOffset: BigInt(startOffset) }] }] });
    expect([r.errorCode, r.responses[0]?.partitions[0]?.errorCode]).toEqual([ErrorCode.NONE, ErrorCode.NONE]);
  } finally {
    client.close();
  }
}

/** The share-partition start offset of partition 0 of `topic` for `groupId` on b: null when b has no such group, -1 when it has no state for the partition. */
async function shareStartOnB(groupId: string, topic: string): Promise<number | null> {
  const client = new KafkaClient({ bootstrapServers: [b.bootstrap], clientId: 'system-share' });
  try {
    const r = await client.send(Apis.DescribeShareGroupOffsets, { groups: [{ groupId, topics: [{ topicName: topic, partitions: [0] }] }] });
    const g = r.groups[0];
    if (g?.errorCode === ErrorCode.GROUP_ID_NOT_FOUND) return null;
    expect(g?.errorCode).toBe(ErrorCode.NONE);
    const start = g?.topics[0]?.partitions[0]?.startOffset;
    return start === undefined ? -1 : Number(start);
  } finally {
    client.close();
  }
}

/** Every committed offset of `groupId` on b, as `topic:partition=offset`, sorted. */
async function committedOnB(groupId: string): Promise<string[]> {
  const r = await dst.fetchOffsets({ groupId });
  return r.flatMap((t) => t.partitions.filter((p) => p.offset !== '-1').map((p) => `${t.topic}:${p.partition}=${p.offset}`)).sort();
}

describe('mirror.groups.include / mirror.groups.exclude', () => {
  it('syncs the offsets of included, not excluded groups, and of mirrored topics only', async () => {
    const mirrored = 'gs-orders';
    const unmirrored = 'gs-local';
    await Promise.all([createTopic(src, mirrored), createTopic(src, unmirrored)]);
    await Promise.all([produce(a, mirrored, 20), produce(a, unmirrored, 20)]);
    // b has a local topic of the same name as the unmirrored source topic: a sync that went by
    // name alone would move its consumers.
    await createTopic(dst, unmirrored);
    await produce(b, unmirrored, 20, 'local');

    await commit('app-billing', mirrored, 7);
    await commit('app-billing', unmirrored, 5);
    await commit('app-secret-audit', mirrored, 9); // included, but excluded
    await commit('batch-report', mirrored, 11); // not included
    // Share groups go through the same filters.
    await alterShare('app-share', mirrored, 4);
    await alterShare('app-share', unmirrored, 3);
    await alterShare('app-secret-share', mirrored, 6);
    await alterShare('batch-share', mirrored, 8);

    await createMirror('groups', { 'mirror.groups.include': 'app-.*', 'mirror.groups.exclude': 'app-secret-.*' });
    await ok('--start', '--mirror', 'groups', '--topics', mirrored);
    await waitFor('mirrored', async () => (await states('groups')).get(mirrored)?.[0] === 'MIRRORING' && (await dst.fetchTopicOffsets(mirrored))[0]?.high === '20');
    await waitFor('app-billing synced', async () => (await committedOnB('app-billing')).includes(`${mirrored}:0=7`));
    await waitFor('app-share synced', async () => (await shareStartOnB('app-share', mirrored)) === 4);

    // Two more values, each seen here: the round that synced the first went over every group.
    for (const offset of [8, 9]) {
      await commit('app-billing', mirrored, offset);
      await waitFor(`app-billing at ${offset}`, async () => (await committedOnB('app-billing')).includes(`${mirrored}:0=${offset}`));
    }
    expect(await committedOnB('app-billing')).toEqual([`${mirrored}:0=9`]);
    expect(await committedOnB('app-secret-audit')).toEqual([]);
    expect(await committedOnB('batch-report')).toEqual([]);
    const groupsOnB = (await dst.listGroups()).groups.map((g) => g.groupId);
    expect(groupsOnB).toContain('app-billing');
    expect(groupsOnB).not.toContain('app-secret-audit');
    expect(groupsOnB).not.toContain('batch-report');
    expect(await shareStartOnB('app-share', unmirrored)).toBe(-1);
    expect(await shareStartOnB('app-secret-share', mirrored)).toBeNull();
    expect(await shareStartOnB('batch-share', mirrored)).toBeNull();

    // The filters are read at every round: widening the include list brings batch-report over,
    // clearing the exclude list brings app-secret-audit over.
    const admin = new MirrorAdmin({ bootstrapServers: [b.bootstrap] });
    try {
      await admin.alterMirrorConfig('groups', [
        { name: 'mirror.groups.include', op: ConfigOp.APPEND, value: 'batch-.*' },
        { name: 'mirror.groups.exclude', op: ConfigOp.DELETE, value: null },
      ]);
    } finally {
      admin.close();
    }
    await waitFor('batch-report synced', async () => (await committedOnB('batch-report')).includes(`${mirrored}:0=11`));
    await waitFor('app-secret-audit synced', async () => (await committedOnB('app-secret-audit')).includes(`${mirrored}:0=9`));
    await waitFor('batch-share synced', async () => (await shareStartOnB('batch-share', mirrored)) === 8);
    await waitFor('app-secret-share synced', async () => (await shareStartOnB('app-secret-share', mirrored)) === 6);
    expect(await committedOnB('app-billing')).toEqual([`${mirrored}:0=9`]);

    await ok('--stop', '--mirror', 'groups', '--topics', mirrored);
    await waitFor('stopped', async () => (await states('groups')).get(mirrored)?.[0] === 'STOPPED');
  });
});

describe('topic discovery', () => {
  it('never picks a stopped topic up again, and follows changes of mirror.topics.include and exclude', async () => {
    await createTopic(src, 'disc-1');
    await produce(a, 'disc-1', 5);
    await createMirror('discovery', {});
    await ok('--start', '--mirror', 'discovery', '--topics', 'disc-.*');
    await waitFor('disc-1 mirroring', async () => (await states('discovery')).get('disc-1')?.[0] === 'MIRRORING');
    expect(await produceError('disc-1')).toBe(ErrorCode.READ_ONLY_TOPIC);

    // Stopped by name: writable here, and it stays so while the pattern keeps discovering.
    await ok('--stop', '--mirror', 'discovery', '--topics', 'disc-1');
    await waitFor('disc-1 stopped', async () => (await states('discovery')).get('disc-1')?.[0] === 'STOPPED');
    expect(await produceError('disc-1')).toBe(ErrorCode.NONE);
    for (const topic of ['disc-2', 'disc-3']) {
      // The second round of discovery runs on a restarted node, from the persisted state.
      if (topic === 'disc-3') b = await b.restart();
      await createTopic(src, topic);
      await produce(a, topic, 3);
      await waitFor(`${topic} discovered`, async () => (await states('discovery')).get(topic)?.[0] === 'MIRRORING');
      expect((await states('discovery')).get('disc-1')).toEqual(['STOPPED']);
      expect(await produceError('disc-1')).toBe(ErrorCode.NONE);
    }

    // Writes on the source no longer reach the stopped topic.
    const stoppedEnd = (await dst.fetchTopicOffsets('disc-1'))[0]?.high;
    await produce(a, 'disc-1', 5, 'after-stop');

    // A topic no pattern matches is not discovered; adding a pattern to the include list starts
    // what it matches. Topic names are created before the change, so only the change can start them.
    await createTopic(src, 'extra-1');
    await createTopic(src, 'other-1');
    await produce(a, 'extra-1', 4);
    const admin = new MirrorAdmin({ bootstrapServers: [b.bootstrap] });
    try {
      await admin.alterMirrorConfig('discovery', [{ name: 'mirror.topics.include', op: ConfigOp.APPEND, value: 'extra-.*' }]);
      await waitFor('extra-1 discovered', async () => (await states('discovery')).get('extra-1')?.[0] === 'MIRRORING');
      await waitFor('extra-1 copied', async () => (await dst.fetchTopicOffsets('extra-1'))[0]?.high === '4');
      // The round that found extra-1 saw other-1 as well.
      expect((await states('discovery')).has('other-1')).toBe(false);
      expect(await dst.listTopics()).not.toContain('other-1');
      expect((await states('discovery')).get('disc-1')).toEqual(['STOPPED']);
      expect((await dst.fetchTopicOffsets('disc-1'))[0]?.high).toBe(stoppedEnd);

      // A pattern added to the exclude list stops the active topics it matches.
      await admin.alterMirrorConfig('discovery', [{ name: 'mirror.topics.exclude', op: ConfigOp.APPEND, value: 'disc-2' }]);
      await waitFor('disc-2 stopped', async () => (await states('discovery')).get('disc-2')?.[0] === 'STOPPED');
      expect(await produceError('disc-2')).toBe(ErrorCode.NONE);
      expect(await produceError('disc-3')).toBe(ErrorCode.READ_ONLY_TOPIC);
    } finally {
      admin.close();
    }
    await ok('--stop', '--mirror', 'discovery', '--topics', 'disc-3,extra-1');
    await waitFor('all stopped', async () => JSON.stringify([...(await states('discovery')).values()].flat()) === JSON.stringify(Array(4).fill('STOPPED')));
  });
});
