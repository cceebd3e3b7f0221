/**
 * Mirroring a topic written by transactions V2 (KIP-890 part 2) between two Fjord node
 * processes: the source's batches and the markers EndTxn v5 wrote with bumped epochs are copied
 * byte for byte, and the destination's last stable offset and read_committed end match the
 * source's, aborted transaction included.
 */
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { encodeListOffsetsRequest } from '../../src/protocol/generated/messages/list-offsets-request.js';
import { decodeListOffsetsResponse } from '../../src/protocol/generated/messages/list-offsets-response.js';
import { checkTxnV2, runTxnV2 } from '../broker/txn-v2-wire.js';
import { WireClient } from '../broker/wire.js';
import { clusterMirrors } from '../helpers/mirror-cli.js';
import { startNode, type RunningNode } from '../helpers/node.js';
import { waitFor } from '../helpers/wait.js';

let a: RunningNode;
let b: RunningNode;
const work = mkdtempSync(join(tmpdir(), 'fjord-txn-v2-mirror-'));
const FAST = { 'mirror.failed.retry.initial.backoff.ms': 200, 'mirror.failed.retry.max.backoff.ms': 1000, 'mirror.metadata.refresh.interval.ms': 1000 };

beforeAll(async () => {
  [a, b] = await Promise.all([startNode({ overrides: FAST }), startNode({ overrides: FAST })]);
}, 120_000);
afterAll(async () => {
  await Promise.all([a?.destroy(), b?.destroy()]);
  rmSync(work, { recursive: true, force: true });
});

function segments(node: RunningNode, topic: string): Buffer {
  const dir = join(node.dataDir, `${topic}-0`);
  return Buffer.concat(readdirSync(dir).filter((f) => f.endsWith('.log')).sort().map((f) => readFileSync(join(dir, f))));
}

async function endOffsets(node: RunningNode, topic: string): Promise<number[]> {
  const c = await WireClient.connect(node.port);
  try {
    const ask = async (isolationLevel: number): Promise<number> => {
      const r = await c.call(2, 9, (w) => encodeListOffsetsRequest(w, { replicaId: -1, isolationLevel, topics: [{ name: topic, partitions: [{ partitionIndex: 0, currentLeaderEpoch: -1, timestamp: -1n }] }] }, 9));
      return Number(decodeListOffsetsResponse(r, 9).topics[0]!.partitions[0]!.offset);
    };
    return [await ask(1), await ask(0)];
  } finally {
    c.close();
  }
}

it('copies V2 transactions and their bumped-epoch markers byte for byte', async () => {
  const topic = 'ledger-v2';
  const c = await WireClient.connect(a.port);
  try {
    checkTxnV2(await runTxnV2(c, topic));
  } finally {
    c.close();
  }
  const config = join(work, 'from-a.properties');
  writeFileSync(config, `bootstrap.servers=${a.bootstrap}\nmirror.fetch.wait.max.ms=100\nmirror.socket.timeout.ms=2000\n`);
  expect((await clusterMirrors(b.bootstrap, '--create', '--mirror', 'from-a', '--mirror-config', config)).code).toBe(0);
  expect((await clusterMirrors(b.bootstrap, '--start', '--mirror', 'from-a', '--topics', topic)).code).toBe(0);
  await waitFor('B segments equal A', () => {
    try {
      return segments(b, topic).equals(segments(a, topic));
    } catch {
      return false;
    }
  }, 45_000);
  // Three transactions (commit, commit, abort), each with its marker: the source's offsets.
  expect(await endOffsets(a, topic)).toEqual([6, 6]);
  await waitFor('B serves the same stable offset', async () => (await endOffsets(b, topic)).join() === '6,6');
}, 120_000);
