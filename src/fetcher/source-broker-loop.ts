/**
 * A loop fetching from one source broker, as AbstractFetcherThread runs a thread per leader (and
 * `num.replica.fetchers` of them, here `mirror.num.replica.fetchers`, each with the partitions
 * AbstractFetcherManager.getFetcherId hashes to it): one Fetch in flight per loop, for its
 * partitions that broker leads. Each round either truncates the partitions in the truncating
 * state (OffsetsForLeaderEpoch) or sends one Fetch for the fetching ones, through the loop's own
 * fetch session, then hands each partition of the answer to ./append-pipeline.ts.
 *
 * With a pipeline budget above 0 the appends of an answer are not awaited before the next Fetch
 * goes out, so the network and the local log work at the same time, within that many bytes of
 * fetched data waiting for its append: over it the loop sends no Fetch until appends catch up,
 * which also bounds how many response frames stay alive. At 0 each round awaits its appends, as
 * AbstractFetcherThread does. The budget is `mirror.fetch.pipeline.max.bytes` when set; by
 * default (`PIPELINE_AUTO`) the loop picks it from the round trip it measures (./round-trip.ts):
 * `PIPELINE_AUTO_MAX_BYTES` from a round trip of `PIPELINE_AUTO_MIN_RTT_MS` on, 0 again once
 * it falls below half of that.
 *
 * An answer is applied to a partition only if the partition is still led by this loop's broker
 * and still at the fetch offset the request asked for, as AbstractFetcherThread.processFetchRequest
 * checks the fetch state against the request's PartitionData: an answer that was on the wire
 * while the partition moved to another leader (which may have a different history after an
 * unclean election) or was truncated is dropped, and the partition is fetched again from where
 * it is now.
 *
 * Sleeps (nothing ready, or a backoff after an error) go through the injected timers, and
 * `notify` cuts them short when a metadata refresh hands the loop new work.
 *
 * Concurrency contract: one round at a time. Appends to one partition are chained in order on
 * the partition (`ps.busy`); a partition whose response needs more than an append is left out of
 * fetches until that work is done.
 */
import type { CancelTimer } from '../common/time.js';
import { ErrorCode } from '../protocol/generated/errors.js';
import { KafkaError } from '../protocol/kafka-error.js';
import { truncatePartitions } from './epoch-truncation.js';
import { PIPELINE_AUTO_MAX_BYTES, PIPELINE_AUTO_MIN_RTT_MS } from './fetcher-config.js';
import { FetchSessionHandler } from './fetch-session-handler.js';
import type { FetcherContext } from './fetcher-context.js';
import { applyPartitionResponse } from './append-pipeline.js';
import { processPartitionResponse } from './partition-data.js';
import { RoundTripEstimate } from './round-trip.js';
import { resumeFetching, tpKey, type MirrorTopicPartition, type PartitionState } from './partition-state.js';
import type { FetchResponse } from './source-endpoint.js';

/** The shortest sleep between rounds that found nothing ready. */
const MIN_IDLE_MS = 10;

/** Java's String.hashCode, which AbstractFetcherManager.getFetcherId hashes topic names with. */
function javaStringHash(s: string): number {
  let h = 0;
  for (let i = 0; i < s.length; i++) h = (Math.imul(h, 31) + s.charCodeAt(i)) | 0;
  return h;
}

/** Kafka's AbstractFetcherManager.getFetcherId: Utils.abs(31 * topic.hashCode + partition) % fetchers. */
export function fetcherIdOf(tp: MirrorTopicPartition, fetchers: number): number {
  const h = (Math.imul(31, javaStringHash(tp.topic)) + tp.partition) | 0;
  // Utils.abs maps Integer.MIN_VALUE to 0 (h & 0x7fffffff), unlike Math.abs.
  return (h & 0x7fffffff) % fetchers;
}

export class SourceBrokerLoop {
  readonly session = new FetchSessionHandler();
  private wake: (() => void) | null = null;
  private notified = false;
  private running = true;
  /** Appends of earlier responses not finished yet, and the bytes they hold. */
  private readonly pending = new Set<Promise<void>>();
  private pendingBytes = 0;
  private readonly rtt = new RoundTripEstimate();
  /** Whether a loop on the automatic budget overlaps now. */
  private autoOverlap = false;
  /** The previous answer reported a throttle: the broker may have held this loop's next request. */
  private throttledBefore = false;

  constructor(
    readonly brokerId: number,
    private readonly ctx: FetcherContext,
    readonly fetcherId = 0,
    private readonly fetchers = 1,
  ) {}

  async run(): Promise<void> {
    while (this.running) {
      try {
        const waitMs = await this.runOnce();
        if (waitMs > 0 && this.running) await this.sleep(waitMs);
      } catch {
        if (this.running) await this.sleep(this.ctx.config.backoffMs);
      }
    }
  }

  stop(): void {
    this.running = false;
    this.notify();
  }

  /** Ends a sleep now, or the next one if the loop is in a round (what woke it may be too late for that round). */
  notify(): void {
    const w = this.wake;
    this.wake = null;
    if (w === null) this.notified = true;
    else w();
  }

  /** The round trip this loop measured to its source broker (ms), -1 before enough answers. */
  get roundTripMs(): number {
    return this.rtt.ms;
  }

  /** The bytes of fetched data that may wait for their append while the next Fetch is out now. */
  get pipelineBudget(): number {
    const set = this.ctx.config.pipelineMaxBytes;
    if (set >= 0) return set;
    return this.autoOverlap ? PIPELINE_AUTO_MAX_BYTES : 0;
  }

  /** One round; returns how long to sleep before the next. */
  async runOnce(): Promise<number> {
    const { ctx } = this;
    const now = ctx.clock.now();
    const mine = ctx.partitions().filter((p) => this.leads(p));
    ctx.failUnreachable(mine, now);
    const ready = mine.filter((p) => ctx.isCurrent(p) && (p.state !== 'delayed' || p.delayedUntil <= now));
    for (const p of ready) if (p.state === 'delayed') resumeFetching(p);
    if (ready.length === 0) {
      const next = Math.min(...mine.map((p) => p.delayedUntil - now), ctx.config.maxWaitMs);
      return Math.max(MIN_IDLE_MS, next);
    }
    const truncating = ready.filter((p) => p.state === 'truncating');
    if (truncating.length > 0) {
      // A partition delayed by a failed Fetch may still be appending an earlier answer:
      // truncation reads the local log end, so it waits for those appends.
      await Promise.all(truncating.map((p) => p.busy));
      await truncatePartitions(ctx, this.brokerId, truncating);
      return 0;
    }
    await this.withinBudget();
    const fetching = ready.filter((p) => p.state === 'fetching' && p.held === 0 && ctx.isCurrent(p));
    if (fetching.length === 0) {
      // Everything ready is held by work in progress: go on once some of it finished.
      if (this.pending.size === 0) return MIN_IDLE_MS;
      await Promise.race(this.pending);
      return 0;
    }
    const throttled = ctx.config.quota?.delayMs() ?? 0;
    if (throttled > 0) return throttled;
    const req = this.session.build(fetching, ctx.config);
    let res: FetchResponse;
    const sentAt = ctx.clock.now();
    try {
      ctx.stats.fetches++;
      res = await ctx.endpoint.fetch(this.brokerId, req, this.fetcherId);
    } catch (err) {
      // A new connection may take another path: measure it afresh.
      this.rtt.reset();
      this.session.reset();
      ctx.delay(fetching.filter((p) => this.leads(p)), err as Error);
      return ctx.config.backoffMs;
    }
    // A lost session (FETCH_SESSION_ID_NOT_FOUND, INVALID_FETCH_SESSION_EPOCH): the next round
    // starts a new one with a full request.
    if (!this.session.handle(res.errorCode, res.sessionId)) {
      res.release?.();
      return 0;
    }
    if (res.errorCode !== ErrorCode.NONE) {
      res.release?.();
      ctx.delay(fetching.filter((p) => this.leads(p)), new KafkaError(res.errorCode, `source fetch error ${res.errorCode}`));
      return ctx.config.backoffMs;
    }
    this.observe(res, ctx.clock.now() - sentAt);
    const pipelined = this.pipelineBudget > 0;
    // Every partition's handling of this answer, appends included: the answer's records are in
    // use until all of them settled (none rejects), and only then is it released.
    const work: Promise<void>[] = [];
    let bytes = 0;
    for (const t of res.topics) {
      for (const pr of t.partitions) {
        bytes += pr.records?.length ?? 0;
        const ps = ctx.partition(tpKey({ topicId: t.topicId, partition: pr.partition }));
        if (ps === undefined || ps.state !== 'fetching' || !this.askedFor(ps)) continue;
        if (pipelined) {
          const applied = applyPartitionResponse(ctx, ps, pr);
          this.track(applied);
          work.push(applied.done);
        } else work.push(ctx.serialize(ps, () => processPartitionResponse(ctx, ps, pr)));
      }
    }
    for (const p of fetching) p.unreachableSince = 0;
    ctx.config.quota?.record(bytes);
    const settled = Promise.all(work);
    if (res.release !== undefined) void settled.then(res.release);
    if (!pipelined) await settled;
    return 0;
  }

  /**
   * Takes one answer's time as a round-trip sample when the source answered without a long poll
   * (it carried records) and without a throttle on it or the answer before, then turns the
   * automatic overlap on or off.
   */
  private observe(res: FetchResponse, ms: number): void {
    const throttled = (res.throttleTimeMs ?? 0) > 0;
    const withRecords = res.topics.some((t) => t.partitions.some((p) => (p.records?.length ?? 0) > 0));
    if (withRecords && !throttled && !this.throttledBefore) this.rtt.add(ms);
    this.throttledBefore = throttled;
    const rtt = this.rtt.ms;
    if (rtt < 0) return;
    if (!this.autoOverlap && rtt >= PIPELINE_AUTO_MIN_RTT_MS) this.autoOverlap = true;
    else if (this.autoOverlap && rtt < PIPELINE_AUTO_MIN_RTT_MS / 2) this.autoOverlap = false;
  }

  /** Still this loop's partition: led by its broker and hashed to it. */
  private leads(ps: PartitionState): boolean {
    return ps.sourceLeaderId === this.brokerId && (this.fetchers === 1 || fetcherIdOf(ps.tp, this.fetchers) === this.fetcherId);
  }

  /** The answer in hand is for the partition as it is now: same leader, same fetch offset. */
  private askedFor(ps: PartitionState): boolean {
    const asked = this.session.requested(ps.key);
    return asked !== undefined && asked.fetchOffset === ps.fetchOffset && ps.held === 0 && this.leads(ps);
  }

  private track(a: { done: Promise<void>; bytes: number }): void {
    this.pendingBytes += a.bytes;
    const p = a.done.then(() => {
      this.pending.delete(p);
      this.pendingBytes -= a.bytes;
    });
    this.pending.add(p);
  }

  /** Waits while the data fetched but not yet appended is at or over the pipeline budget. */
  private async withinBudget(): Promise<void> {
    while (this.pendingBytes >= this.pipelineBudget && this.pending.size > 0) await Promise.race(this.pending);
  }

  private sleep(ms: number): Promise<void> {
    if (this.notified) {
      this.notified = false;
      return Promise.resolve();
    }
    return new Promise<void>((resolve) => {
      let cancel: CancelTimer | null = null;
      this.wake = () => {
        cancel?.();
        resolve();
      };
      cancel = this.ctx.timers.schedule(ms, () => {
        this.wake = null;
        resolve();
      });
    });
  }
}
