/**
 * A follower's fetch loop to one leader broker (Kafka's ReplicaFetcherThread on the
 * AbstractFetcherThread shape, written for replication: the mirror fetcher's loop is the same
 * shape with a source endpoint). It sends the follower Fetch (replica id = this node, v15+ in
 * ReplicaState with the broker epoch as replica epoch; LastFetchedEpoch = the log's latest
 * epoch), appends the run of whole batches exactly as the leader sent them at the leader's
 * offsets and epochs (`appendAsFollower`, batch headers walked by protocol/fetched-batch-walk.ts, never a record),
 * and sets the follower high watermark to min(leader high watermark, own log end).
 *
 * Per-partition errors, by the table the mirror fetcher shares (src/protocol/fetch-partition-errors.ts):
 * - DivergingEpoch → truncate to where both logs agree (below), then fetch from the new end.
 * - OFFSET_OUT_OF_RANGE → below the leader's log start: restart the log there; past its end:
 *   truncate to the leader's high watermark and fetch again.
 * - leader and topic errors (NOT_LEADER_OR_FOLLOWER, FENCED_LEADER_EPOCH, UNKNOWN_TOPIC_ID, ...)
 *   → the partition waits `replica.fetch.backoff.ms`; the next metadata image moves it to its
 *   new leader (or makes this node the leader).
 * - anything else (an authorization failure, a corrupt batch, a storage error) → the same
 *   backoff, logged as a warning.
 *
 * Truncation on DivergingEpoch (AbstractFetcherThread.getOffsetTruncationState): the leader
 * answers (epoch E, end offset O). When this log holds E, truncate to min(O, our end of E);
 * when it does not, to our end of the largest epoch below E, and the next fetch asks again. The
 * rules are the mirror fetcher's too: src/storage/truncation-point.ts.
 *
 * Follower throttle (Kafka's ReplicaFetcherThread.shouldFollowerThrottle): a partition the
 * follower quota covers and that is not in the ISR is left out of the request while
 * `follower.replication.throttled.rate` is exceeded; the bytes fetched for covered partitions
 * are recorded against it (./replication-quotas.ts).
 *
 * MirrorLeaderEpoch (KIP-1279 §9.6, the KAFKA-18723 rule for mirror partitions): a follower of a
 * mirror topic with `mirror.support.unclean.leader.election=true` sends MirrorLeaderEpoch (Fetch
 * v19, starting at 0) and the leader answers the latest epoch of its log. Batches of a mirror
 * partition carry the source's epochs, unrelated to the destination leader epoch, and the leader's
 * log can be cut and rewritten by the mirror (a source unclean election, LOG_TRUNCATION) without
 * any destination leadership change; so the follower appends only batches at or below the epoch
 * it sent (as Kafka's AbstractFetcherThread checks against the request's epoch), keeps the
 * highest epoch the leader answered, and fetches again with it. A batch above it is either a new
 * source epoch (taken on the next fetch, once announced) or read from a history that replaced
 * the one the request was checked against; the next fetch's LastFetchedEpoch check then finds
 * the divergence. Kafka's ReplicaFetcherThread.shouldUpdateMirrorLeaderEpoch sets the field the
 * same way, only for those topics (the review thread's gate: without unclean elections a mirror
 * only ever copies committed source data, which never changes).
 *
 * Concurrency contract: one loop per leader; the partitions of a loop are appended one at a time
 * in response order; `remove` takes effect before the next response is applied.
 */
import { ApiKey } from '../protocol/generated/api-table.js';
import { ErrorCode } from '../protocol/generated/errors.js';
import { encodeFetchRequest, type FetchRequestInput } from '../protocol/generated/messages/fetch-request.js';
import { decodeFetchResponse, type FetchResponse, type FetchResponsePartitionData } from '../protocol/generated/messages/fetch-response.js';
import type { ApiSpec } from '../client/apis.js';
import type { InterBrokerSecurity } from '../client/inter-broker-security.js';
import { KafkaClient } from '../client/kafka-client.js';
import type { Logger } from '../common/logger.js';
import { fetchErrorKind } from '../protocol/fetch-partition-errors.js';
import { walkFetchedBatches } from '../protocol/fetched-batch-walk.js';
import type { PartitionLog } from '../storage/partition-log.js';
import { truncateToLeaderEpochEnd } from '../storage/truncation-point.js';
import type { ReplicaEndpoint } from './replication-seam.js';
import type { ReplicationQuota } from './replication-quotas.js';

/** Fetch v13-19 in the follower form: replica id in the header field (v13-14) or ReplicaState (v15+, KIP-903). */
function followerFetchSpec(replicaId: number, brokerEpoch: () => number): ApiSpec<FetchRequestInput, FetchResponse> {
  return {
    apiKey: ApiKey.Fetch,
    // v19 carries MirrorLeaderEpoch; a partition without one sends the same bytes as v17.
    versions: [13, 19],
    encode: (w, req, v) => encodeFetchRequest(w, v >= 15 ? { ...req, replicaState: { replicaId, replicaEpoch: BigInt(brokerEpoch()) } } : { ...req, replicaId }, v),
    decode: decodeFetchResponse,
  };
}


/** Back-offs are timed on the monotonic clock, so a wall-clock jump neither holds nor releases them early. */
const monoNow = (): number => performance.timeOrigin + performance.now();
interface FollowedPartition {
  readonly topic: string;
  readonly topicId: string;
  readonly partition: number;
  readonly log: PartitionLog;
  /** The leader epoch this node follows at (CurrentLeaderEpoch). */
  readonly leaderEpoch: number;
  delayedUntil: number;
  maxBytes: number;
  /**
   * True while the partition is a mirror topic with `mirror.support.unclean.leader.election=true`
   * (asked per request: the config can change while the partition is followed).
   */
  readonly wantsMirrorLeaderEpoch?: () => boolean;
  /** The highest MirrorLeaderEpoch the leader answered (0 before any); sent when wanted. */
  mirrorLeaderEpoch?: number;
  /** The MirrorLeaderEpoch of the request in flight, -1 when it carried none. */
  sentMirrorLeaderEpoch?: number;
}

interface ReplicaFetcherOptions {
  readonly nodeId: number;
  readonly brokerEpoch: () => number;
  /** replica.fetch.max.bytes */
  readonly maxBytes: number;
  /** replica.fetch.response.max.bytes */
  readonly responseMaxBytes: number;
  /** replica.fetch.wait.max.ms */
  readonly maxWaitMs: number;
  /** replica.fetch.min.bytes */
  readonly minBytes: number;
  /** replica.fetch.backoff.ms */
  readonly backoffMs: number;
  /** follower.replication.throttled.rate over follower.replication.throttled.replicas; none when absent. */
  readonly quota?: Pick<ReplicationQuota, 'isThrottled' | 'isQuotaExceeded' | 'delayMs' | 'record'>;
  /** The inter-broker listener's transport and login (PLAINTEXT when absent). */
  readonly security?: InterBrokerSecurity;
  /** True when this node is in the partition's ISR (never throttled then). */
  readonly inSync?: (p: FollowedPartition) => boolean;
  readonly log: Logger;
}

const key = (topicId: string, partition: number): string => `${topicId}:${partition}`;

export class ReplicaFetcher {
  private readonly partitions = new Map<string, FollowedPartition>();
  private readonly client: KafkaClient;
  private readonly spec: ApiSpec<FetchRequestInput, FetchResponse>;
  private readonly abort = new AbortController();
  private wake: (() => void) | null = null;
  private readonly loop: Promise<void>;

  constructor(
    readonly leaderId: number,
    readonly endpoint: ReplicaEndpoint,
    private readonly opts: ReplicaFetcherOptions,
  ) {
    this.client = new KafkaClient({
      ...opts.security,
      bootstrapServers: [`${endpoint.host}:${endpoint.port}`],
      clientId: `fjord-replica-fetcher-${opts.nodeId}-${leaderId}`,
      requestTimeoutMs: opts.maxWaitMs + 30_000,
    });
    this.spec = followerFetchSpec(opts.nodeId, opts.brokerEpoch);
    this.loop = this.run();
  }

  get size(): number {
    return this.partitions.size;
  }

  add(p: FollowedPartition): void {
    this.partitions.set(key(p.topicId, p.partition), p);
    this.wake?.();
  }

  remove(topicId: string, partition: number): FollowedPartition | undefined {
    const k = key(topicId, partition);
    const p = this.partitions.get(k);
    this.partitions.delete(k);
    return p;
  }

  has(topicId: string, partition: number): FollowedPartition | undefined {
    return this.partitions.get(key(topicId, partition));
  }

  async close(): Promise<void> {
    this.abort.abort();
    this.wake?.();
    this.client.close();
    await this.loop;
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(t);
        this.wake = null;
        resolve();
      };
      const t = setTimeout(done, ms);
      this.wake = done;
    });
  }

  private async run(): Promise<void> {
    const signal = this.abort.signal;
    while (!signal.aborted) {
      const now = monoNow();
      const all = [...this.partitions.values()];
      const ready = all.filter((p) => p.delayedUntil <= now && !this.held(p));
      if (ready.length === 0) {
        // A held partition is asked for again once the quota has room (at most a second away).
        const quotaAt = now + Math.max(1, this.opts.quota?.delayMs() ?? 0);
        const next = Math.min(...all.map((p) => (p.delayedUntil > now ? p.delayedUntil : quotaAt)), now + this.opts.backoffMs);
        await this.sleep(Math.max(1, next - now));
        continue;
      }
      let res: FetchResponse;
      try {
        res = await this.client.send(this.spec, this.request(ready));
      } catch (err) {
        if (signal.aborted) return;
        this.opts.log.warn('follower fetch failed', { leader: this.leaderId, err: String(err) });
        await this.sleep(this.opts.backoffMs);
        continue;
      }
      if (signal.aborted) return;
      if (res.errorCode !== ErrorCode.NONE) {
        this.opts.log.warn('follower fetch refused', { leader: this.leaderId, errorCode: res.errorCode });
        await this.sleep(this.opts.backoffMs);
        continue;
      }
      let throttledBytes = 0;
      for (const t of res.responses) {
        for (const pd of t.partitions) {
          const p = this.partitions.get(key(t.topicId, pd.partitionIndex));
          if (p === undefined) continue;
          if (this.opts.quota?.isThrottled(p.topic, p.partition) === true) throttledBytes += pd.records?.length ?? 0;
          try {
            await this.apply(p, pd);
          } catch (err) {
            this.delay(p, String(err));
          }
        }
      }
      this.opts.quota?.record(throttledBytes);
    }
  }

  /** Left out of the next request by the follower throttle. */
  private held(p: FollowedPartition): boolean {
    const q = this.opts.quota;
    if (q === undefined || !q.isThrottled(p.topic, p.partition)) return false;
    return this.opts.inSync?.(p) !== true && q.isQuotaExceeded();
  }

  private request(ready: readonly FollowedPartition[]): FetchRequestInput {
    const byTopic = new Map<string, FollowedPartition[]>();
    for (const p of ready) {
      let l = byTopic.get(p.topicId);
      if (l === undefined) byTopic.set(p.topicId, (l = []));
      l.push(p);
    }
    return {
      maxWaitMs: this.opts.maxWaitMs,
      minBytes: this.opts.minBytes,
      maxBytes: this.opts.responseMaxBytes,
      isolationLevel: 0,
      // Sessionless full fetches (KIP-227 epoch -1): every request names its partitions.
      sessionId: 0,
      sessionEpoch: -1,
      topics: [...byTopic].map(([topicId, ps]) => ({
        topicId,
        partitions: ps.map((p) => {
          const mle = p.wantsMirrorLeaderEpoch?.() === true ? (p.mirrorLeaderEpoch ?? 0) : -1;
          p.sentMirrorLeaderEpoch = mle;
          return {
            partition: p.partition,
            currentLeaderEpoch: p.leaderEpoch,
            fetchOffset: BigInt(p.log.logEndOffset),
            lastFetchedEpoch: p.log.latestEpoch,
            logStartOffset: BigInt(p.log.logStartOffset),
            partitionMaxBytes: p.maxBytes,
            ...(mle >= 0 ? { mirrorLeaderEpoch: mle } : {}),
          };
        }),
      })),
      forgottenTopicsData: [],
    };
  }

  private delay(p: FollowedPartition, why: string | number, warn = false): void {
    p.delayedUntil = monoNow() + this.opts.backoffMs;
    const fields = { partition: `${p.topic}-${p.partition}`, leader: this.leaderId, why };
    if (warn) this.opts.log.warn('follower partition backing off', fields);
    else this.opts.log.info('follower partition backing off', fields);
  }

  private async apply(p: FollowedPartition, pd: FetchResponsePartitionData): Promise<void> {
    const log = p.log;
    const errorKind = fetchErrorKind(pd.errorCode);
    if (errorKind === 'out-of-range') {
      const leaderStart = Number(pd.logStartOffset);
      if (leaderStart >= 0 && log.logEndOffset < leaderStart) await log.truncateFullyAndStartAt(leaderStart);
      else if (Number(pd.highWatermark) >= 0 && Number(pd.highWatermark) < log.logEndOffset) await log.truncateTo(Number(pd.highWatermark));
      else this.delay(p, pd.errorCode);
      return;
    }
    if (errorKind !== 'none') {
      // Every other row of the table backs a follower off: a leader or topic error until the next
      // metadata image moves the partition; the rest logged as a warning, since they do not pass
      // by themselves (src/protocol/fetch-partition-errors.ts says why the mirror fails them).
      this.delay(p, pd.errorCode, errorKind === 'auth' || errorKind === 'other');
      return;
    }
    // The epoch batches are checked against: the MirrorLeaderEpoch this request carried when the
    // leader applied it (it answers one), else the destination leader epoch (KAFKA-18723). Any
    // answer, one with no records or a diverging epoch too, raises what the next request sends.
    const sentMle = p.sentMirrorLeaderEpoch ?? -1;
    const byMirrorEpoch = sentMle >= 0 && pd.mirrorLeaderEpoch >= 0;
    const allowedEpoch = byMirrorEpoch ? sentMle : p.leaderEpoch;
    if (byMirrorEpoch && pd.mirrorLeaderEpoch > (p.mirrorLeaderEpoch ?? 0)) p.mirrorLeaderEpoch = pd.mirrorLeaderEpoch;
    const d = pd.divergingEpoch;
    if (d.epoch >= 0 || d.endOffset >= 0n) {
      await this.truncateOnDivergence(p, d.epoch, Number(d.endOffset));
      return;
    }
    const records = pd.records;
    if (records !== null && records.length > 0) {
      const fetchOffset = log.logEndOffset;
      const run = walkFetchedBatches(records, fetchOffset, -1, allowedEpoch, p.maxBytes);
      if (run.oversizedBatch > 0) p.maxBytes = Math.max(p.maxBytes, run.oversizedBatch);
      if (run.start >= 0) {
        const r = await log.appendAsFollower(records.subarray(run.start, run.end));
        if (r.errorCode !== ErrorCode.NONE) {
          this.delay(p, r.errorCode);
          return;
        }
      }
      if (run.corrupt !== null) this.delay(p, `corrupt batch at ${run.corrupt.baseOffset}`);
      else if (run.fencedEpoch >= 0 && byMirrorEpoch) {
        this.opts.log.info('follower skipped batches above its MirrorLeaderEpoch', { partition: `${p.topic}-${p.partition}`, batchEpoch: run.fencedEpoch, sent: sentMle, answered: pd.mirrorLeaderEpoch });
        // The leader announced the epoch: the next fetch (at once) takes the batch. It did not:
        // the batch came from a history the request was not checked against; ask again later.
        if (pd.mirrorLeaderEpoch < run.fencedEpoch) this.delay(p, `batch epoch ${run.fencedEpoch} above the leader's MirrorLeaderEpoch ${pd.mirrorLeaderEpoch}`);
      } else if (run.fencedEpoch >= 0) this.delay(p, `batch epoch ${run.fencedEpoch} above the followed leader epoch ${p.leaderEpoch}`);
    }
    const leaderHw = Number(pd.highWatermark);
    if (leaderHw >= 0) log.updateHighWatermark(Math.min(leaderHw, log.logEndOffset));
  }

  /**
   * Cuts the log where the leader's DivergingEpoch says the two diverge, by the rules the mirror
   * fetcher uses too (src/storage/truncation-point.ts); the next Fetch goes out from the new end.
   */
  private async truncateOnDivergence(p: FollowedPartition, leaderEpoch: number, leaderEnd: number): Promise<void> {
    const log = p.log;
    const epochBefore = log.latestEpoch;
    const { from, to } = await truncateToLeaderEpochEnd(log, { epoch: leaderEpoch, endOffset: leaderEnd });
    this.opts.log.info('follower truncating on diverging epoch', { partition: `${p.topic}-${p.partition}`, leaderEpoch, leaderEnd, from, to });
    // Follower only, as Kafka's UnifiedLog.truncateTo does even when it cuts no batch: an epoch
    // that starts at the (new) log end holds no batch (this node's own, from when it led), so it
    // is dropped and the next LastFetchedEpoch is the epoch of the last batch kept. The mirror
    // fetcher's log is led by its own node, which keeps its epoch; it sends its last batch's epoch.
    await log.truncateEpochsFrom(log.logEndOffset);
    // Nothing moved: asking again at once would get the same answer. The follower has only its
    // Fetch to ask with (the mirror falls back to OffsetsForLeaderEpoch here).
    if (to === from && log.latestEpoch === epochBefore) this.delay(p, 'diverging epoch with nothing to truncate');
  }
}
