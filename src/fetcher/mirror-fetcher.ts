/**
 * The mirror fetcher: the hot path of cluster mirroring (KIP-1279 spec §8.3, §9.4, §9.5).
 *
 * Shape follows Kafka's AbstractFetcherThread, one seam per file: per-partition fetch state
 * (./partition-state.ts: truncating → fetching, delayed after errors), one loop per source broker
 * (`mirror.num.replica.fetchers` of them), each with one request in flight while the appends of
 * the previous answer are written (./source-broker-loop.ts, ./append-pipeline.ts) and its fetch session
 * (./fetch-session-handler.ts), per-partition processing (./partition-data.ts, walking batch
 * headers in src/protocol/fetched-batch-walk.ts) with an exhaustive error table (./partition-errors.ts) so one
 * partition's failure never stops the others, epoch truncation (./epoch-truncation.ts), and the
 * source leaders (./source-leaders.ts). This class holds the partitions and the loops.
 *
 * Per partition the Fetch response's `records` is a slice of the response frame. Only batch
 * headers are read; the slice of whole batches goes to `appendAsMirror` as is, so offsets, epochs
 * and bytes stay the source's. No record is decoded: `stats.recordsDecoded` exists to prove it
 * and stays 0.
 *
 * Concurrency contract: single event loop. Appends to one partition are serialised on the
 * partition (`ps.busy`), in fetch order. A partition leaves the fetcher at once (no Fetch names
 * it, no queued append of it starts), but its work in progress is waited for before anyone is
 * told: `removePartitions` resolves, `onPartitionFailed` is called, and a re-added partition
 * starts, only after the append being written for it finished, so the state machine may
 * truncate, bump the epoch or write markers right after and never races a late append.
 */
import { realTimers, systemClock, type Clock, type Timers } from '../common/time.js';
import { ErrorCode } from '../protocol/generated/errors.js';
import { KafkaError } from '../protocol/kafka-error.js';
import { DEFAULT_FETCHER_CONFIG, type MirrorFetcherCallbacks, type MirrorFetcherConfig, type MirrorFetcherStats } from './fetcher-config.js';
import type { FetcherContext } from './fetcher-context.js';
import { isAuthFailure } from './partition-errors.js';
import { newPartitionState, tpKey, type MirrorTopicPartition, type PartitionFetchStatus, type PartitionState } from './partition-state.js';
import { SourceBrokerLoop } from './source-broker-loop.js';
import type { SourceEndpoint } from './source-endpoint.js';
import { SourceLeaders } from './source-leaders.js';

export type { MirrorTopicPartition } from './partition-state.js';

export class MirrorFetcher implements FetcherContext {
  readonly config: MirrorFetcherConfig;
  readonly stats: MirrorFetcherStats = { fetches: 0, batchesAppended: 0, bytesAppended: 0, divergingEpochTruncations: 0, epochLookups: 0, recordsDecoded: 0 };
  private readonly byKey = new Map<string, PartitionState>();
  /** Partitions removed whose last append may still be in progress: the end of their chain. */
  private readonly draining = new Map<string, Promise<void>>();
  private readonly loops = new Map<number, SourceBrokerLoop[]>();
  private readonly leaders = new SourceLeaders(this);
  private isClosed = false;

  constructor(
    readonly endpoint: SourceEndpoint,
    readonly cb: MirrorFetcherCallbacks,
    config: Partial<MirrorFetcherConfig> = {},
    readonly clock: Clock = systemClock,
    readonly timers: Timers = realTimers,
  ) {
    this.config = { ...DEFAULT_FETCHER_CONFIG, ...config };
  }

  get closed(): boolean {
    return this.isClosed;
  }

  /**
   * Starts fetching partitions. Each starts in the truncating state: OffsetsForLeaderEpoch with the
   * local latest epoch finds where the local log diverges from the source (§9.5).
   */
  addPartitions(tps: readonly MirrorTopicPartition[]): void {
    for (const tp of tps) {
      const key = tpKey(tp);
      if (this.byKey.has(key)) continue;
      const ps = newPartitionState(tp, this.cb.log(tp)?.logEndOffset ?? 0, this.config.partitionMaxBytes);
      // Truncation waits for `busy` before it reads the log end: the previous incarnation's last
      // append lands first.
      ps.busy = this.draining.get(key) ?? ps.busy;
      this.byKey.set(key, ps);
    }
    void this.refreshMetadata();
  }

  /** Stops fetching partitions; resolves once no append for them is in progress. */
  async removePartitions(tps: readonly MirrorTopicPartition[]): Promise<void> {
    const waits: Promise<void>[] = [];
    for (const tp of tps) {
      const key = tpKey(tp);
      const ps = this.byKey.get(key);
      if (ps !== undefined) this.detach(ps);
      const tail = this.draining.get(key);
      if (tail !== undefined) waits.push(tail);
    }
    await Promise.all(waits);
  }

  /** Takes the partition out now; its chain of work is remembered until it settles. */
  private detach(ps: PartitionState): Promise<void> {
    this.byKey.delete(ps.key);
    const tail = ps.busy;
    this.draining.set(ps.key, tail);
    void tail.then(() => {
      if (this.draining.get(ps.key) === tail) this.draining.delete(ps.key);
    });
    return tail;
  }

  has(tp: MirrorTopicPartition): boolean {
    return this.byKey.has(tpKey(tp));
  }

  status(tp: MirrorTopicPartition): PartitionFetchStatus | undefined {
    const ps = this.byKey.get(tpKey(tp));
    if (ps === undefined) return undefined;
    const localHw = this.cb.log(tp)?.highWatermark ?? 0;
    return {
      state: ps.state,
      fetchOffset: ps.fetchOffset,
      sourceHighWatermark: ps.sourceHighWatermark,
      localHighWatermark: localHw,
      lag: ps.sourceHighWatermark < 0 ? -1 : Math.max(0, ps.sourceHighWatermark - localHw),
      sourceLeaderId: ps.sourceLeaderId,
      sourceLeaderEpoch: ps.sourceLeaderEpoch,
      lastFetchMs: ps.lastFetchMs,
      mirroredMaxTimestamp: ps.mirroredMaxTimestamp,
      linkError: ps.lastError?.message ?? null,
    };
  }

  /**
   * Each fetch loop: its source broker, the round trip it measured there (-1 before enough
   * answers) and the pipeline budget it uses now (0: each answer appended before the next Fetch).
   */
  fetchLoops(): { brokerId: number; fetcherId: number; roundTripMs: number; pipelineBudget: number }[] {
    return [...this.loops.values()].flat().map((l) => ({ brokerId: l.brokerId, fetcherId: l.fetcherId, roundTripMs: l.roundTripMs, pipelineBudget: l.pipelineBudget }));
  }

  async close(): Promise<void> {
    this.isClosed = true;
    this.leaders.close();
    for (const l of [...this.loops.values()].flat()) l.stop();
    const busy = [...this.byKey.values()].map((p) => p.busy);
    this.byKey.clear();
    await Promise.all([...busy, ...this.draining.values()]);
  }

  // ---- FetcherContext: what the loops and the per-partition code share

  partitions(): PartitionState[] {
    return [...this.byKey.values()];
  }

  partition(key: string): PartitionState | undefined {
    return this.byKey.get(key);
  }

  isCurrent(ps: PartitionState): boolean {
    return this.byKey.get(ps.key) === ps;
  }

  serialize(ps: PartitionState, fn: () => Promise<void>): Promise<void> {
    const run = ps.busy.then(fn).catch((err: unknown) => this.failPartition(ps, err as Error, false));
    ps.busy = run;
    return run;
  }

  delay(parts: readonly PartitionState[], err: Error): void {
    if (isAuthFailure(err)) {
      for (const ps of parts) this.failPartition(ps, err, false);
      return;
    }
    const now = this.clock.now();
    for (const ps of parts) {
      if (!this.isCurrent(ps)) continue;
      ps.state = 'delayed';
      ps.delayedUntil = now + this.config.backoffMs;
      if (ps.unreachableSince === 0) ps.unreachableSince = now;
      ps.lastError = err;
    }
    void this.refreshMetadata();
  }

  failPartition(ps: PartitionState, err: Error, nonRetryable: boolean): void {
    if (!this.isCurrent(ps)) return;
    // Reported once the append being written (if any) is done: the state machine's next step
    // (a retry's truncation, a stop's markers) must not run beside it. Called from inside the
    // chain too, where `.then` runs after the failing step, never waiting on itself.
    void this.detach(ps).then(() => this.cb.onPartitionFailed(ps.tp, err, nonRetryable));
  }

  failUnreachable(parts: readonly PartitionState[], now: number): void {
    for (const ps of parts) {
      if (ps.unreachableSince > 0 && now - ps.unreachableSince >= this.config.unreachableFailMs) {
        const msg = `source leader unreachable for ${now - ps.unreachableSince} ms: ${ps.lastError?.message ?? ''}`;
        this.failPartition(ps, new KafkaError(ErrorCode.NETWORK_EXCEPTION, msg), false);
      }
    }
  }

  remove(ps: PartitionState): void {
    if (this.isCurrent(ps)) void this.detach(ps);
  }

  refreshMetadata(): Promise<void> {
    return this.leaders.refresh();
  }

  /** The `numFetchers` loops of a source broker (mirror.num.replica.fetchers), started on first use. */
  ensureLoop(brokerId: number): { notify(): void } {
    let loops = this.loops.get(brokerId);
    if (loops === undefined) {
      const n = Math.max(1, this.config.numFetchers);
      loops = Array.from({ length: n }, (_, id) => new SourceBrokerLoop(brokerId, this, id, n));
      this.loops.set(brokerId, loops);
      for (const l of loops) void l.run();
    }
    const all = loops;
    return { notify: () => all.forEach((l) => l.notify()) };
  }
}
