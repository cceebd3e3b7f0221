/**
 * Checks a fault run's history (workload.ts) against the partition logs the nodes kept, in the
 * spirit of Jepsen's Kafka queue workload. Violations:
 *
 * - `lost`: an acks=all write acknowledged at partition:offset is not at that offset in the
 *   final log (missing, or another record is there);
 * - `inconsistent-offset`: two acks=all writes acknowledged at the same partition:offset;
 * - `duplicate`: one value appears twice in a partition (the raw producers never retry; the
 *   idempotent one retries, and its broker must drop what it already has);
 * - `stale-leader`: a node named itself leader of a partition at an epoch older than one an
 *   answer received before that request was sent had already named;
 * - `stale-ack`: an acks=1 write acknowledged by a node after an answer received before the send
 *   named another node leader at a newer epoch, and then lost (a deposed leader took it);
 * - `diverged`: the replicas' segment files differ at the end;
 * - `bad-read`: a consumer read a record at partition:offset that the final log does not hold
 *   there (it read past what was committed, or a record later cut away);
 * - `offset-backwards`: within one group generation a consumer read an offset of a partition at
 *   or below one it had read before;
 * - `commit-past-end`: a committed group offset is past the partition's final log end;
 * - `aborted-read`: the read_committed consumer read a record of an aborted transaction;
 * - `lost` also: a record of a transaction whose commit was acknowledged is not at the offset its
 *   send was answered with (in no partition, for histories without offsets).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { iterateBatches } from '../../src/protocol/record-batch.js';
import { decodeRecords } from '../../src/protocol/records.js';
import { segmentFiles } from './netns-cluster.js';
import type { HistoryOp } from './workload.js';

export interface Violation {
  readonly kind: 'lost' | 'inconsistent-offset' | 'duplicate' | 'stale-leader' | 'stale-ack' | 'diverged' | 'bad-read' | 'offset-backwards' | 'commit-past-end' | 'aborted-read';
  readonly detail: string;
}

export interface CheckSummary {
  readonly ackedAll: number;
  readonly ackedOne: number;
  /** Of `ackedAll`, those of the idempotent producer. */
  readonly ackedIdempotent: number;
  readonly refused: number;
  readonly metadataAnswers: number;
  readonly consumed: number;
  readonly commits: number;
  readonly transactions: { readonly committed: number; readonly aborted: number; readonly unknown: number };
  readonly violations: readonly Violation[];
}

export function readHistory(path: string): HistoryOp[] {
  const lines = readFileSync(path, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '');
  // A workload killed mid-write leaves its last line cut: that operation's outcome is unknown.
  return lines.flatMap((l, i) => {
    try {
      return [JSON.parse(l) as HistoryOp];
    } catch (e) {
      if (i === lines.length - 1) return [];
      throw e;
    }
  });
}

/** offset → value of every data record in the partition's segments (control batches skipped). */
export function readPartition(dataDir: string, topic: string, partition: number): Map<number, string> {
  const out = new Map<number, string>();
  for (const f of segmentFiles(dataDir, topic, partition)) {
    const buf = readFileSync(join(dataDir, `${topic}-${partition}`, f));
    for (const b of iterateBatches(buf)) {
      if (b.magic !== 2 || b.isControl) continue;
      for (const r of decodeRecords(b)) out.set(r.offset, r.value?.toString() ?? '');
    }
  }
  return out;
}

/** The partition's log end: the offset after its last batch, transaction markers included. */
export function partitionEnd(dataDir: string, topic: string, partition: number): number {
  let end = 0;
  for (const f of segmentFiles(dataDir, topic, partition)) {
    const buf = readFileSync(join(dataDir, `${topic}-${partition}`, f));
    for (const b of iterateBatches(buf)) end = Math.max(end, b.lastOffset + 1);
  }
  return end;
}

/** The bytes of every segment file of the partition, concatenated in name order. */
export function partitionBytes(dataDir: string, topic: string, partition: number): Buffer {
  return Buffer.concat(segmentFiles(dataDir, topic, partition).map((f) => readFileSync(join(dataDir, `${topic}-${partition}`, f))));
}

export function checkHistory(history: readonly HistoryOp[], topic: string, partitions: number, dataDirs: readonly string[]): CheckSummary {
  const violations: Violation[] = [];
  const logs = Array.from({ length: partitions }, (_, p) => readPartition(dataDirs[0]!, topic, p));
  // Replicas byte for byte.
  for (let p = 0; p < partitions; p++) {
    const first = partitionBytes(dataDirs[0]!, topic, p);
    for (let i = 1; i < dataDirs.length; i++) {
      if (!partitionBytes(dataDirs[i]!, topic, p).equals(first)) violations.push({ kind: 'diverged', detail: `${topic}-${p}: replica ${i + 1} differs from replica 1` });
    }
  }
  // Duplicates; a transaction that was not committed leaves records no read_committed reader
  // sees, so a copy there is not one.
  const uncommitted = new Set<string>();
  for (const op of history) if (op.kind === 'txn' && op.outcome !== 'committed') for (const v of op.values) uncommitted.add(v);
  for (let p = 0; p < partitions; p++) {
    const seen = new Map<string, number>();
    for (const [offset, v] of logs[p]!) {
      const prev = seen.get(v);
      if (prev !== undefined && !uncommitted.has(v)) violations.push({ kind: 'duplicate', detail: `${topic}-${p}: ${v} at ${prev} and ${offset}` });
      seen.set(v, offset);
    }
  }
  const md = history.filter((o): o is Extract<HistoryOp, { kind: 'md' }> => o.kind === 'md' && o.leader >= 0).sort((a, b) => a.done - b.done);
  // Per partition, the answers in the order received with the newest (epoch, leader) so far, so
  // that "newest before t" is a binary search (an hour's history holds hundreds of thousands).
  const byPartition = new Map<number, { done: number[]; newest: { epoch: number; leader: number }[] }>();
  for (const m of md) {
    let e = byPartition.get(m.partition);
    if (e === undefined) byPartition.set(m.partition, (e = { done: [], newest: [] }));
    const prev = e.newest.at(-1) ?? { epoch: -1, leader: -1 };
    e.done.push(m.done);
    e.newest.push(m.epoch > prev.epoch ? { epoch: m.epoch, leader: m.leader } : prev);
  }
  /** The newest (epoch, leader) of `partition` among answers received before `t`. */
  const newestBefore = (partition: number, t: number): { epoch: number; leader: number } => {
    const e = byPartition.get(partition);
    if (e === undefined) return { epoch: -1, leader: -1 };
    let lo = 0;
    let hi = e.done.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (e.done[mid]! < t) lo = mid + 1;
      else hi = mid;
    }
    return lo === 0 ? { epoch: -1, leader: -1 } : e.newest[lo - 1]!;
  };
  for (const m of md) {
    if (m.leader !== m.node) continue;
    const newest = newestBefore(m.partition, m.sent);
    if (newest.epoch > m.epoch) violations.push({ kind: 'stale-leader', detail: `node ${m.node} named itself leader of ${topic}-${m.partition} at epoch ${m.epoch} after epoch ${newest.epoch} (leader ${newest.leader}) was known` });
  }
  const byOffset = new Map<string, string>();
  let ackedAll = 0;
  let ackedOne = 0;
  let ackedIdempotent = 0;
  let refused = 0;
  for (const op of history) {
    if (op.kind !== 'produce') continue;
    if (op.error !== 0) {
      refused++;
      continue;
    }
    const at = `${op.partition}:${op.offset}`;
    // An acks=1 write may be cut off with a failed leader's tail and its offset reused (Kafka's
    // contract); only when a stale leader took it is that a violation (stale-ack below).
    if (op.acks === -1) {
      const other = byOffset.get(at);
      if (other !== undefined && other !== op.value) violations.push({ kind: 'inconsistent-offset', detail: `${topic}-${at} acknowledged (acks=all) for ${other} and ${op.value}` });
      byOffset.set(at, op.value);
    }
    const kept = logs[op.partition]!.get(op.offset) === op.value;
    if (op.acks === -1) {
      ackedAll++;
      if (op.producer === 'idem') ackedIdempotent++;
      if (!kept) violations.push({ kind: 'lost', detail: `${op.value} acknowledged (acks=all) by node ${op.node} at ${topic}-${at}, final log has ${logs[op.partition]!.get(op.offset) ?? 'nothing'}` });
    } else {
      ackedOne++;
      const newest = newestBefore(op.partition, op.sent);
      if (!kept && newest.leader >= 0 && newest.leader !== op.node) {
        violations.push({ kind: 'stale-ack', detail: `${op.value} acknowledged (acks=1) by node ${op.node} at ${topic}-${at} after node ${newest.leader} was named leader at epoch ${newest.epoch}, and lost` });
      }
    }
  }
  // The consumer group.
  let consumed = 0;
  let commits = 0;
  const lastRead = new Map<string, number>();
  const ends = Array.from({ length: partitions }, (_, p) => partitionEnd(dataDirs[0]!, topic, p));
  for (const op of history) {
    if (op.kind === 'consume') {
      consumed++;
      const held = logs[op.partition]!.get(op.offset);
      if (held !== op.value) violations.push({ kind: 'bad-read', detail: `${topic}-${op.partition}:${op.offset} read as ${op.value}, final log has ${held ?? 'nothing'}` });
      const k = `${op.generation}:${op.partition}`;
      const prev = lastRead.get(k);
      if (prev !== undefined && op.offset <= prev) violations.push({ kind: 'offset-backwards', detail: `${topic}-${op.partition}: generation ${op.generation} read ${op.offset} after ${prev}` });
      lastRead.set(k, op.offset);
    } else if (op.kind === 'commit') {
      commits++;
      const end = ends[op.partition]!;
      if (op.offset > end) violations.push({ kind: 'commit-past-end', detail: `${topic}-${op.partition}: committed ${op.offset} past the log end ${end}` });
    }
  }
  // Transactions.
  const txns = { committed: 0, aborted: 0, unknown: 0 };
  const aborted = new Set<string>();
  const everywhere = new Set<string>();
  for (const l of logs) for (const v of l.values()) everywhere.add(v);
  for (const op of history) {
    if (op.kind !== 'txn') continue;
    txns[op.outcome]++;
    if (op.outcome === 'aborted') for (const v of op.values) aborted.add(v);
    if (op.outcome !== 'committed') continue;
    op.values.forEach((v, i) => {
      const at = op.offsets?.[i];
      if (at === undefined) {
        if (!everywhere.has(v)) violations.push({ kind: 'lost', detail: `${v} of a committed transaction is in no partition` });
      } else if (logs[at.partition]?.get(at.offset) !== v) {
        violations.push({ kind: 'lost', detail: `${v} of a committed transaction, answered at ${topic}-${at.partition}:${at.offset}, final log has ${logs[at.partition]?.get(at.offset) ?? 'nothing'} there` });
      }
    });
  }
  for (const op of history) {
    if (op.kind === 'consume' && aborted.has(op.value)) violations.push({ kind: 'aborted-read', detail: `${topic}-${op.partition}:${op.offset} ${op.value} read by the read_committed consumer` });
  }
  return { ackedAll, ackedOne, ackedIdempotent, refused, metadataAnswers: md.length, consumed, commits, transactions: txns, violations };
}
