/**
 * The loop of one source broker, as AbstractFetcherThread runs one thread per leader: exactly one
 * request in flight, for the partitions that broker leads. Each round either truncates the
 * partitions in the truncating state (OffsetsForLeaderEpoch) or sends one Fetch for the fetching
 * ones, through the broker's fetch session, then applies each partition of the answer.
 *
 * Sleeps (nothing ready, or a backoff after an error) go through the injected timers, and
 * `notify` cuts them short when a metadata refresh hands the loop new work.
 *
 * Concurrency contract: one round at a time; a round awaits the appends it started, so appends
 * to a partition never overlap a later fetch of it.
 */
import { ErrorCode } from '../protocol/generated/errors.js';
import { KafkaError } from '../protocol/kafka-error.js';
import { truncatePartitions } from './epoch-truncation.js';
import { FetchSessionHandler } from './fetch-session-handler.js';
import type { FetcherContext } from './fetcher-context.js';
import type { CancelTimer } from './fetcher-timers.js';
import { processPartitionResponse } from './partition-data.js';
import { tpKey } from './partition-state.js';
import type { FetchResponse } from './source-endpoint.js';

/** The shortest sleep between rounds that found nothing ready. */
const MIN_IDLE_MS = 10;

export class SourceBrokerLoop {
  readonly session = new FetchSessionHandler();
  private wake: (() => void) | null = null;
  private running = true;

  constructor(
    readonly brokerId: number,
    private readonly ctx: FetcherContext,
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

  /** Ends a sleep now. */
  notify(): void {
    const w = this.wake;
    this.wake = null;
    w?.();
  }

  /** One round; returns how long to sleep before the next. */
  async runOnce(): Promise<number> {
    const { ctx } = this;
    const now = ctx.clock.now();
    const mine = ctx.partitions().filter((p) => p.sourceLeaderId === this.brokerId);
    ctx.failUnreachable(mine, now);
    const ready = mine.filter((p) => ctx.isCurrent(p) && (p.state !== 'delayed' || p.delayedUntil <= now));
    for (const p of ready) if (p.state === 'delayed') p.state = 'truncating';
    if (ready.length === 0) {
      const next = Math.min(...mine.map((p) => p.delayedUntil - now), ctx.config.maxWaitMs);
      return Math.max(MIN_IDLE_MS, next);
    }
    const truncating = ready.filter((p) => p.state === 'truncating');
    if (truncating.length > 0) {
      await truncatePartitions(ctx, this.brokerId, truncating);
      return 0;
    }
    const fetching = ready.filter((p) => p.state === 'fetching');
    if (fetching.length === 0) return MIN_IDLE_MS;
    const throttled = ctx.config.quota?.delayMs() ?? 0;
    if (throttled > 0) return throttled;
    const req = this.session.build(fetching, ctx.config);
    let res: FetchResponse;
    try {
      ctx.stats.fetches++;
      res = await ctx.endpoint.fetch(this.brokerId, req);
    } catch (err) {
      this.session.reset();
      ctx.delay(fetching, err as Error);
      return ctx.config.backoffMs;
    }
    // A lost session (FETCH_SESSION_ID_NOT_FOUND, INVALID_FETCH_SESSION_EPOCH): the next round
    // starts a new one with a full request.
    if (!this.session.handle(res.errorCode, res.sessionId)) return 0;
    if (res.errorCode !== ErrorCode.NONE) {
      ctx.delay(fetching, new KafkaError(res.errorCode, `source fetch error ${res.errorCode}`));
      return ctx.config.backoffMs;
    }
    const work: Promise<void>[] = [];
    let bytes = 0;
    for (const t of res.topics) {
      for (const pr of t.partitions) {
        bytes += pr.records?.length ?? 0;
        const ps = ctx.partition(tpKey({ topicId: t.topicId, partition: pr.partition }));
        if (ps === undefined || ps.state !== 'fetching') continue;
        work.push(ctx.serialize(ps, () => processPartitionResponse(ctx, ps, pr)));
      }
    }
    for (const p of fetching) p.unreachableSince = 0;
    ctx.config.quota?.record(bytes);
    await Promise.all(work);
    return 0;
  }

  private sleep(ms: number): Promise<void> {
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
