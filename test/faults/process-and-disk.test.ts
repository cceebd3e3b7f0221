/**
 * Faults of one node's process and disk, with the workload and the checker of the network cases:
 *
 * - a leader paused (SIGSTOP) past the session timeout, then resumed: it must not acknowledge a
 *   write its lease no longer covers, it comes back as a follower, and nothing acknowledged is lost;
 * - a node whose log dir (a real 32 MiB tmpfs) runs out of space: writes it cannot make are
 *   refused (KAFKA_STORAGE_ERROR), none acknowledged is lost, and once space is freed its
 *   replicas catch up to byte-identical;
 * - a leader's wall clock jumped an hour forward and then back (libfaketime, monotonic clock
 *   left alone): its lease and timeouts run on the monotonic clock, so it is never fenced for
 *   it, and nothing acknowledged is lost;
 * - a node whose partition logs fail with EIO (disk-faults.mjs, preloaded into that node): on
 *   write, each failed write is undone and refused (KAFKA_STORAGE_ERROR), and the partitions it
 *   leads take writes again once the disk does; on fsync, the node halts as a Kafka broker whose
 *   last log dir failed, the others lead its partitions, and restarted it catches up. Nothing
 *   acknowledged is lost either way.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ackedAll, finish, ledBy, logLines, readText, startWorkload } from './fault-run.js';
import type { HistoryOp } from './workload.js';
import { ROOT } from '../helpers/node.js';
import { startNetnsCluster, type NetnsCluster } from './netns-cluster.js';

const TOPIC = 'faults';
const PARTITIONS = 3;
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
/** acks=all writes acknowledged on `partition`. */
const ackedOn = (ops: readonly HistoryOp[], partition: number): number => ops.filter((o) => o.kind === 'produce' && o.acks === -1 && o.error === 0 && o.partition === partition).length;
/** Writes refused with KAFKA_STORAGE_ERROR on `partitions`. */
const storageErrors = (ops: readonly HistoryOp[], partitions: readonly number[]): number =>
  ops.filter((o) => o.kind === 'produce' && o.error === 56 && partitions.includes(o.partition)).length;
const FAKETIME = '/usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1';

describe.skipIf(process.getuid?.() !== 0)('process and disk faults', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'fjord-faults-'));
  });
  afterAll(() => {
    if (process.env.FJORD_FAULTS_KEEP !== '1') rmSync(dir, { recursive: true, force: true });
  });

  it('a leader paused past the session timeout and resumed acknowledges nothing stale and loses nothing', async () => {
    let cluster: NetnsCluster | null = null;
    try {
      cluster = await startNetnsCluster({ tag: 43, nodes: 3 });
      const c = cluster;
      const w = startWorkload(c, dir, { topic: TOPIC, partitions: PARTITIONS, acksOneTo: 1 });
      await w.until('acks=all writes and node 1 leading', (ops) => ackedAll(ops) >= 60 && ledBy(ops, 1).length > 0);
      const led = ledBy(w.ops(), 1);
      const n1 = c.node(1);
      const caughtUp = logLines(n1.logs(), 'broker metadata caught up').length;
      n1.pause();
      await w.until('new leaders of node 1 partitions', (ops) => led.every((p) => !ledBy(ops, 1).includes(p)), 60_000);
      await sleep(3000);
      n1.resume();
      await w.until('node 1 back and caught up', () => logLines(n1.logs(), 'broker metadata caught up').length > caughtUp, 60_000);
      const wrote = ackedAll(w.ops());
      await w.until('acks=all writes again', (ops) => ackedAll(ops) >= wrote + 30, 60_000);
      const summary = await finish(c, w, TOPIC, PARTITIONS);
      console.log(`fault figures (pause): ${JSON.stringify({ ...summary, violations: summary.violations.length })}`);
      expect(summary.violations.map((v) => `${v.kind}: ${v.detail}`)).toEqual([]);
    } finally {
      await cluster?.destroy();
    }
  }, 300_000);

  it.skipIf(!existsSync(FAKETIME))('a leader whose wall clock jumps an hour forward and back is not fenced for it and loses nothing', async () => {
    let cluster: NetnsCluster | null = null;
    const clockFile = join(dir, 'clock-offset');
    writeFileSync(clockFile, '+0');
    try {
      cluster = await startNetnsCluster({
        tag: 45,
        nodes: 3,
        env: (id) =>
          id === 1 ? { LD_PRELOAD: FAKETIME, FAKETIME_TIMESTAMP_FILE: clockFile, FAKETIME_CACHE_DURATION: '1', FAKETIME_DONT_FAKE_MONOTONIC: '1' } : undefined,
      });
      const c = cluster;
      const w = startWorkload(c, dir, { topic: TOPIC, partitions: PARTITIONS });
      await w.until('acks=all writes and node 1 leading', (ops) => ackedAll(ops) >= 60 && ledBy(ops, 1).length > 0);
      const n1 = c.node(1);
      for (const offset of ['+1h', '+0']) {
        writeFileSync(clockFile, offset);
        const wrote = ackedAll(w.ops());
        await w.until(`acks=all writes with the clock at ${offset}`, (ops) => ackedAll(ops) >= wrote + 100, 60_000);
      }
      const summary = await finish(c, w, TOPIC, PARTITIONS);
      console.log(`fault figures (clock jump): ${JSON.stringify({ ...summary, violations: summary.violations.length })}`);
      expect(logLines(n1.logs(), 'broker fenced')).toEqual([]);
      expect(summary.violations.map((v) => `${v.kind}: ${v.detail}`)).toEqual([]);
    } finally {
      await cluster?.destroy();
    }
  }, 300_000);

  it('a node whose log dir is full refuses what it cannot write, loses nothing acknowledged, and catches up once space is freed', async () => {
    let cluster: NetnsCluster | null = null;
    const mnt = join(dir, 'small-disk');
    mkdirSync(mnt, { recursive: true });
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=32m', 'tmpfs', mnt]);
    try {
      const logDir = join(mnt, 'node-3');
      cluster = await startNetnsCluster({ tag: 44, nodes: 3, logDir: (id) => (id === 3 ? logDir : undefined) });
      const c = cluster;
      const w = startWorkload(c, dir, { topic: TOPIC, partitions: PARTITIONS });
      await w.until('acks=all writes on every partition', (ops) => ackedAll(ops) >= 60 && [1, 2, 3].every((n) => ledBy(ops, n).length > 0));
      // Fill the disk: dd stops at ENOSPC.
      try {
        execFileSync('dd', ['if=/dev/zero', `of=${join(mnt, 'filler')}`, 'bs=1M'], { stdio: 'ignore' });
      } catch {
        // ENOSPC: the disk is full, as wanted.
      }
      const wrote = ackedAll(w.ops());
      // The writes node 3 cannot take are refused; the two others keep acks=all going.
      await w.until('refusals for lack of space, and writes on', (ops) => ops.some((o) => o.kind === 'produce' && o.error === 56) && ackedAll(ops) >= wrote + 60, 120_000);
      rmSync(join(mnt, 'filler'));
      const after = ackedAll(w.ops());
      await w.until('acks=all writes after space came back', (ops) => ackedAll(ops) >= after + 60, 60_000);
      const summary = await finish(c, w, TOPIC, PARTITIONS);
      console.log(`fault figures (ENOSPC): ${JSON.stringify({ ...summary, violations: summary.violations.length })}`);
      expect(summary.violations.map((v) => `${v.kind}: ${v.detail}`)).toEqual([]);
    } finally {
      await cluster?.destroy();
      execFileSync('umount', ['-l', mnt]);
    }
  }, 300_000);

  it('a node whose partition logs fail with EIO refuses those writes, halts on a failed fsync, and loses nothing acknowledged', async () => {
    let cluster: NetnsCluster | null = null;
    const trigger = join(dir, 'disk-faults');
    const hits = (): number => Number(readText(`${trigger}.hits`) || '0');
    const logDir3 = join(dir, 'eio-node-3');
    try {
      cluster = await startNetnsCluster({
        tag: 46,
        nodes: 3,
        logDir: (id) => (id === 3 ? logDir3 : undefined),
        nodeArgs: (id) => (id === 3 ? ['--import', join(ROOT, 'test/faults/disk-faults.mjs')] : undefined),
        env: (id) => (id === 3 ? { FJORD_DISK_FAULTS: trigger, FJORD_DISK_FAULTS_LOG_DIR: logDir3 } : undefined),
      });
      const c = cluster;
      const n3 = c.node(3);
      const w = startWorkload(c, dir, { topic: TOPIC, partitions: PARTITIONS });
      await w.until('acks=all writes on every partition', (ops) => ackedAll(ops) >= 60 && [1, 2, 3].every((n) => ledBy(ops, n).length > 0));
      const led = ledBy(w.ops(), 3);
      const all = [...Array(PARTITIONS).keys()];

      // EIO on write: node 3 undoes the write and refuses it; it keeps its leaderships, so the
      // partitions it leads take no writes meanwhile, and take them again once the disk does.
      writeFileSync(trigger, JSON.stringify({ op: 'write', dirPrefix: `${TOPIC}-` }));
      let from = w.ops().length;
      await w.until('EIO on write refused at node 3, writes on elsewhere', (ops) => hits() > 0 && storageErrors(ops.slice(from), led) >= 20 && ackedAll(ops.slice(from)) >= 60, 120_000);
      const writeFigures = { failedCalls: hits(), refused: storageErrors(w.ops().slice(from), led) };
      writeFileSync(trigger, '');
      from = w.ops().length;
      await w.until('acks=all writes on every partition once the disk writes again', (ops) => all.every((p) => ackedOn(ops.slice(from), p) >= 10), 120_000);
      expect(n3.process).not.toBeNull();

      // EIO on fsync: node 3 can no longer tell what its log holds; it halts, the others lead.
      writeFileSync(trigger, JSON.stringify({ op: 'fsync', dirPrefix: `${TOPIC}-` }));
      const faultAt = Date.now();
      await w.until('node 3 halted', () => n3.process === null, 120_000);
      const haltedMs = Date.now() - faultAt;
      expect(logLines(n3.logs(), 'log dir failed, halting').length).toBe(1);
      from = w.ops().length;
      await w.until('acks=all writes on every partition without node 3', (ops) => all.every((p) => ackedOn(ops.slice(from), p) >= 10), 120_000);
      const failoverMs = Date.now() - faultAt;
      // Back with a working disk: recovery, then it follows and rejoins the ISRs.
      writeFileSync(trigger, '');
      const caughtUp = logLines(n3.logs(), 'broker metadata caught up').length;
      await n3.start();
      await w.until('node 3 back and caught up', () => logLines(n3.logs(), 'broker metadata caught up').length > caughtUp, 60_000);
      from = w.ops().length;
      await w.until('acks=all writes on every partition after', (ops) => all.every((p) => ackedOn(ops.slice(from), p) >= 10), 60_000);
      const summary = await finish(c, w, TOPIC, PARTITIONS);
      console.log(`fault figures (EIO): ${JSON.stringify({ write: writeFigures, fsync: { haltedMs, failoverMs }, ...summary, violations: summary.violations.length })}`);
      expect(summary.violations.map((v) => `${v.kind}: ${v.detail}`)).toEqual([]);
    } finally {
      await cluster?.destroy();
    }
  }, 300_000);
});
