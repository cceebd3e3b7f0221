/**
 * One fault run: a workload (workload.ts) in the client namespace of a netns cluster, faults
 * injected by the caller meanwhile, then the workload stopped, the replicas given time to
 * converge, and the history checked (history-checker.ts).
 */
import type { ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from '../helpers/node.js';
import { checkHistory, partitionBytes, readHistory, type CheckSummary } from './history-checker.js';
import type { NetnsCluster } from './netns-cluster.js';
import type { HistoryOp, WorkloadOptions } from './workload.js';

export interface RunningWorkload {
  readonly history: string;
  ops(): HistoryOp[];
  /** Resolves once `pred` holds for the history so far. */
  until(what: string, pred: (ops: HistoryOp[]) => boolean, timeoutMs?: number): Promise<void>;
  /** Stops the workload (SIGTERM, SIGKILL after 30 s) and waits for it to exit. */
  stop(): Promise<void>;
}

export function startWorkload(cluster: NetnsCluster, dir: string, opts: Omit<WorkloadOptions, 'nodes' | 'history'>): RunningWorkload {
  const history = join(dir, `history-${Date.now()}.jsonl`);
  const nodes: Record<string, string> = {};
  for (const n of cluster.nodes) nodes[String(n.nodeId)] = n.bootstrap;
  const full: WorkloadOptions = { ...opts, nodes, history };
  const proc: ChildProcess = cluster.spawnClient(['node', join(ROOT, 'bench/run.mjs'), join(ROOT, 'test/faults/workload.ts'), JSON.stringify(full)]);
  let err = '';
  proc.stderr!.on('data', (d: Buffer) => (err = (err + d.toString()).slice(-10_000)));
  proc.stdout!.resume();
  const exited = new Promise<void>((r) => proc.once('exit', () => r()));
  const ops = (): HistoryOp[] => (existsSync(history) ? readHistory(history) : []);
  return {
    history,
    ops,
    async until(what, pred, timeoutMs = 60_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        if (proc.exitCode !== null) throw new Error(`the workload exited with ${proc.exitCode} while waiting for ${what}:\n${err}`);
        if (pred(ops())) return;
        if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
        await new Promise((r) => setTimeout(r, 200));
      }
    },
    async stop() {
      if (proc.exitCode === null) proc.kill('SIGTERM');
      // A client library stuck in its disconnect must not hold the check up: killed after 30 s
      // (the history is append-only; an operation cut off has an unknown outcome).
      const kill = setTimeout(() => proc.kill('SIGKILL'), 30_000);
      await exited;
      clearTimeout(kill);
    },
  };
}

/** Waits until every replica of every partition holds the same bytes (false when it never happens). */
export async function converged(cluster: NetnsCluster, topic: string, partitions: number, timeoutMs = 60_000): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    let same = true;
    for (let p = 0; p < partitions && same; p++) {
      const first = partitionBytes(cluster.nodes[0]!.dataDir, topic, p);
      same = cluster.nodes.every((n) => partitionBytes(n.dataDir, topic, p).equals(first));
    }
    if (same) return true;
    if (Date.now() > deadline) return false;
    await new Promise((r) => setTimeout(r, 250));
  }
}

/**
 * How the replicas of a topic's partitions differ, one line per partition that differs (empty
 * when every replica is byte-identical): each node's batches from the first one that is not the
 * same on every node, as `base..last@epoch`, so a failure says which node went where.
 */
export function replicaDifferences(cluster: NetnsCluster, topic: string, partitions: number): string[] {
  const out: string[] = [];
  for (let p = 0; p < partitions; p++) {
    const logs = cluster.nodes.map((n) => batchesOf(partitionBytes(n.dataDir, topic, p)));
    if (logs.every((l) => l.bytes.equals(logs[0]!.bytes))) continue;
    let first = 0;
    while (logs.every((l) => first < l.batches.length && l.batches[first]!.key === logs[0]!.batches[first]!.key)) first++;
    const tails = cluster.nodes.map((n, i) => `node ${n.nodeId}: ${logs[i]!.bytes.length} bytes, from batch ${first}: ${logs[i]!.batches.slice(first, first + 6).map((b) => b.label).join(' ') || '(none)'}`);
    out.push(`${topic}-${p}: ${tails.join('; ')}`);
  }
  return out;
}

/** The batches of a log's bytes: offsets, partition leader epoch, and a key that compares them whole. */
function batchesOf(bytes: Buffer): { bytes: Buffer; batches: { key: string; label: string }[] } {
  const batches: { key: string; label: string }[] = [];
  for (let at = 0; at + 61 <= bytes.length; ) {
    const size = 12 + bytes.readInt32BE(at + 8);
    if (size < 61 || at + size > bytes.length) break;
    const base = bytes.readBigInt64BE(at);
    const last = base + BigInt(bytes.readInt32BE(at + 23));
    const label = `${base}..${last}@${bytes.readInt32BE(at + 12)}${(bytes.readInt16BE(at + 21) & 0x20) !== 0 ? 'c' : ''}`;
    batches.push({ key: bytes.subarray(at, at + size).toString('base64'), label });
    at += size;
  }
  return { bytes, batches };
}

export async function finish(cluster: NetnsCluster, w: RunningWorkload, topic: string, partitions: number): Promise<CheckSummary> {
  await w.stop();
  await converged(cluster, topic, partitions);
  return checkHistory(w.ops(), topic, partitions, cluster.nodes.map((n) => n.dataDir));
}

/** Acknowledged acks=all writes in the history so far. */
export const ackedAll = (ops: readonly HistoryOp[]): number => ops.filter((o) => o.kind === 'produce' && o.acks === -1 && o.error === 0).length;

/** The partitions the newest Metadata answers name `nodeId` leader of. */
export function ledBy(ops: readonly HistoryOp[], nodeId: number): number[] {
  const newest = new Map<number, { epoch: number; leader: number }>();
  for (const o of ops) {
    if (o.kind !== 'md' || o.leader < 0) continue;
    const cur = newest.get(o.partition);
    if (cur === undefined || o.epoch > cur.epoch) newest.set(o.partition, { epoch: o.epoch, leader: o.leader });
  }
  return [...newest].filter(([, v]) => v.leader === nodeId).map(([p]) => p);
}

/** Log lines of a node with the message `msg`, parsed. */
export function logLines(logs: string, msg: string): Record<string, unknown>[] {
  return logs
    .split('\n')
    .filter((l) => l.includes(`"msg":"${msg}"`))
    .map((l) => {
      try {
        return JSON.parse(l) as Record<string, unknown>;
      } catch {
        return {};
      }
    });
}

export function readText(path: string): string {
  return existsSync(path) ? readFileSync(path, 'utf8') : '';
}
