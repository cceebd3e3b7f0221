/**
 * `fjord cluster-mirrors --verify` between two Fjord node processes (A the source, B the
 * destination, B rolling small segments): a caught-up mirror verifies identical (exit 0); after
 * one byte of a record batch's payload in a closed segment of B is flipped on disk, verify exits
 * 1 naming that batch's base offset as the first difference and the destination's copy as the
 * one failing its CRC-32C, while the other partition still verifies identical; once stopped and
 * written on both sides, a partition is compared up to where its own writes begin.
 */
import { closeSync, mkdtempSync, openSync, readdirSync, readFileSync, readSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Kafka, logLevel } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runClusterMirrorsCli } from '../../src/cli/cluster-mirrors.js';
import { startNode, type RunningNode } from '../helpers/node.js';
import { waitFor } from '../helpers/wait.js';

let a: RunningNode;
let b: RunningNode;
const work = mkdtempSync(join(tmpdir(), 'fjord-cli-verify-'));
const TOPIC = 'verified';

async function onB(...argv: string[]): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runClusterMirrorsCli(['--bootstrap-server', b.bootstrap, ...argv], { out: (l) => out.push(l), err: (l) => err.push(l) });
  return { code, out: out.join('\n'), err: err.join('\n') };
}

beforeAll(async () => {
  [a, b] = await Promise.all([startNode(), startNode({ overrides: { 'mirror.metadata.refresh.interval.ms': 1000, 'log.segment.bytes': 1048576 } })]);
  const kafka = new Kafka({ clientId: 'verify', brokers: [a.bootstrap], logLevel: logLevel.NOTHING });
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({ topics: [{ topic: TOPIC, numPartitions: 2 }], waitForLeaders: true });
  await admin.disconnect();
  const producer = kafka.producer({ allowAutoTopicCreation: false });
  await producer.connect();
  // 20 sends of 20 records to each partition: 20 batches of about 140 KiB per partition, so b's
  // smallest segments Kafka allows (1 MiB) make three segments of each.
  for (let i = 0; i < 20; i++) {
    await producer.send({ topic: TOPIC, acks: -1, messages: Array.from({ length: 40 }, (_, j) => ({ partition: j % 2, value: `v-${i}-${j}`.padEnd(7000, '.') })) });
  }
  await producer.disconnect();
  const cfg = join(work, 'from-a.properties');
  writeFileSync(cfg, `bootstrap.servers=${a.bootstrap}\nmirror.fetch.wait.max.ms=100\nmirror.fetch.max.bytes=16384\n`);
  expect((await onB('--create', '--mirror', 'from-a', '--mirror-config', cfg)).code).toBe(0);
  expect((await onB('--start', '--mirror', 'from-a', '--topics', TOPIC)).code).toBe(0);
  await waitFor('caught up', async () => {
    const r = await onB('--describe', '--mirror', 'from-a', '--json');
    const rows = JSON.parse(r.out) as { state: string; destinationOffset: number }[];
    return rows.length === 2 && rows.every((p) => p.state === 'MIRRORING' && p.destinationOffset === 400);
  });
}, 240_000);

afterAll(async () => {
  await Promise.all([a?.destroy(), b?.destroy()]);
  rmSync(work, { recursive: true, force: true });
});

/** Base offset, start and size of each batch in a segment file (headers only). */
function batchesOf(file: string): { baseOffset: number; at: number; size: number }[] {
  const buf = readFileSync(file);
  const out: { baseOffset: number; at: number; size: number }[] = [];
  for (let at = 0; at + 12 <= buf.length; ) {
    const size = 12 + buf.readInt32BE(at + 8);
    out.push({ baseOffset: Number(buf.readBigInt64BE(at)), at, size });
    at += size;
  }
  return out;
}

describe('fjord cluster-mirrors --verify', () => {
  it('passes on a caught-up mirror', async () => {
    const r = await onB('--verify', '--mirror', 'from-a');
    expect(r.code, r.err).toBe(0);
    expect(r.out).toContain(`${TOPIC}-0: offsets 0..399 identical (20 batches).`);
    expect(r.out).toContain(`${TOPIC}-1: offsets 0..399 identical (20 batches).`);
    expect(r.out).toContain('Verified 2 partitions of mirror from-a (40 batches): identical to the source.');
  });

  it('names the first differing offset after a destination segment is corrupted', async () => {
    const dir = join(b.dataDir, `${TOPIC}-0`);
    const segments = readdirSync(dir).filter((f) => f.endsWith('.log')).sort();
    expect(segments.length).toBeGreaterThan(2);
    // The second segment is closed (the node appends to the last one only): corrupt the last
    // batch in it, one byte inside its records, past the 61-byte batch header.
    const closed = join(dir, segments[1] as string);
    const victim = batchesOf(closed).at(-1) as { baseOffset: number; at: number; size: number };
    const fd = openSync(closed, 'r+');
    try {
      const byte = Buffer.alloc(1);
      readSync(fd, byte, 0, 1, victim.at + 61 + 20);
      writeSync(fd, Buffer.from([byte[0]! ^ 0xff]), 0, 1, victim.at + 61 + 20);
    } finally {
      closeSync(fd);
    }
    expect(victim.baseOffset).toBeGreaterThan(0);
    const r = await onB('--verify', '--mirror', 'from-a', '--topics', 'verif.*');
    expect(r.code).toBe(1);
    expect(r.out).toContain(
      `${TOPIC}-0: offsets 0..399: first difference at offset ${victim.baseOffset}: the batch at offsets ${victim.baseOffset}..${victim.baseOffset + 19} differs in its bytes (the destination batch fails its CRC-32C check).`,
    );
    expect(r.out).toContain(`${TOPIC}-1: offsets 0..399 identical (20 batches).`);
    expect(r.err).toContain('1 of 2 partitions of mirror from-a differ from the source.');
  });

  it('compares a STOPPED partition up to where its own writes begin', async () => {
    expect((await onB('--stop', '--mirror', 'from-a', '--topics', TOPIC)).code).toBe(0);
    await waitFor('stopped', async () => {
      const rows = JSON.parse((await onB('--describe', '--mirror', 'from-a', '--json')).out) as { state: string }[];
      return rows.length === 2 && rows.every((p) => p.state === 'STOPPED');
    });
    // Both sides go on with writes of their own at the same offsets.
    for (const node of [a, b]) {
      const p = new Kafka({ clientId: 'verify', brokers: [node.bootstrap], logLevel: logLevel.NOTHING }).producer({ allowAutoTopicCreation: false });
      await p.connect();
      await p.send({ topic: TOPIC, acks: -1, messages: Array.from({ length: 20 }, (_, i) => ({ partition: 1, value: `after-stop-${i}` })) });
      await p.disconnect();
    }
    const r = await onB('--verify', '--mirror', 'from-a');
    expect(r.out).toMatch(new RegExp(`${TOPIC}-1: offsets 0\\.\\.4\\d\\d: identical up to offset 399 \\(20 batches\\); from offset 400 on, this cluster's own writes since the stop\\.`));
    // The corrupted partition still differs where it did.
    expect(r.out).toMatch(new RegExp(`${TOPIC}-0: offsets 0\\.\\.\\d+: first difference at offset [1-9]\\d*: the batch at offsets`));
    expect(r.code).toBe(1);
  });

  it('answers a mirror it does not know with exit 1 and bad usage with exit 2', async () => {
    const unknown = await onB('--verify', '--mirror', 'nope');
    expect(unknown.code).toBe(1);
    expect(unknown.err).toContain('UNKNOWN_CLUSTER_MIRROR');
    expect((await onB('--verify')).code).toBe(2);
  });
});
