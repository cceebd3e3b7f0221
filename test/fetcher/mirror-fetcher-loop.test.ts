/**
 * The mirror fetcher's loop against a scripted source (a `SourceEndpoint` double that behaves as
 * a small Kafka broker: leaders and epochs per partition, batches at offsets, one fetch session,
 * long polls on the injected timers) and real partition logs on disk. Time is a manual clock:
 * backoffs and the unreachable limit pass when the test moves it, never by waiting.
 *
 * Covered: the per-partition error table (NOT_LEADER_OR_FOLLOWER naming a new leader,
 * FENCED_LEADER_EPOCH, UNKNOWN_LEADER_EPOCH, OFFSET_OUT_OF_RANGE both ways,
 * UNKNOWN_TOPIC_OR_PARTITION transient and for good, an error outside the table), truncation with
 * OffsetsForLeaderEpoch, fetch-session errors, epoch fencing, a batch failing its CRC-32C and an unreachable source.
 * The real-source counterparts are mirror-fetcher-kafka.test.ts and mirror-fetcher-fjord.test.ts.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import type { FetcherTimers } from '../../src/fetcher/fetcher-timers.js';
import { MirrorFetcher } from '../../src/fetcher/mirror-fetcher.js';
import type { MirrorTopicPartition } from '../../src/fetcher/partition-state.js';
import type {
  EpochEndOffset,
  EpochRequest,
  FetchPartitionResponse,
  FetchRequest,
  FetchResponse,
  ListOffsetsPartitionRequest,
  ListOffsetsPartitionResult,
  SourceEndpoint,
  SourceMetadata,
} from '../../src/fetcher/source-endpoint.js';
import { ErrorCode } from '../../src/protocol/generated/errors.js';
import { KafkaError } from '../../src/protocol/kafka-error.js';
import { RecordBatchView } from '../../src/protocol/record-batch.js';
import { buildRecordBatch } from '../../src/protocol/records.js';
import { ManualClock } from '../../src/storage/clock.js';
import { logConfig } from '../../src/storage/log-config.js';
import { PartitionLog } from '../../src/storage/partition-log.js';

const TOPIC = 'orders';
const TOPIC_ID = '5f1c2a9e-0b7d-4c3e-9a61-2d8e4f6b7c10';
const SESSION_ID = 7;
const BACKOFF_MS = 100;

/** Timers on the manual clock: `runNext` moves the clock to the next one and runs it. */
class ManualTimers implements FetcherTimers {
  private queue: { at: number; fn: () => void }[] = [];
  constructor(private readonly clock: ManualClock) {}
  schedule(delayMs: number, fn: () => void): () => void {
    const entry = { at: this.clock.now() + Math.max(0, delayMs), fn };
    this.queue.push(entry);
    return () => {
      this.queue = this.queue.filter((e) => e !== entry);
    };
  }
  runNext(): boolean {
    this.queue.sort((a, b) => a.at - b.at);
    const e = this.queue.shift();
    if (e === undefined) return false;
    if (e.at > this.clock.now()) this.clock.set(e.at);
    e.fn();
    return true;
  }
}

function batch(baseOffset: number, epoch: number, count: number): Buffer {
  return buildRecordBatch({ baseOffset, partitionLeaderEpoch: epoch, now: 1_700_000_000_000, records: Array.from({ length: count }, (_, i) => ({ value: Buffer.from(`v${baseOffset + i}`) })) });
}

interface SourcePartition {
  leaderId: number;
  leaderEpoch: number;
  logStartOffset: number;
  batches: Buffer[];
}

type PartitionError = { errorCode: number; leaderId?: number; leaderEpoch?: number };

/**
 * A scripted source cluster: one topic, partitions with a leader, an epoch and batches. It answers
 * as a Kafka broker would (leader and epoch checks, out of range, the largest epoch at or below
 * the one asked for), and scripted one-shot errors go first.
 */
class ScriptedSource implements SourceEndpoint {
  readonly parts = new Map<number, SourcePartition>();
  topicExists = true;
  /** False: NOT_LEADER_OR_FOLLOWER / FENCED_LEADER_EPOCH answers name no current leader. */
  namesLeader = true;
  /** True: every broker is down, each call fails as a refused connection does. */
  unreachable = false;
  readonly fetches: { brokerId: number; req: FetchRequest; at: number }[] = [];
  readonly calls: string[] = [];
  /** Virtual time of each call, per broker. */
  readonly callTimes: { brokerId: number; at: number }[] = [];
  private readonly partitionErrors = new Map<number, PartitionError[]>();
  private readonly topLevelErrors: number[] = [];
  private readonly session = new Map<number, { fetchOffset: number; epoch: number }>();

  constructor(
    private readonly timers: FetcherTimers,
    private readonly clock: ManualClock,
  ) {}

  partitionLeo(p: SourcePartition): number {
    const last = p.batches.at(-1);
    return last === undefined ? p.logStartOffset : new RecordBatchView(last).nextOffset;
  }

  failNext(partition: number, e: PartitionError): void {
    const list = this.partitionErrors.get(partition) ?? [];
    list.push(e);
    this.partitionErrors.set(partition, list);
  }

  failNextFetch(errorCode: number): void {
    this.topLevelErrors.push(errorCode);
  }

  private down(brokerId: number | null): void {
    if (brokerId !== null) this.callTimes.push({ brokerId, at: this.clock.now() });
    if (this.unreachable) throw new KafkaError(ErrorCode.NETWORK_EXCEPTION, `broker ${brokerId ?? 1}: connection refused`);
  }

  async metadata(topics: readonly string[]): Promise<SourceMetadata> {
    this.calls.push('metadata');
    this.down(null);
    if (!this.topicExists) return { topics: topics.map((name) => ({ errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, name, topicId: '00000000-0000-0000-0000-000000000000', partitions: [] })) };
    const partitions = [...this.parts].map(([partition, p]) => ({ errorCode: 0, partition, leaderId: p.leaderId, leaderEpoch: p.leaderEpoch }));
    return { topics: [{ errorCode: 0, name: TOPIC, topicId: TOPIC_ID, partitions }] };
  }

  async fetch(brokerId: number, req: FetchRequest): Promise<FetchResponse> {
    this.fetches.push({ brokerId, req, at: this.clock.now() });
    this.down(brokerId);
    const top = this.topLevelErrors.shift();
    if (top !== undefined) return { errorCode: top, sessionId: 0, topics: [] };
    if (req.sessionId === 0) this.session.clear();
    for (const f of req.forgotten) for (const p of f.partitions) this.session.delete(p);
    for (const t of req.topics) for (const p of t.partitions) this.session.set(p.partition, { fetchOffset: p.fetchOffset, epoch: p.currentLeaderEpoch });
    const answers: FetchPartitionResponse[] = [];
    let withData = false;
    for (const [partition, s] of this.session) {
      const a = this.answer(brokerId, partition, s.fetchOffset, s.epoch);
      if (a.errorCode !== 0 || a.records !== null) withData = true;
      if (req.sessionId === 0 || a.errorCode !== 0 || a.records !== null) answers.push(a);
    }
    // A long poll: nothing to return waits maxWaitMs (on the injected timers).
    if (!withData) await new Promise<void>((resolve) => this.timers.schedule(req.maxWaitMs, resolve));
    return { errorCode: 0, sessionId: SESSION_ID, topics: answers.length > 0 ? [{ topicId: TOPIC_ID, partitions: answers }] : [] };
  }

  private answer(brokerId: number, partition: number, fetchOffset: number, epoch: number): FetchPartitionResponse {
    const p = this.parts.get(partition);
    const none = { partition, highWatermark: -1, lastStableOffset: -1, logStartOffset: -1, currentLeaderId: -1, currentLeaderEpoch: -1, records: null };
    const scripted = this.partitionErrors.get(partition)?.shift();
    if (scripted !== undefined) return { ...none, errorCode: scripted.errorCode, currentLeaderId: scripted.leaderId ?? -1, currentLeaderEpoch: scripted.leaderEpoch ?? -1 };
    if (!this.topicExists || p === undefined) return { ...none, errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION };
    const leader = this.namesLeader ? { currentLeaderId: p.leaderId, currentLeaderEpoch: p.leaderEpoch } : {};
    if (brokerId !== p.leaderId) return { ...none, ...leader, errorCode: ErrorCode.NOT_LEADER_OR_FOLLOWER };
    if (epoch < p.leaderEpoch) return { ...none, ...leader, errorCode: ErrorCode.FENCED_LEADER_EPOCH };
    if (epoch > p.leaderEpoch) return { ...none, errorCode: ErrorCode.UNKNOWN_LEADER_EPOCH };
    const leo = this.partitionLeo(p);
    if (fetchOffset < p.logStartOffset || fetchOffset > leo) return { ...none, errorCode: ErrorCode.OFFSET_OUT_OF_RANGE };
    const from = p.batches.filter((b) => new RecordBatchView(b).lastOffset >= fetchOffset);
    return { ...none, errorCode: 0, highWatermark: leo, lastStableOffset: leo, logStartOffset: p.logStartOffset, records: from.length > 0 ? Buffer.concat(from) : null };
  }

  async listOffsets(brokerId: number, parts: readonly ListOffsetsPartitionRequest[]): Promise<ListOffsetsPartitionResult[]> {
    this.calls.push(`listOffsets@${brokerId}:${parts.map((p) => p.timestamp).join(',')}`);
    this.down(brokerId);
    return parts.map((r) => {
      const p = this.parts.get(r.partition)!;
      return { topic: r.topic, partition: r.partition, errorCode: 0, offset: r.timestamp === -2 ? p.logStartOffset : this.partitionLeo(p), leaderEpoch: p.leaderEpoch };
    });
  }

  async offsetsForLeaderEpoch(brokerId: number, parts: readonly EpochRequest[]): Promise<EpochEndOffset[]> {
    this.calls.push(`epochs@${brokerId}:${parts.map((p) => `${p.partition}/${p.leaderEpoch}`).join(',')}`);
    this.down(brokerId);
    return parts.map((r) => {
      const p = this.parts.get(r.partition)!;
      if (brokerId !== p.leaderId) return { topic: r.topic, partition: r.partition, errorCode: ErrorCode.NOT_LEADER_OR_FOLLOWER, leaderEpoch: -1, endOffset: -1 };
      // Kafka's LeaderEpochFileCache.endOffsetFor: the largest epoch at or below the one asked
      // for, and where the next epoch starts (the log end for the latest).
      const starts: { epoch: number; start: number }[] = [];
      for (const b of p.batches) {
        const v = new RecordBatchView(b);
        if (starts.at(-1)?.epoch !== v.partitionLeaderEpoch) starts.push({ epoch: v.partitionLeaderEpoch, start: v.baseOffset });
      }
      const at = starts.filter((s) => s.epoch <= r.leaderEpoch).at(-1);
      if (at === undefined) return { topic: r.topic, partition: r.partition, errorCode: 0, leaderEpoch: -1, endOffset: -1 };
      const next = starts.find((s) => s.epoch > at.epoch);
      return { topic: r.topic, partition: r.partition, errorCode: 0, leaderEpoch: at.epoch, endOffset: next?.start ?? this.partitionLeo(p) };
    });
  }
}

interface Harness {
  source: ScriptedSource;
  fetcher: MirrorFetcher;
  clock: ManualClock;
  logs: Map<number, PartitionLog>;
  failed: { partition: number; err: Error; nonRetryable: boolean }[];
  fenced: { partition: number; epoch: number }[];
  bumps: number[];
  tp(partition: number): MirrorTopicPartition;
  /** Runs the fetcher until `cond` holds: real I/O settles, then virtual time moves timer by timer. */
  until(what: string, cond: () => boolean): Promise<void>;
  /** The local log's bytes from its start. */
  bytes(partition: number): Promise<Buffer>;
}

const work = mkdtempSync(join(tmpdir(), 'fjord-fetcher-loop-'));
const open: { fetcher: MirrorFetcher; logs: PartitionLog[] }[] = [];
let dirs = 0;

afterEach(async () => {
  for (const o of open.splice(0)) {
    await o.fetcher.close();
    for (const l of o.logs) await l.close();
  }
});

afterAll(() => rmSync(work, { recursive: true, force: true }));

async function harness(partitions: Record<number, Partial<SourcePartition>>, dle = 1000): Promise<Harness> {
  const clock = new ManualClock();
  const timers = new ManualTimers(clock);
  const source = new ScriptedSource(timers, clock);
  const logs = new Map<number, PartitionLog>();
  for (const [k, v] of Object.entries(partitions)) {
    const partition = Number(k);
    source.parts.set(partition, { leaderId: 1, leaderEpoch: 0, logStartOffset: 0, batches: [], ...v });
    logs.set(partition, await PartitionLog.open({ dir: join(work, `${TOPIC}-${partition}-${dirs++}`), topicId: TOPIC_ID, config: logConfig() }));
  }
  const failed: Harness['failed'] = [];
  const fenced: Harness['fenced'] = [];
  const bumps: number[] = [];
  const fetcher = new MirrorFetcher(
    source,
    {
      log: (tp) => logs.get(tp.partition),
      destinationLeaderEpoch: () => dle,
      onEpochFenced: (tp, epoch) => fenced.push({ partition: tp.partition, epoch }),
      requestEpochBump: (_tp, min) => bumps.push(min),
      onPartitionFailed: (tp, err, nonRetryable) => failed.push({ partition: tp.partition, err, nonRetryable }),
    },
    { maxWaitMs: 500, backoffMs: BACKOFF_MS, unreachableFailMs: 5_000 },
    clock,
    timers,
  );
  open.push({ fetcher, logs: [...logs.values()] });
  const settle = async (): Promise<void> => {
    for (let i = 0; i < 3; i++) await new Promise((r) => setImmediate(r));
  };
  return {
    source,
    fetcher,
    clock,
    logs,
    failed,
    fenced,
    bumps,
    tp: (partition) => ({ topic: TOPIC, topicId: TOPIC_ID, partition }),
    async until(what, cond) {
      for (let round = 0; round < 2000; round++) {
        await settle();
        if (cond()) return;
        if (!timers.runNext()) await new Promise((r) => setTimeout(r, 1));
      }
      throw new Error(`the fetcher never got to: ${what}`);
    },
    async bytes(partition) {
      const log = logs.get(partition)!;
      const r = await log.readToBuffer({ fetchOffset: log.logStartOffset, maxOffset: log.logEndOffset, maxBytes: 1 << 20, minOneMessage: true });
      return r.records;
    },
  };
}

describe('MirrorFetcher loop against a scripted source', () => {
  it('copies batches byte for byte at the source offsets, then fetches incrementally in one session', async () => {
    const src = [batch(0, 0, 3), batch(3, 0, 2)];
    const h = await harness({ 0: { batches: [...src] }, 1: { batches: [batch(0, 0, 1)] } });
    h.fetcher.addPartitions([h.tp(0), h.tp(1)]);
    await h.until('both copied', () => h.logs.get(0)!.logEndOffset === 5 && h.logs.get(1)!.logEndOffset === 1);
    h.source.parts.get(0)!.batches.push(batch(5, 0, 4));
    await h.until('the tail copied', () => h.logs.get(0)!.logEndOffset === 9);
    expect((await h.bytes(0)).equals(Buffer.concat([...src, batch(5, 0, 4)]))).toBe(true);
    const [first, ...rest] = h.source.fetches;
    expect(first?.req).toMatchObject({ sessionId: 0, sessionEpoch: 0 });
    expect(first?.req.topics[0]?.partitions.map((p) => p.partition).sort()).toEqual([0, 1]);
    // Incremental requests name only partitions whose position changed.
    expect(rest[0]?.req).toMatchObject({ sessionId: SESSION_ID, sessionEpoch: 1 });
    expect(rest.every((f) => f.req.topics.every((t) => t.partitions.every((p) => p.partition === 0 || p.fetchOffset !== 0)))).toBe(true);
    expect(h.fetcher.stats.recordsDecoded).toBe(0);
    expect(h.failed).toEqual([]);
  });

  it('NOT_LEADER_OR_FOLLOWER naming the new leader: truncates against it and fetches from it', async () => {
    const h = await harness({ 0: { batches: [batch(0, 0, 3)] } });
    h.fetcher.addPartitions([h.tp(0)]);
    await h.until('copied from broker 1', () => h.logs.get(0)!.logEndOffset === 3);
    const p = h.source.parts.get(0)!;
    p.leaderId = 2;
    p.leaderEpoch = 1;
    p.batches.push(batch(3, 1, 2));
    await h.until('copied from broker 2', () => h.logs.get(0)!.logEndOffset === 5);
    expect(h.source.calls).toContain('epochs@2:0/0');
    // Re-homed on the answer itself: no backoff passed before broker 2 was asked.
    const refused = h.source.fetches.filter((f) => f.brokerId === 1).at(-1)!;
    const firstToTwo = h.source.callTimes.find((c) => c.brokerId === 2)!;
    expect(firstToTwo.at).toBe(refused.at);
    expect(h.source.fetches.at(-1)?.brokerId).toBe(2);
    expect(h.fetcher.status(h.tp(0))).toMatchObject({ sourceLeaderId: 2, sourceLeaderEpoch: 1, state: 'fetching' });
    expect(h.failed).toEqual([]);
  });

  it('FENCED_LEADER_EPOCH without a named leader: backs off, refreshes metadata, goes on at the new epoch', async () => {
    const h = await harness({ 0: { batches: [batch(0, 0, 3)] } });
    h.source.namesLeader = false;
    h.fetcher.addPartitions([h.tp(0)]);
    await h.until('copied', () => h.logs.get(0)!.logEndOffset === 3);
    const metadataBefore = h.source.calls.filter((c) => c === 'metadata').length;
    const p = h.source.parts.get(0)!;
    p.leaderEpoch = 4;
    p.batches.push(batch(3, 4, 2));
    await h.until('copied at epoch 4', () => h.logs.get(0)!.logEndOffset === 5);
    expect(h.source.calls.filter((c) => c === 'metadata').length).toBeGreaterThan(metadataBefore);
    expect(h.fetcher.status(h.tp(0))?.sourceLeaderEpoch).toBe(4);
    expect(h.failed).toEqual([]);
  });

  it('UNKNOWN_LEADER_EPOCH: retries after the backoff and loses nothing', async () => {
    const h = await harness({ 0: { batches: [batch(0, 0, 3)] } });
    h.source.failNext(0, { errorCode: ErrorCode.UNKNOWN_LEADER_EPOCH });
    h.fetcher.addPartitions([h.tp(0)]);
    const start = h.clock.now();
    await h.until('copied', () => h.logs.get(0)!.logEndOffset === 3);
    expect(h.clock.now() - start).toBeGreaterThanOrEqual(BACKOFF_MS);
    expect(h.source.fetches.length).toBeGreaterThanOrEqual(2);
    expect(h.failed).toEqual([]);
  });

  it('OFFSET_OUT_OF_RANGE below the source log start: restarts the local log there', async () => {
    const h = await harness({ 0: { logStartOffset: 50, batches: [batch(50, 0, 5)] } });
    // What we copied before the source deleted its head (and what followed, unseen).
    await h.logs.get(0)!.appendAsMirror(batch(0, 0, 3));
    h.fetcher.addPartitions([h.tp(0)]);
    await h.until('copied from 50', () => h.logs.get(0)!.logEndOffset === 55);
    expect(h.logs.get(0)!.logStartOffset).toBe(50);
    expect(h.source.calls).toEqual(expect.arrayContaining(['listOffsets@1:-2', 'listOffsets@1:-1']));
    expect((await h.bytes(0)).equals(batch(50, 0, 5))).toBe(true);
    expect(h.failed).toEqual([]);
  });

  it('OFFSET_OUT_OF_RANGE above the source log end: truncates the local log to it', async () => {
    const h = await harness({ 0: { batches: [batch(0, -1, 4)] } });
    // Batches without a partition leader epoch leave the epoch cache empty: no truncating phase.
    await h.logs.get(0)!.appendAsMirror(Buffer.concat([batch(0, -1, 4), batch(4, -1, 6)]));
    h.fetcher.addPartitions([h.tp(0)]);
    await h.until('truncated to the source end', () => h.logs.get(0)!.logEndOffset === 4 && h.fetcher.status(h.tp(0))?.fetchOffset === 4);
    h.source.parts.get(0)!.batches.push(batch(4, -1, 1));
    await h.until('then copied', () => h.logs.get(0)!.logEndOffset === 5);
    expect(h.source.calls).toContain('listOffsets@1:-1');
    expect(h.failed).toEqual([]);
  });

  it('truncates a diverged local log with OffsetsForLeaderEpoch, then copies the source history', async () => {
    const shared = batch(0, 0, 10);
    const src = [shared, batch(10, 2, 5), batch(15, 2, 5)];
    const h = await harness({ 0: { leaderEpoch: 2, batches: [...src] } });
    // Offsets 10..14 at epoch 1 exist only here (an unclean election on the old side).
    await h.logs.get(0)!.appendAsMirror(Buffer.concat([shared, batch(10, 1, 5)]));
    h.fetcher.addPartitions([h.tp(0)]);
    await h.until('converged', () => h.logs.get(0)!.logEndOffset === 20);
    expect(h.source.calls).toContain('epochs@1:0/1');
    expect((await h.bytes(0)).equals(Buffer.concat(src))).toBe(true);
    expect(h.failed).toEqual([]);
  });

  it('UNKNOWN_TOPIC_OR_PARTITION: a transient one is retried; a deleted source topic fails for good', async () => {
    const h = await harness({ 0: { batches: [batch(0, 0, 2)] } });
    h.source.failNext(0, { errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION });
    h.fetcher.addPartitions([h.tp(0)]);
    await h.until('copied after the transient error', () => h.logs.get(0)!.logEndOffset === 2);
    expect(h.failed).toEqual([]);
    h.source.topicExists = false;
    await h.until('failed', () => h.failed.length > 0);
    expect(h.failed).toHaveLength(1);
    expect(h.failed[0]).toMatchObject({ partition: 0, nonRetryable: true, err: { code: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, message: 'The source topic is deleted.' } });
    expect(h.fetcher.has(h.tp(0))).toBe(false);
  });

  it.each([ErrorCode.FETCH_SESSION_ID_NOT_FOUND, ErrorCode.INVALID_FETCH_SESSION_EPOCH])('fetch-session error %i: the next request is full again', async (code) => {
    const h = await harness({ 0: { batches: [batch(0, 0, 2)] }, 1: { batches: [batch(0, 0, 1)] } });
    h.fetcher.addPartitions([h.tp(0), h.tp(1)]);
    await h.until('copied', () => h.logs.get(0)!.logEndOffset === 2 && h.logs.get(1)!.logEndOffset === 1);
    await h.until('in an incremental session', () => h.source.fetches.length >= 3);
    const lost = h.source.fetches.length;
    h.source.failNextFetch(code);
    h.source.parts.get(1)!.batches.push(batch(1, 0, 1));
    await h.until('copied after the session was lost', () => h.logs.get(1)!.logEndOffset === 2);
    const after = h.source.fetches.slice(lost);
    expect(after[0]?.req.sessionId).toBe(SESSION_ID);
    expect(after[1]?.req).toMatchObject({ sessionId: 0, sessionEpoch: 0 });
    expect(after[1]?.req.topics[0]?.partitions.map((p) => p.partition).sort()).toEqual([0, 1]);
    expect(after[2]?.req).toMatchObject({ sessionId: SESSION_ID, sessionEpoch: 1 });
    expect(h.failed).toEqual([]);
  });

  it('an error outside the table fails that partition only; the others keep going', async () => {
    const h = await harness({ 0: { batches: [batch(0, 0, 2)] }, 1: { batches: [batch(0, 0, 2)] } });
    h.source.failNext(0, { errorCode: ErrorCode.TOPIC_AUTHORIZATION_FAILED });
    h.fetcher.addPartitions([h.tp(0), h.tp(1)]);
    await h.until('partition 1 copied', () => h.logs.get(1)!.logEndOffset === 2);
    h.source.parts.get(1)!.batches.push(batch(2, 0, 3));
    await h.until('partition 1 goes on', () => h.logs.get(1)!.logEndOffset === 5);
    expect(h.failed).toHaveLength(1);
    expect(h.failed[0]).toMatchObject({ partition: 0, nonRetryable: false, err: { code: ErrorCode.TOPIC_AUTHORIZATION_FAILED } });
    expect(h.logs.get(0)!.logEndOffset).toBe(0);
  });

  it('a batch epoch above the destination leader epoch fences the partition; a close one asks for a bump', async () => {
    const h = await harness({ 0: { leaderEpoch: 5, batches: [batch(0, 2, 3), batch(3, 5, 2)] } }, 4);
    h.fetcher.addPartitions([h.tp(0)]);
    await h.until('fenced', () => h.fenced.length > 0);
    expect(h.fenced).toEqual([{ partition: 0, epoch: 5 }]);
    expect(h.logs.get(0)!.logEndOffset).toBe(3);
    expect(h.fetcher.has(h.tp(0))).toBe(false);
    // Source epoch 5 is within 3 of destination epoch 4: ask for at least 5 + 10.
    expect(h.bumps).toContain(15);
    expect(h.failed).toEqual([]);
  });

  it('a batch whose CRC-32C does not match is not appended and fails that partition (retryably) with CORRUPT_MESSAGE', async () => {
    const h = await harness({ 0: { batches: [batch(0, 0, 3)] }, 1: { batches: [batch(0, 0, 2)] } });
    h.fetcher.addPartitions([h.tp(0), h.tp(1)]);
    await h.until('both copied', () => h.logs.get(0)!.logEndOffset === 3 && h.logs.get(1)!.logEndOffset === 2);
    // One flipped bit in the last record's value: inside the CRC-covered region (attributes..end),
    // so every header field still reads as valid and only the checksum tells.
    const corrupt = batch(3, 0, 2);
    corrupt[corrupt.length - 1]! ^= 0x01;
    h.source.parts.get(0)!.batches.push(corrupt, batch(5, 0, 1));
    await h.until('partition 0 failed', () => h.failed.length > 0);
    h.source.parts.get(1)!.batches.push(batch(2, 0, 3));
    await h.until('partition 1 goes on', () => h.logs.get(1)!.logEndOffset === 5);
    expect(h.failed).toHaveLength(1);
    // Retryable, as Kafka's AbstractFetcherThread treats a CorruptRecordException from the
    // leader's data: the partition backs off and fetches again (the corruption may be transient).
    expect(h.failed[0]).toMatchObject({ partition: 0, nonRetryable: false, err: { code: ErrorCode.CORRUPT_MESSAGE } });
    expect(h.failed[0]?.err.message).toMatch(/^orders-0: record batch at base offset 3 fails its CRC-32C check \(stored 0x[0-9a-f]{8}, computed 0x[0-9a-f]{8}\)$/);
    // Nothing of that response landed: not the corrupt batch, not the good one behind it.
    expect(h.logs.get(0)!.logEndOffset).toBe(3);
    expect((await h.bytes(0)).equals(batch(0, 0, 3))).toBe(true);
    expect(h.fetcher.has(h.tp(0))).toBe(false);
  });

  it('an unreachable source fails the partition (retryably) once unreachableFailMs passed', async () => {
    const h = await harness({ 0: { batches: [batch(0, 0, 2)] } });
    h.fetcher.addPartitions([h.tp(0)]);
    await h.until('copied', () => h.logs.get(0)!.logEndOffset === 2);
    h.source.unreachable = true;
    const since = h.clock.now();
    await h.until('failed', () => h.failed.length > 0);
    expect(h.clock.now() - since).toBeGreaterThanOrEqual(5_000);
    expect(h.failed[0]).toMatchObject({ partition: 0, nonRetryable: false, err: { code: ErrorCode.NETWORK_EXCEPTION } });
    expect(h.failed[0]?.err.message).toMatch(/^source leader unreachable for \d+ ms: broker 1: connection refused$/);
  });
});
