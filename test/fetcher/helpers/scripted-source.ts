/**
 * A scripted source cluster for the mirror fetcher's loop tests: a `SourceEndpoint` double that
 * behaves as a small Kafka broker (leaders and epochs per partition, batches at offsets, one
 * fetch session, LastFetchedEpoch checked as Kafka's Partition.fetchRecords does, long polls on
 * the injected timers), and a harness around a real `MirrorFetcher` appending into real partition
 * logs on disk, on a manual clock.
 */
import type { Timers } from '../../../src/common/time.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { MirrorFetcherConfig } from '../../../src/fetcher/fetcher-config.js';
import { MirrorFetcher } from '../../../src/fetcher/mirror-fetcher.js';
import type { MirrorTopicPartition } from '../../../src/fetcher/partition-state.js';
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
} from '../../../src/fetcher/source-endpoint.js';
import { ErrorCode } from '../../../src/protocol/generated/errors.js';
import { KafkaError } from '../../../src/protocol/kafka-error.js';
import { RecordBatchView } from '../../../src/protocol/record-batch.js';
import { buildRecordBatch } from '../../../src/protocol/records.js';
import { ManualClock } from '../../helpers/manual-clock.js';
import { logConfig } from '../../../src/storage/log-config.js';
import { PartitionLog } from '../../../src/storage/partition-log.js';


export const TOPIC = 'orders';
export const TOPIC_ID = '5f1c2a9e-0b7d-4c3e-9a61-2d8e4f6b7c10';
export const SESSION_ID = 7;
export const BACKOFF_MS = 100;

/** Timers on the manual clock: `runNext` moves the clock to the next one and runs it. */
export class ManualTimers implements Timers {
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

export function batch(baseOffset: number, epoch: number, count: number): Buffer {
  return buildRecordBatch({ baseOffset, partitionLeaderEpoch: epoch, now: 1_700_000_000_000, records: Array.from({ length: count }, (_, i) => ({ value: Buffer.from(`v${baseOffset + i}`) })) });
}

export interface SourcePartition {
  leaderId: number;
  leaderEpoch: number;
  logStartOffset: number;
  batches: Buffer[];
}

export type PartitionError = { errorCode: number; leaderId?: number; leaderEpoch?: number };

/**
 * A scripted source cluster: one topic, partitions with a leader, an epoch and batches. It answers
 * as a Kafka broker would (leader and epoch checks, out of range, the largest epoch at or below
 * the one asked for), and scripted one-shot errors go first.
 */
export class ScriptedSource implements SourceEndpoint {
  readonly parts = new Map<number, SourcePartition>();
  topicExists = true;
  /** False: NOT_LEADER_OR_FOLLOWER / FENCED_LEADER_EPOCH answers name no current leader. */
  namesLeader = true;
  /** True: every broker is down, each call fails as a refused connection does. */
  unreachable = false;
  /** The link's round trip: every Fetch answer arrives this long (virtual ms) after the request. */
  roundTripMs = 0;
  readonly fetches: { brokerId: number; req: FetchRequest; at: number }[] = [];
  readonly calls: string[] = [];
  /** Virtual time of each call, per broker. */
  readonly callTimes: { brokerId: number; at: number }[] = [];
  private readonly partitionErrors = new Map<number, PartitionError[]>();
  private readonly epochAnswers = new Map<number, { leaderEpoch: number; endOffset: number }[]>();
  private readonly topLevelErrors: number[] = [];
  /** Fetch sessions, one per broker and connection (fetch loop), as each loop has its own. */
  private readonly sessions = new Map<string, Map<number, { fetchOffset: number; epoch: number; lastFetchedEpoch: number; maxBytes: number }>>();
  private readonly held = new Map<number, Promise<void>>();

  /**
   * The next Fetch to `brokerId` is answered from the source as it is now, but the answer is
   * delivered only when the returned function is called: a response still on the wire while the
   * cluster moves on (a leader change, an unclean election).
   */
  holdNextFetch(brokerId: number): () => void {
    let release!: () => void;
    this.held.set(brokerId, new Promise<void>((r) => (release = r)));
    return release;
  }

  constructor(
    private readonly timers: Timers,
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

  /** The next OffsetsForLeaderEpoch answer for `partition`, as an older or another broker gives it. */
  answerNextEpochs(partition: number, a: { leaderEpoch: number; endOffset: number }): void {
    const list = this.epochAnswers.get(partition) ?? [];
    list.push(a);
    this.epochAnswers.set(partition, list);
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

  async fetch(brokerId: number, req: FetchRequest, fetcherId = 0): Promise<FetchResponse> {
    this.fetches.push({ brokerId, req, at: this.clock.now() });
    this.down(brokerId);
    const top = this.topLevelErrors.shift();
    if (top !== undefined) return { errorCode: top, sessionId: 0, topics: [] };
    const lane = `${brokerId}:${fetcherId}`;
    if (req.sessionId === 0) this.sessions.set(lane, new Map());
    const session = this.sessions.get(lane) ?? new Map<number, { fetchOffset: number; epoch: number; lastFetchedEpoch: number; maxBytes: number }>();
    this.sessions.set(lane, session);
    for (const f of req.forgotten) for (const p of f.partitions) session.delete(p);
    for (const t of req.topics) for (const p of t.partitions) session.set(p.partition, { fetchOffset: p.fetchOffset, epoch: p.currentLeaderEpoch, lastFetchedEpoch: p.lastFetchedEpoch, maxBytes: p.partitionMaxBytes });
    const answers: FetchPartitionResponse[] = [];
    let withData = false;
    for (const [partition, s] of session) {
      const a = this.answer(brokerId, partition, s.fetchOffset, s.epoch, s.lastFetchedEpoch, s.maxBytes);
      // An incremental session answers a partition with news: an error, records or a
      // DivergingEpoch (Kafka's CachedPartition.maybeUpdateResponseData).
      const news = a.errorCode !== 0 || a.records !== null || a.divergingEpoch !== null;
      if (news) withData = true;
      if (req.sessionId === 0 || news) answers.push(a);
    }
    const hold = this.held.get(brokerId);
    this.held.delete(brokerId);
    // A long poll: nothing to return waits maxWaitMs (on the injected timers).
    if (hold !== undefined) await hold;
    else if (!withData) await new Promise<void>((resolve) => this.timers.schedule(req.maxWaitMs, resolve));
    if (this.roundTripMs > 0) await new Promise<void>((resolve) => this.timers.schedule(this.roundTripMs, resolve));
    return { errorCode: 0, sessionId: SESSION_ID, topics: answers.length > 0 ? [{ topicId: TOPIC_ID, partitions: answers }] : [] };
  }

  private answer(brokerId: number, partition: number, fetchOffset: number, epoch: number, lastFetchedEpoch: number, maxBytes: number): FetchPartitionResponse {
    const p = this.parts.get(partition);
    const none = { partition, highWatermark: -1, lastStableOffset: -1, logStartOffset: -1, currentLeaderId: -1, currentLeaderEpoch: -1, divergingEpoch: null, records: null };
    const scripted = this.partitionErrors.get(partition)?.shift();
    if (scripted !== undefined) return { ...none, errorCode: scripted.errorCode, currentLeaderId: scripted.leaderId ?? -1, currentLeaderEpoch: scripted.leaderEpoch ?? -1 };
    if (!this.topicExists || p === undefined) return { ...none, errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION };
    const leader = this.namesLeader ? { currentLeaderId: p.leaderId, currentLeaderEpoch: p.leaderEpoch } : {};
    if (brokerId !== p.leaderId) return { ...none, ...leader, errorCode: ErrorCode.NOT_LEADER_OR_FOLLOWER };
    if (epoch < p.leaderEpoch) return { ...none, ...leader, errorCode: ErrorCode.FENCED_LEADER_EPOCH };
    if (epoch > p.leaderEpoch) return { ...none, errorCode: ErrorCode.UNKNOWN_LEADER_EPOCH };
    const leo = this.partitionLeo(p);
    if (lastFetchedEpoch >= 0) {
      // Kafka's Partition.fetchRecords: OFFSET_OUT_OF_RANGE when no epoch at or below the last
      // fetched one is known, a DivergingEpoch when ours ends below the fetch offset or is older.
      const e = this.endOffsetFor(p, lastFetchedEpoch);
      if (e.endOffset < 0) return { ...none, errorCode: ErrorCode.OFFSET_OUT_OF_RANGE };
      if (e.leaderEpoch < lastFetchedEpoch || e.endOffset < fetchOffset) {
        this.calls.push(`diverging@${brokerId}:${partition}/${e.leaderEpoch}@${e.endOffset}`);
        return { ...none, errorCode: 0, highWatermark: leo, lastStableOffset: leo, logStartOffset: p.logStartOffset, divergingEpoch: { epoch: e.leaderEpoch, endOffset: e.endOffset } };
      }
    }
    if (fetchOffset < p.logStartOffset || fetchOffset > leo) return { ...none, errorCode: ErrorCode.OFFSET_OUT_OF_RANGE };
    // Batches up to the partition max bytes, at least one (KIP-74).
    const from: Buffer[] = [];
    let size = 0;
    for (const b of p.batches) {
      if (new RecordBatchView(b).lastOffset < fetchOffset) continue;
      if (from.length > 0 && size + b.length > maxBytes) break;
      from.push(b);
      size += b.length;
    }
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
    const answers = parts.map((r) => {
      const p = this.parts.get(r.partition)!;
      if (brokerId !== p.leaderId) return { topic: r.topic, partition: r.partition, errorCode: ErrorCode.NOT_LEADER_OR_FOLLOWER, leaderEpoch: -1, endOffset: -1 };
      const scripted = this.epochAnswers.get(r.partition)?.shift();
      if (scripted !== undefined) return { topic: r.topic, partition: r.partition, errorCode: 0, ...scripted };
      return { topic: r.topic, partition: r.partition, errorCode: 0, ...this.endOffsetFor(p, r.leaderEpoch) };
    });
    return answers;
  }

  /**
   * Kafka's LeaderEpochFileCache.endOffsetFor: the largest epoch at or below the one asked for,
   * and where the next epoch starts (the log end for the latest).
   */
  private endOffsetFor(p: SourcePartition, leaderEpoch: number): { leaderEpoch: number; endOffset: number } {
    const starts: { epoch: number; start: number }[] = [];
    for (const b of p.batches) {
      const v = new RecordBatchView(b);
      if (starts.at(-1)?.epoch !== v.partitionLeaderEpoch) starts.push({ epoch: v.partitionLeaderEpoch, start: v.baseOffset });
    }
    const at = starts.filter((s) => s.epoch <= leaderEpoch).at(-1);
    if (at === undefined) return { leaderEpoch: -1, endOffset: -1 };
    const next = starts.find((s) => s.epoch > at.epoch);
    return { leaderEpoch: at.epoch, endOffset: next?.start ?? this.partitionLeo(p) };
  }
}

export interface Harness {
  source: ScriptedSource;
  timers: ManualTimers;
  fetcher: MirrorFetcher;
  clock: ManualClock;
  logs: Map<number, PartitionLog>;
  failed: { partition: number; err: Error; nonRetryable: boolean }[];
  fenced: { partition: number; epoch: number }[];
  bumps: number[];
  tp(partition: number): MirrorTopicPartition;
  /**
   * Runs the fetcher until `cond` holds: real I/O settles, then virtual time moves timer by timer.
   * With `busy`, virtual time stands still while it holds (real work a test times in virtual time).
   */
  until(what: string, cond: () => boolean, busy?: () => boolean): Promise<void>;
  /** The local log's bytes from its start. */
  bytes(partition: number): Promise<Buffer>;
}

const work = mkdtempSync(join(tmpdir(), 'fjord-fetcher-loop-'));
const open: { fetcher: MirrorFetcher; logs: PartitionLog[] }[] = [];
let dirs = 0;

/** Closes every harness made so far (afterEach). */
export async function closeHarnesses(): Promise<void> {
  for (const o of open.splice(0)) {
    await o.fetcher.close();
    for (const l of o.logs) await l.close();
  }
}

/** Removes the logs' directory (afterAll). */
export function removeHarnessFiles(): void {
  rmSync(work, { recursive: true, force: true });
}

export async function harness(partitions: Record<number, Partial<SourcePartition>>, dle = 1000, config: Partial<MirrorFetcherConfig> = {}): Promise<Harness> {
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
    { maxWaitMs: 500, backoffMs: BACKOFF_MS, unreachableFailMs: 5_000, ...config },
    clock,
    timers,
  );
  open.push({ fetcher, logs: [...logs.values()] });
  const settle = async (): Promise<void> => {
    for (let i = 0; i < 3; i++) await new Promise((r) => setImmediate(r));
  };
  return {
    source,
    timers,
    fetcher,
    clock,
    logs,
    failed,
    fenced,
    bumps,
    tp: (partition) => ({ topic: TOPIC, topicId: TOPIC_ID, partition }),
    async until(what, cond, busy) {
      // Bounded by real time, not rounds: the logs' disk I/O is real, and on a loaded machine a
      // truncation may outlast many rounds of virtual time.
      const deadline = Date.now() + 20_000;
      for (let round = 1; Date.now() < deadline; round++) {
        await settle();
        if (cond()) return;
        if (busy?.() === true || !timers.runNext() || round % 20 === 0) await new Promise((r) => setTimeout(r, 1));
      }
      throw new Error(`the fetcher never got to: ${what} (last source calls: ${source.calls.slice(-8).join(' ')})`);
    },
    async bytes(partition) {
      const log = logs.get(partition)!;
      const r = await log.readToBuffer({ fetchOffset: log.logStartOffset, maxOffset: log.logEndOffset, maxBytes: 1 << 20, minOneMessage: true });
      return r.records;
    },
  };
}

