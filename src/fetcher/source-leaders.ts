/**
 * The source metadata of the mirror fetcher: which source broker leads each partition, at which
 * leader epoch (Kafka's fetcher manager re-homes partitions the same way after a metadata
 * update). A refresh asks Metadata for every partition's topic; on a leader or epoch change a
 * fetching partition goes on fetching from the new leader with its LastFetchedEpoch (a new epoch
 * may mean an unclean election, which the leader answers with a DivergingEpoch), or truncates
 * first when it has none, and the leader's loop is started or woken.
 *
 * A topic the source no longer knows is called deleted only on the second answer in a row
 * (KIP-1279 §8.10), and a changed topic id means it was recreated: both fail the partition for
 * good. Partitions without a leader have no loop, so a timer retries the refresh for them.
 *
 * Concurrency contract: one refresh at a time; callers during a refresh share it.
 */
import type { CancelTimer } from '../common/time.js';
import { ErrorCode } from '../protocol/generated/errors.js';
import { KafkaError } from '../protocol/kafka-error.js';
import type { FetcherContext } from './fetcher-context.js';
import { isAuthFailure, sourceError } from './partition-errors.js';
import { resumeFetching } from './partition-state.js';

export class SourceLeaders {
  private refreshing: Promise<void> | null = null;
  private unassignedRetry: CancelTimer | null = null;

  constructor(private readonly ctx: FetcherContext) {}

  /** Refreshes the leaders of every partition; shares a refresh already running. */
  refresh(): Promise<void> {
    if (this.refreshing !== null) return this.refreshing;
    const run = this.doRefresh()
      .catch((err: unknown) => {
        // A source that refuses our credentials fails every partition now, with its reason.
        if (isAuthFailure(err)) {
          for (const ps of this.ctx.partitions()) this.ctx.failPartition(ps, err as Error, false);
          return;
        }
        const now = this.ctx.clock.now();
        for (const ps of this.ctx.partitions()) {
          if (ps.unreachableSince === 0) ps.unreachableSince = now;
          ps.lastError = err as Error;
          if (ps.sourceLeaderId < 0) this.ensureUnassignedRetry();
        }
      })
      .finally(() => {
        this.refreshing = null;
      });
    this.refreshing = run;
    return run;
  }

  close(): void {
    this.unassignedRetry?.();
    this.unassignedRetry = null;
  }

  /** Partitions with no known source leader have no loop: retry metadata on a timer for them. */
  private ensureUnassignedRetry(): void {
    if (this.unassignedRetry !== null || this.ctx.closed) return;
    this.unassignedRetry = this.ctx.timers.schedule(this.ctx.config.backoffMs, () => {
      this.unassignedRetry = null;
      if (this.ctx.closed) return;
      const unassigned = this.ctx.partitions().filter((p) => p.sourceLeaderId < 0);
      this.ctx.failUnreachable(unassigned, this.ctx.clock.now());
      if (unassigned.some((p) => this.ctx.isCurrent(p))) void this.refresh();
    });
  }

  private async doRefresh(): Promise<void> {
    if (this.ctx.closed) return;
    const topics = [...new Set(this.ctx.partitions().map((p) => p.tp.topic))];
    if (topics.length === 0) return;
    const md = await this.ctx.endpoint.metadata(topics);
    const byName = new Map(md.topics.map((t) => [t.name, t]));
    let unassigned = false;
    for (const ps of this.ctx.partitions()) {
      const t = byName.get(ps.tp.topic);
      if (t === undefined || t.errorCode === ErrorCode.UNKNOWN_TOPIC_OR_PARTITION) {
        ps.missingTopicCount++;
        if (ps.missingTopicCount >= 2) this.ctx.failPartition(ps, new KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, 'The source topic is deleted.'), true);
        else {
          unassigned = true;
          ps.sourceLeaderId = -1;
        }
        continue;
      }
      ps.missingTopicCount = 0;
      if (t.errorCode !== ErrorCode.NONE && isAuthFailure(new KafkaError(t.errorCode))) {
        // Without DESCRIBE on the source topic it is hidden, not gone: a failure to show, retried.
        this.ctx.failPartition(ps, sourceError(t.errorCode, `metadata of ${ps.tp.topic}`), false);
        continue;
      }
      if (t.topicId !== ps.tp.topicId) {
        this.ctx.failPartition(ps, new KafkaError(ErrorCode.INCONSISTENT_TOPIC_ID, `The source topic was recreated with topic id ${t.topicId}.`), true);
        continue;
      }
      const p = t.partitions.find((x) => x.partition === ps.tp.partition);
      if (p === undefined || p.leaderId < 0) {
        ps.sourceLeaderId = -1;
        unassigned = true;
        continue;
      }
      if (p.leaderId !== ps.sourceLeaderId || p.leaderEpoch !== ps.sourceLeaderEpoch) {
        ps.sourceLeaderId = p.leaderId;
        ps.sourceLeaderEpoch = p.leaderEpoch;
        // A new source epoch may mean an unclean election there: the next Fetch's
        // LastFetchedEpoch lets the new leader tell us where we diverge.
        if (ps.state === 'fetching') resumeFetching(ps);
      }
      this.ctx.ensureLoop(p.leaderId).notify();
    }
    if (unassigned) this.ensureUnassignedRetry();
  }
}
