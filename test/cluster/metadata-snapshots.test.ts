/**
 * Metadata snapshots and etcd compaction against a real etcd: the active controller snapshots
 * the image once `metadata.log.max.record.bytes.between.snapshots` is reached, the log up to the
 * snapshot and etcd's older revisions are gone, and a restarted node and a new node load
 * snapshot + tail and serve the same metadata. A reader whose watch falls behind the compacted
 * revision reloads the snapshot and the tail and keeps following.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Etcd3 } from 'etcd3';
import { KafkaClient } from '../../src/client/kafka-client.js';
import { Apis } from '../../src/client/apis.js';
import { ErrorCode } from '../../src/protocol/generated/errors.js';
import { EtcdMetadataLog, offsetKey, type ReloadedLog, type StoredSnapshot } from '../../src/controller/etcd/etcd-metadata-log.js';
import { eventually, FAST_SESSION, startCluster, type RunningCluster } from '../helpers/cluster.js';
import { startNode, type RunningNode } from '../helpers/node.js';

const PREFIX = '/fjord/metadata';

let cluster: RunningCluster;
let etcd: Etcd3;
let extra: RunningNode | null = null;

beforeAll(async () => {
  cluster = await startCluster({ nodes: 3, overrides: { 'auto.leader.rebalance.enable': false, 'metadata.log.max.record.bytes.between.snapshots': 1 } });
  etcd = new Etcd3({ hosts: cluster.etcd.endpoint });
}, 240_000);

afterAll(async () => {
  etcd?.close();
  await extra?.destroy();
  await cluster?.destroy();
}, 60_000);

async function on<T>(bootstrap: string, fn: (c: KafkaClient) => Promise<T>): Promise<T> {
  const c = new KafkaClient({ bootstrapServers: [bootstrap], clientId: 'snapshots' });
  try {
    return await fn(c);
  } finally {
    c.close();
  }
}

/** Topics as a node reports them: name → partitions' replicas, and one topic config. */
async function view(bootstrap: string): Promise<Record<string, { replicas: number[][]; retention: string | null }>> {
  return on(bootstrap, async (c) => {
    const md = await c.send(Apis.Metadata, { topics: null, allowAutoTopicCreation: false, includeTopicAuthorizedOperations: false });
    const out: Record<string, { replicas: number[][]; retention: string | null }> = {};
    for (const t of md.topics.filter((x) => !x.name!.startsWith('__')).sort((a, b) => (a.name! < b.name! ? -1 : 1))) {
      const cfg = await c.send(Apis.DescribeConfigs, { resources: [{ resourceType: 2, resourceName: t.name!, configurationKeys: ['retention.ms'] }], includeSynonyms: false, includeDocumentation: false });
      const entry = cfg.results[0]!.configs.find((e) => e.name === 'retention.ms');
      out[t.name!] = { replicas: [...t.partitions].sort((a, b) => a.partitionIndex - b.partitionIndex).map((p) => p.replicaNodes), retention: entry?.value ?? null };
    }
    return out;
  });
}

async function create(name: string, partitions: number, configs: { name: string; value: string }[] = []): Promise<void> {
  const r = await on(cluster.node(1).bootstrap, (c) => c.send(Apis.CreateTopics, { topics: [{ name, numPartitions: partitions, replicationFactor: 2, assignments: [], configs }], timeoutMs: 10_000, validateOnly: false }));
  expect(r.topics[0]!.errorCode).toBe(ErrorCode.NONE);
}

/** The latest snapshot's offset in etcd, once it is at least `min`. */
const snapshotAtLeast = (min: number): Promise<number> =>
  eventually(`a metadata snapshot at offset >= ${min}`, async () => {
    const v = await etcd.get(`${PREFIX}/snapshot`).string();
    const offset = v === null ? -1 : (JSON.parse(v) as { offset: number }).offset;
    return offset >= min ? offset : null;
  }, 30_000);

const head = async (): Promise<number> => Number(await etcd.get(`${PREFIX}/log-head`).string());

describe('metadata snapshots in etcd', () => {
  it('the log is trimmed to the snapshot and etcd compacted; a restarted node and a new node load snapshot + tail and serve the same metadata', async () => {
    const firstRevision = (await etcd.get(`${PREFIX}/log-head`).exec()).header.revision;
    await create('snap-a', 2, [{ name: 'retention.ms', value: '111111' }]);
    const s1 = await snapshotAtLeast(await head());
    // Nothing of the log up to the snapshot is left, and etcd keeps no older revisions.
    const below = await etcd.getAll().inRange({ start: offsetKey(PREFIX, 0), end: offsetKey(PREFIX, s1 + 1) }).keys();
    expect(below).toEqual([]);
    await expect(etcd.get(`${PREFIX}/log-head`).revision(firstRevision).string()).rejects.toThrow(/compacted/);

    // Changes made while node 3 is down are in a later snapshot (and maybe a tail) when it returns.
    await cluster.node(3).stop();
    await create('snap-b', 3, [{ name: 'retention.ms', value: '222222' }]);
    const del = await on(cluster.node(1).bootstrap, (c) => c.send(Apis.DeleteTopics, { topics: [], topicNames: ['snap-a'], timeoutMs: 10_000 }));
    expect(del.responses[0]!.errorCode).toBe(ErrorCode.NONE);
    await create('snap-c', 1);
    const s2 = await snapshotAtLeast(await head());
    expect(s2).toBeGreaterThan(s1);
    await cluster.node(3).start();

    const expected = await view(cluster.node(1).bootstrap);
    expect(Object.keys(expected)).toEqual(['snap-b', 'snap-c']);
    expect(expected['snap-b']!.retention).toBe('222222');
    expect(await eventually('node 3 serving the same metadata', async () => {
      const v = await view(cluster.node(3).bootstrap);
      return JSON.stringify(v) === JSON.stringify(expected) ? v : null;
    })).toEqual(expected);

    extra = await startNode({ overrides: { 'node.id': 4, 'metadata.etcd.endpoints': cluster.etcd.endpoint, 'auto.leader.rebalance.enable': false, ...FAST_SESSION } });
    expect(extra.logs()).toMatch(/metadata image loaded/);
    expect(await view(extra.bootstrap)).toEqual(expected);
    // Every node keeps applying new records after the snapshot.
    await create('snap-d', 1);
    for (const b of [cluster.node(3).bootstrap, extra.bootstrap]) await eventually('snap-d everywhere', async () => 'snap-d' in (await view(b)));
  });

  it('a reader whose watch fell behind the compacted revision reloads the snapshot and the tail, then keeps following', async () => {
    const prefix = '/reload-test/metadata';
    const writerClient = new Etcd3({ hosts: cluster.etcd.endpoint });
    const readerClient = new Etcd3({ hosts: cluster.etcd.endpoint });
    const noFence = (): null => null;
    const writer = new EtcdMetadataLog(writerClient, prefix, noFence, () => undefined);
    const reader = new EtcdMetadataLog(readerClient, prefix, noFence, () => undefined);
    const rec = (i: number): Buffer => Buffer.from(`record-${i}`);
    try {
      expect(await writer.appendIf([rec(0), rec(1)], -1, false)).toEqual({ kind: 'ok', lastOffset: 1 });
      const replayed: number[] = [];
      await reader.replay((offset) => replayed.push(offset));
      expect(replayed).toEqual([0, 1]);

      // Before the reader watches, the log moves on, is snapshotted at 3 and etcd compacted.
      expect(await writer.appendIf([rec(2), rec(3)], 1, false)).toEqual({ kind: 'ok', lastOffset: 3 });
      const snap: StoredSnapshot = { offset: 3, entries: [{ offset: 3, value: Buffer.from('image-at-3') }, { offset: 2, value: Buffer.from('mirror-state-of-2') }] };
      expect(await writer.writeSnapshot(snap)).toBe(true);
      expect(await writer.writeSnapshot(snap)).toBe(false);
      expect(await writer.appendIf([rec(4)], 3, false)).toEqual({ kind: 'ok', lastOffset: 4 });

      const batches: number[] = [];
      const reloads: ReloadedLog[] = [];
      await reader.follow((first, values) => batches.push(...values.map((_, i) => first + i)), (l) => reloads.push(l));
      const reload = await eventually('the reader to reload', async () => reloads[0]);
      expect(reload.snapshot).toEqual(snap);
      expect(reload.records.map((r) => [r.offset, r.value.toString()])).toEqual([[4, 'record-4']]);
      expect(reader.snapshotOffset).toBe(3);

      expect(await writer.appendIf([rec(5)], 4, false)).toEqual({ kind: 'ok', lastOffset: 5 });
      // Record 5 comes by the new watch; if setting that watch up failed once (a loaded etcd), the
      // reader loads again and hands it over with that reload instead. Either way it is not lost.
      const seen = (): boolean => batches.includes(5) || reloads.slice(1).some((l) => l.records.some((r) => r.offset === 5));
      await eventually('record 5 by watch or reload', async () => (seen() ? true : null));
      expect(batches.filter((o) => o !== 5)).toEqual([]);

      // A new reader starts from the snapshot.
      const fresh = new EtcdMetadataLog(writerClient, prefix, noFence, () => undefined);
      const got: string[] = [];
      await fresh.replay((offset, v) => got.push(`${offset}:${v.toString()}`), (s) => got.push(`snapshot ${s.offset}: ${s.entries.map((e) => `${e.offset}:${e.value.toString()}`).join(' ')}`));
      expect(got).toEqual(['snapshot 3: 3:image-at-3 2:mirror-state-of-2', '4:record-4', '5:record-5']);
      // Without a way to take the snapshot, a replay refuses rather than build a partial image.
      await expect(fresh.replay(() => undefined)).rejects.toThrow(/snapshot/);
    } finally {
      await reader.close();
      writerClient.close();
      readerClient.close();
    }
  });
});
