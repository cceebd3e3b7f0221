/** A node with two log.dirs: partitions spread over both, found again after restarts, each dir reported. */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { encodeCreateTopicsRequest } from '../../src/protocol/generated/messages/create-topics-request.js';
import { decodeCreateTopicsResponse } from '../../src/protocol/generated/messages/create-topics-response.js';
import { encodeDescribeLogDirsRequest } from '../../src/protocol/generated/messages/describe-log-dirs-request.js';
import { decodeDescribeLogDirsResponse } from '../../src/protocol/generated/messages/describe-log-dirs-response.js';
import { encodeFetchRequest } from '../../src/protocol/generated/messages/fetch-request.js';
import { decodeFetchResponse } from '../../src/protocol/generated/messages/fetch-response.js';
import { encodeProduceRequest } from '../../src/protocol/generated/messages/produce-request.js';
import { decodeProduceResponse } from '../../src/protocol/generated/messages/produce-response.js';
import { iterateBatches } from '../../src/protocol/record-batch.js';
import { buildRecordBatch, decodeRecords } from '../../src/protocol/records.js';
import { CLEAN_SHUTDOWN_FILE, LOG_START_OFFSET_FILE, RECOVERY_POINT_FILE, parseOffsetCheckpoint } from '../../src/storage/log-manager.js';
import { startNode, type RunningNode } from '../helpers/node.js';
import { WireClient } from '../broker/wire.js';

const dirA = mkdtempSync(join(tmpdir(), 'fjord-dir-a-'));
const dirB = mkdtempSync(join(tmpdir(), 'fjord-dir-b-'));
const nodes: RunningNode[] = [];
afterAll(async () => {
  for (const n of nodes.reverse()) await n.destroy();
  rmSync(dirA, { recursive: true, force: true });
  rmSync(dirB, { recursive: true, force: true });
});

async function createTopic(c: WireClient, name: string, numPartitions: number): Promise<void> {
  const r = await c.call(19, 7, (w) => encodeCreateTopicsRequest(w, { topics: [{ name, numPartitions, replicationFactor: 1, configs: [] }], timeoutMs: 5000 }, 7));
  expect(decodeCreateTopicsResponse(r, 7).topics[0]!.errorCode).toBe(0);
}

async function produce(c: WireClient, topic: string, partition: number, value: string): Promise<void> {
  const records = buildRecordBatch({ records: [{ key: null, value: Buffer.from(value) }] });
  const pr = decodeProduceResponse(await c.call(0, 9, (w) => encodeProduceRequest(w, { transactionalId: null, acks: -1, timeoutMs: 5000, topicData: [{ name: topic, partitionData: [{ index: partition, records }] }] }, 9)), 9);
  expect(pr.responses[0]!.partitionResponses[0]!.errorCode).toBe(0);
}

async function values(c: WireClient, topic: string, partition: number): Promise<string[]> {
  const fr = decodeFetchResponse(
    await c.call(1, 11, (w) => encodeFetchRequest(w, { replicaId: -1, maxWaitMs: 0, minBytes: 0, maxBytes: 1 << 20, topics: [{ topic, partitions: [{ partition, fetchOffset: 0n, partitionMaxBytes: 1 << 20 }] }] }, 11)),
    11,
  );
  const p = fr.responses[0]!.partitions[0]!;
  expect(p.errorCode).toBe(0);
  return [...iterateBatches(p.records ?? Buffer.alloc(0))].flatMap((b) => decodeRecords(b).map((r) => r.value!.toString()));
}

/** DescribeLogDirs v4: log dir → the `<topic>-<partition>` names it reports. */
async function describeDirs(c: WireClient): Promise<Map<string, string[]>> {
  const r = decodeDescribeLogDirsResponse(await c.call(35, 4, (w) => encodeDescribeLogDirsRequest(w, { topics: null }, 4)), 4);
  expect(r.errorCode).toBe(0);
  const out = new Map<string, string[]>();
  for (const d of r.results) {
    expect(d.errorCode).toBe(0);
    expect(d.totalBytes).toBeGreaterThan(0n);
    out.set(d.logDir, d.topics.flatMap((t) => t.partitions.map((p) => `${t.name}-${p.partitionIndex}`)).sort());
  }
  return out;
}

const partitionDirs = (dir: string): string[] => readdirSync(dir).filter((n) => /^spread-\d+$|^later-\d+$/.test(n)).sort();

it('places partitions across every log dir, finds them there after SIGTERM and SIGKILL restarts, and reports each dir', async () => {
  let node = await startNode({ dataDir: dirA, overrides: { 'log.dirs': `${dirA},${dirB}` } });
  nodes.push(node);
  let c = await WireClient.connect(node.port);
  await createTopic(c, 'spread', 4);
  for (let p = 0; p < 4; p++) for (let i = 0; i < 3; i++) await produce(c, 'spread', p, `p${p}-r${i}`);

  // The fewest-partitions rule splits four new partitions two and two.
  const onA = partitionDirs(dirA);
  const onB = partitionDirs(dirB);
  expect(onA).toHaveLength(2);
  expect(onB).toHaveLength(2);
  expect([...onA, ...onB].sort()).toEqual(['spread-0', 'spread-1', 'spread-2', 'spread-3']);
  const described = await describeDirs(c);
  expect(described).toEqual(new Map([[dirA, onA], [dirB, onB]]));
  c.close();

  expect(await node.stop()).toBe(0);
  // Each dir has its own marker and checkpoints naming only its own partitions.
  for (const [dir, mine] of [[dirA, onA], [dirB, onB]] as const) {
    expect(readdirSync(dir)).toContain(CLEAN_SHUTDOWN_FILE);
    expect([...parseOffsetCheckpoint(readFileSync(join(dir, RECOVERY_POINT_FILE), 'utf8')).keys()].sort()).toEqual(mine);
    expect([...parseOffsetCheckpoint(readFileSync(join(dir, LOG_START_OFFSET_FILE), 'utf8')).keys()].sort()).toEqual(mine);
  }

  node = await node.restart();
  nodes.push(node);
  c = await WireClient.connect(node.port);
  for (let p = 0; p < 4; p++) expect(await values(c, 'spread', p)).toEqual([`p${p}-r0`, `p${p}-r1`, `p${p}-r2`]);
  expect(await describeDirs(c)).toEqual(described);
  // A topic created after the restart still balances: one partition in each dir.
  await createTopic(c, 'later', 2);
  await produce(c, 'later', 0, 'l0');
  await produce(c, 'later', 1, 'l1');
  expect(partitionDirs(dirA).filter((n) => n.startsWith('later-'))).toHaveLength(1);
  expect(partitionDirs(dirB).filter((n) => n.startsWith('later-'))).toHaveLength(1);
  c.close();

  await node.kill();
  node = await node.restart();
  nodes.push(node);
  expect(node.logs()).toContain(`"logDir":${JSON.stringify(dirB)},"cleanShutdown":false`);
  c = await WireClient.connect(node.port);
  for (let p = 0; p < 4; p++) expect(await values(c, 'spread', p)).toEqual([`p${p}-r0`, `p${p}-r1`, `p${p}-r2`]);
  expect(await values(c, 'later', 0)).toEqual(['l0']);
  expect(await values(c, 'later', 1)).toEqual(['l1']);
  const after = await describeDirs(c);
  expect(after.get(dirA)).toEqual(partitionDirs(dirA));
  expect(after.get(dirB)).toEqual(partitionDirs(dirB));
  c.close();
}, 120_000);
