/**
 * Log convergence under load (spec §9): an idempotent acks=all producer keeps writing to the
 * source while the destination and the source are bounced in interleaved order, with SIGTERM and
 * SIGKILL. After the producer stops and the mirror catches up, the segment files are identical
 * byte for byte and every acknowledged record is there exactly once (no value at all twice).
 */
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Kafka, logLevel, type Producer } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runClusterMirrorsCli } from '../../src/cli/cluster-mirrors.js';
import { iterateBatches } from '../../src/protocol/record-batch.js';
import { decodeRecords } from '../../src/protocol/records.js';
import { startNode, type RunningNode } from '../helpers/node.js';
import { waitFor } from '../helpers/wait.js';

const FAST = { 'mirror.failed.retry.initial.backoff.ms': 200, 'mirror.failed.retry.max.backoff.ms': 1000, 'mirror.metadata.refresh.interval.ms': 1000 };
let src: RunningNode;
let dst: RunningNode;
const dataDirs = new Set<string>();
const work = mkdtempSync(join(tmpdir(), 'fjord-bounce-load-'));

beforeAll(async () => {
  [src, dst] = await Promise.all([startNode({ overrides: FAST }), startNode({ overrides: FAST })]);
  dataDirs.add(src.dataDir).add(dst.dataDir);
}, 120_000);

afterAll(async () => {
  await Promise.all([src?.destroy(), dst?.destroy()]);
  for (const d of dataDirs) rmSync(d, { recursive: true, force: true });
  rmSync(work, { recursive: true, force: true });
});

/** SIGKILL, then a new process on the same port and data directory. */
async function killAndRelaunch(n: RunningNode): Promise<RunningNode> {
  await n.kill();
  return startNode({ overrides: FAST, dataDir: n.dataDir, port: n.port });
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

function segments(node: RunningNode, topic: string): Buffer {
  const dir = join(node.dataDir, `${topic}-0`);
  const files = readdirSync(dir).filter((f) => f.endsWith('.log')).sort();
  return Buffer.concat(files.map((f) => readFileSync(join(dir, f))));
}

/** Count of every record value in a log's data batches. */
function valueCounts(log: Buffer): Map<string, number> {
  const counts = new Map<string, number>();
  const it = iterateBatches(log);
  for (const b of it) {
    if (b.isControl) continue;
    for (const r of decodeRecords(b)) {
      const v = r.value?.toString() ?? '';
      counts.set(v, (counts.get(v) ?? 0) + 1);
    }
  }
  expect(it.partialTail).toBe(false);
  return counts;
}

async function cli(node: RunningNode, ...argv: string[]): Promise<{ code: number; out: string }> {
  const out: string[] = [];
  const code = await runClusterMirrorsCli(['--bootstrap-server', node.bootstrap, ...argv], { out: (l) => out.push(l), err: (l) => out.push(l) });
  return { code, out: out.join('\n') };
}

describe('mirroring under load while both sides are bounced', () => {
  it('converges byte for byte with every acknowledged record exactly once', async () => {
    const topic = 'busy';
    const kafka = new Kafka({
      clientId: 'bounce-load',
      brokers: [src.bootstrap],
      logLevel: logLevel.NOTHING,
      connectionTimeout: 1000,
      requestTimeout: 5000,
      retry: { retries: 60, initialRetryTime: 100, maxRetryTime: 500 },
    });
    const admin = kafka.admin();
    await admin.connect();
    await admin.createTopics({ topics: [{ topic, numPartitions: 1 }], waitForLeaders: true });
    await admin.disconnect();

    const props = join(work, 'from-src.properties');
    writeFileSync(props, `bootstrap.servers=${src.bootstrap}\nmirror.fetch.wait.max.ms=100\nmirror.socket.timeout.ms=2000\n`);
    expect((await cli(dst, '--create', '--mirror', 'from-src', '--mirror-config', props)).code).toBe(0);
    expect((await cli(dst, '--start', '--mirror', 'from-src', '--topics', topic)).code).toBe(0);

    // The producer: batches of 10 unique values, one send at a time, until told to stop.
    const acked: string[] = [];
    const unacked: string[] = [];
    let stop = false;
    let producer: Producer | null = null;
    const newProducer = async (): Promise<Producer> => {
      const p = kafka.producer({ idempotent: true, maxInFlightRequests: 1, allowAutoTopicCreation: false });
      await p.connect();
      return p;
    };
    const loop = (async () => {
      for (let n = 0; !stop; n++) {
        const values = Array.from({ length: 10 }, (_, i) => `v-${n}-${i}`);
        try {
          producer ??= await newProducer();
          await producer.send({ topic, acks: -1, messages: values.map((value) => ({ partition: 0, value })) });
          acked.push(...values);
        } catch {
          // Outcome unknown: these may or may not be in the log, but never twice.
          unacked.push(...values);
          await producer?.disconnect().catch(() => undefined);
          producer = null;
          await sleep(100);
        }
      }
      await producer?.disconnect().catch(() => undefined);
    })();

    const t0 = Date.now();
    await sleep(1000);
    dst = await dst.restart(); // SIGTERM destination
    await sleep(800);
    src = await killAndRelaunch(src); // SIGKILL source
    await sleep(800);
    dst = await killAndRelaunch(dst); // SIGKILL destination
    await sleep(800);
    src = await src.restart(); // SIGTERM source
    await sleep(1000);
    stop = true;
    await loop;
    const produceMs = Date.now() - t0;

    await waitFor('destination caught up byte for byte', () => segments(dst, topic).equals(segments(src, topic)), 40_000);
    const log = segments(src, topic);
    const counts = valueCounts(log);
    const missing = acked.filter((v) => counts.get(v) !== 1);
    const twice = [...counts.entries()].filter(([, c]) => c > 1);
    console.log(`bounce under load: ${acked.length} acknowledged, ${unacked.length} unacknowledged, ${counts.size} distinct values in ${log.length} bytes, produced for ${produceMs} ms, converged ${Date.now() - t0 - produceMs} ms later`);
    expect(acked.length).toBeGreaterThan(100);
    expect(missing).toEqual([]);
    expect(twice).toEqual([]);
    for (const v of counts.keys()) expect(acked.includes(v) || unacked.includes(v)).toBe(true);
    const d = await cli(dst, '--describe', '--mirror', 'from-src', '--json');
    expect((JSON.parse(d.out) as { state: string }[]).map((p) => p.state)).toEqual(['MIRRORING']);
  }, 60_000);
});
