/**
 * Roles of this node's replicas from the metadata image (Kafka's ReplicaManager.applyDelta with
 * makeLeaders / makeFollowers): for every partition whose replicas include this node, leader when
 * the image names it leader and the node is not fenced, else follower of the image's leader. A
 * role is re-decided on every PartitionRecord and PartitionChangeRecord and when fencing changes.
 *
 * - Leader: a new leader epoch starts at the log end; a PartitionLeader tracks the followers,
 *   the ISR and the high watermark, and holds the acks=all produces.
 * - Follower: the partition is fetched by one ReplicaFetcher per (leader, fetcher id)
 *   (`num.replica.fetchers`); an epoch marker at the log end without batches is dropped first.
 * - A partition with one replica led here stays exactly as on a single node: its high
 *   watermark follows local appends and nothing of this file touches it.
 *
 * Concurrency contract: role changes of one partition run one after another (a promise chain per
 * partition); reads of the role (`leaderOf`) see the last completed change.
 */
import { ErrorCode } from '../protocol/generated/errors.js';
import { DelayedOperationPurgatory } from '../common/purgatory.js';
import type { InterBrokerSecurity } from '../client/inter-broker-security.js';
import type { Logger } from '../common/logger.js';
import type { MetadataRecord } from '../controller/metadata-records.js';
import type { PartitionImage, TopicImage } from '../controller/metadata-image.js';
import type { PartitionLog } from '../storage/partition-log.js';
import { onFencingChange, replicaEndpoint, type ReplicationSeam } from './replication-seam.js';
import { PartitionLeader } from './partition-leader.js';
import { ReplicaFetcher } from './replica-fetcher.js';
import { replicationQuotas, type ReplicationQuotaSource, type ReplicationQuotas } from './replication-quotas.js';

interface ReplicationOptions {
  readonly lagTimeMaxMs: number;
  readonly fetchMaxBytes: number;
  readonly fetchResponseMaxBytes: number;
  readonly fetchWaitMaxMs: number;
  readonly fetchMinBytes: number;
  readonly fetchBackoffMs: number;
  readonly numFetchers: number;
  /** min.insync.replicas of a topic (topic override, else the broker's). */
  readonly minInsyncReplicas: (topic: string) => number;
  /** How follower fetches reach leaders: the inter-broker listener's security (PLAINTEXT when absent). */
  readonly interBrokerSecurity?: InterBrokerSecurity;
  /** The topic and broker keys of the reassignment throttles (./replication-quotas.ts). */
  readonly quotaSource: ReplicationQuotaSource;
  readonly log: Logger;
}

/**
 * What a follower fetch of a partition led here gets under the leader throttle: `free` (not a
 * throttled partition), `counted` (throttled: its bytes count against the quota), `held` (a
 * throttled replica outside the ISR while the quota is exceeded: no records this time).
 */
type LeaderThrottle = 'free' | 'counted' | 'held';

/** Where the manager gets logs: the ReplicaManager's open/create. */
interface ReplicaLogs {
  ensureLog(topic: string, partition: number): Promise<PartitionLog | undefined>;
}

type ReplicaRole = 'leader' | 'follower' | 'none';

const key = (topicId: string, partition: number): string => `${topicId}:${partition}`;

/** Kafka's AbstractFetcherManager.getFetcherId: a partition's fetcher among num.replica.fetchers. */
function fetcherId(topic: string, partition: number, n: number): number {
  let h = 0;
  for (let i = 0; i < topic.length; i++) h = (Math.imul(31, h) + topic.charCodeAt(i)) | 0;
  return Math.abs((Math.imul(31, h) + partition) | 0) % n;
}

/** A follower of this topic sends MirrorLeaderEpoch (KIP-1279 §9.6; see replica-fetcher.ts). */
function wantsMirrorLeaderEpoch(t: TopicImage | undefined): boolean {
  return t !== undefined && t.mirror !== null && t.configs.get('mirror.support.unclean.leader.election') === 'true';
}

/** True when the partition's high watermark is the ISR's business rather than the local log's. */
export function isReplicated(p: PartitionImage, nodeId: number): boolean {
  return p.replicas.length > 1 || p.leader !== nodeId;
}

export class ReplicationManager {
  private readonly leaders = new Map<string, PartitionLeader>();
  /** Partition key → the fetcher key it is followed by. */
  private readonly followed = new Map<string, string>();
  private readonly fetchers = new Map<string, ReplicaFetcher>();
  private readonly chains = new Map<string, Promise<void>>();
  private readonly offs: (() => void)[] = [];
  private shrinkTimer: NodeJS.Timeout | null = null;
  private closed = false;
  readonly quotas: ReplicationQuotas;
  /** acks=all writes to partitions led here, waiting for the ISR (Kafka's delayedProducePurgatory). */
  readonly produces = new DelayedOperationPurgatory<string>();

  constructor(
    private readonly view: ReplicationSeam,
    private readonly logs: ReplicaLogs,
    private readonly opts: ReplicationOptions,
  ) {
    this.quotas = replicationQuotas(view.nodeId, opts.quotaSource);
  }

  /** Kafka's ReplicaManager.shouldLeaderThrottle for follower `replicaId` fetching `topic`-`p`. */
  leaderThrottle(topic: string, p: PartitionImage, replicaId: number): LeaderThrottle {
    const q = this.quotas.leader;
    if (!q.isThrottled(topic, p.partition)) return 'free';
    return !p.isr.includes(replicaId) && q.isQuotaExceeded() ? 'held' : 'counted';
  }

  get nodeId(): number {
    return this.view.nodeId;
  }

  /** Decides every partition's role, then follows the image and fencing. */
  async start(): Promise<void> {
    this.offs.push(
      this.view.onChange((records, removed) => this.onMetadata(records, removed)),
      onFencingChange(this.view.cluster, () => void this.reconcileAll()),
    );
    this.shrinkTimer = setInterval(() => {
      for (const l of this.leaders.values()) l.maybeShrinkIsr();
    }, Math.max(10, Math.floor(this.opts.lagTimeMaxMs / 2)));
    this.shrinkTimer.unref();
    await Promise.all(this.reconcileAll());
  }

  /** The leader state of a replicated partition led here; undefined when this node does not lead it. */
  leaderOf(topicId: string, partition: number): PartitionLeader | undefined {
    return this.leaders.get(key(topicId, partition));
  }

  role(topicId: string, partition: number): ReplicaRole {
    const k = key(topicId, partition);
    if (this.leaders.has(k)) return 'leader';
    return this.followed.has(k) ? 'follower' : 'none';
  }

  get fenced(): boolean {
    return this.view.cluster.fenced;
  }

  /** Metadata records name partitions: each one named is decided again from the image. */
  private onMetadata(records: readonly MetadataRecord[], removed: ReadonlyMap<string, TopicImage>): void {
    for (const rec of records) {
      if (rec.type === 'partition' || rec.type === 'partitionChange') void this.reconcile(rec.topicId, rec.partition);
      else if (rec.type === 'removeTopic') {
        const t = removed.get(rec.topicId);
        for (const p of t?.partitions ?? []) void this.reconcile(rec.topicId, p.partition);
        if (t !== undefined) {
          this.quotas.leader.forget(t.name);
          this.quotas.follower.forget(t.name);
        }
      }
    }
  }

  private reconcileAll(): Promise<void>[] {
    const all: Promise<void>[] = [];
    for (const t of this.view.image.topicsById.values()) for (const p of t.partitions) all.push(this.reconcile(t.topicId, p.partition));
    for (const k of [...this.leaders.keys(), ...this.followed.keys()]) {
      const [topicId, partition] = k.split(':') as [string, string];
      if (!this.view.image.topicsById.has(topicId)) all.push(this.reconcile(topicId, Number(partition)));
    }
    return all;
  }

  private reconcile(topicId: string, partition: number): Promise<void> {
    const k = key(topicId, partition);
    const run = (): Promise<void> =>
      this.decide(topicId, partition).catch((err: unknown) => this.opts.log.error('replica role change failed', { partition: k, err: String(err) }));
    const p = (this.chains.get(k) ?? Promise.resolve()).then(run);
    this.chains.set(k, p);
    void p.then(() => {
      if (this.chains.get(k) === p) this.chains.delete(k);
    });
    return p;
  }

  private async decide(topicId: string, partition: number): Promise<void> {
    if (this.closed) return;
    const k = key(topicId, partition);
    const t = this.view.image.topicsById.get(topicId);
    const p = t?.partitions[partition];
    const nodeId = this.view.nodeId;
    if (t === undefined || p === undefined || !p.replicas.includes(nodeId)) {
      this.resign(k, ErrorCode.NOT_LEADER_OR_FOLLOWER);
      this.unfollow(k);
      return;
    }
    const log = await this.logs.ensureLog(t.name, partition);
    // Each await may cross close(): nothing may start leading or fetching after it.
    if (log === undefined || this.closed) return;
    if (!isReplicated(p, nodeId)) {
      // One replica, led here: the single-node path (high watermark at the log end).
      this.resign(k, ErrorCode.NOT_LEADER_OR_FOLLOWER);
      this.unfollow(k);
      log.setReplicated(false);
      return;
    }
    log.setReplicated(true);
    if (p.leader === nodeId && !this.view.cluster.fenced) {
      this.unfollow(k);
      const cur = this.leaders.get(k);
      if (cur !== undefined && cur.leaderEpoch === p.leaderEpoch && cur.log === log) {
        cur.part = p;
        cur.onImageChange();
        return;
      }
      this.resign(k, ErrorCode.NOT_LEADER_OR_FOLLOWER);
      // Kafka's Partition.makeLeader: the new epoch starts at the log end, everything below is kept.
      if (log.latestEpoch < p.leaderEpoch) await log.assignEpochStartOffset(p.leaderEpoch, log.logEndOffset);
      if (this.closed) return;
      this.leaders.set(
        k,
        new PartitionLeader(t.name, topicId, p, log, this.view, {
          lagTimeMaxMs: this.opts.lagTimeMaxMs,
          retryBackoffMs: this.opts.fetchBackoffMs,
          minInsyncReplicas: () => this.opts.minInsyncReplicas(t.name),
          // Monotonic (with Date-like magnitude, so 0 still means long ago): a wall-clock jump
          // must not make every follower look lagging, nor hide one that is.
          now: () => performance.timeOrigin + performance.now(),
          warn: (msg, fields) => this.opts.log.warn(msg, fields),
          produces: this.produces,
        }),
      );
      this.opts.log.info('became leader', { partition: `${t.name}-${partition}`, leaderEpoch: p.leaderEpoch, logEndOffset: log.logEndOffset, isr: p.isr.join(',') });
      return;
    }
    // Fenced, or another node leads: never acknowledge a write here again.
    this.resign(k, ErrorCode.NOT_LEADER_OR_FOLLOWER);
    if (p.leader < 0 || p.leader === nodeId) {
      this.unfollow(k);
      return;
    }
    const endpoint = replicaEndpoint(this.view.cluster, p.leader);
    const fk = `${p.leader}:${fetcherId(t.name, partition, this.opts.numFetchers)}`;
    const existing = this.fetchers.get(this.followed.get(k) ?? '')?.has(topicId, partition);
    if (existing !== undefined && this.followed.get(k) === fk && existing.leaderEpoch === p.leaderEpoch && existing.log === log) return;
    this.unfollow(k);
    if (endpoint === undefined) {
      // The leader's registration is not in view yet: asked again after the backoff.
      setTimeout(() => void this.reconcile(topicId, partition), this.opts.fetchBackoffMs).unref();
      return;
    }
    await log.truncateEpochsFrom(log.logEndOffset);
    if (this.closed) return;
    let f = this.fetchers.get(fk);
    if (f !== undefined && (f.endpoint.host !== endpoint.host || f.endpoint.port !== endpoint.port)) {
      this.fetchers.delete(fk);
      void f.close();
      f = undefined;
    }
    if (f === undefined) {
      f = new ReplicaFetcher(p.leader, endpoint, {
        nodeId,
        brokerEpoch: () => this.view.cluster.brokerEpoch(),
        maxBytes: this.opts.fetchMaxBytes,
        responseMaxBytes: this.opts.fetchResponseMaxBytes,
        maxWaitMs: this.opts.fetchWaitMaxMs,
        minBytes: this.opts.fetchMinBytes,
        backoffMs: this.opts.fetchBackoffMs,
        ...(this.opts.interBrokerSecurity !== undefined ? { security: this.opts.interBrokerSecurity } : {}),
        quota: this.quotas.follower,
        // Kafka's PartitionFetchState.isReplicaInSync: a follower already in the ISR is never held back.
        inSync: (fp) => this.view.image.topicsById.get(fp.topicId)?.partitions[fp.partition]?.isr.includes(nodeId) === true,
        log: this.opts.log,
      });
      this.fetchers.set(fk, f);
    }
    f.add({ topic: t.name, topicId, partition, log, leaderEpoch: p.leaderEpoch, delayedUntil: 0, maxBytes: this.opts.fetchMaxBytes, wantsMirrorLeaderEpoch: () => wantsMirrorLeaderEpoch(this.view.image.topicsById.get(topicId)) });
    this.followed.set(k, fk);
    this.opts.log.info('became follower', { partition: `${t.name}-${partition}`, leader: p.leader, leaderEpoch: p.leaderEpoch, logEndOffset: log.logEndOffset });
  }

  private resign(k: string, errorCode: number): void {
    const l = this.leaders.get(k);
    if (l === undefined) return;
    this.leaders.delete(k);
    l.resign(errorCode);
  }

  private unfollow(k: string): void {
    const fk = this.followed.get(k);
    if (fk === undefined) return;
    this.followed.delete(k);
    const f = this.fetchers.get(fk);
    if (f === undefined) return;
    const [topicId, partition] = k.split(':') as [string, string];
    f.remove(topicId, Number(partition));
    if (f.size === 0) {
      this.fetchers.delete(fk);
      void f.close();
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const off of this.offs) off();
    if (this.shrinkTimer !== null) clearInterval(this.shrinkTimer);
    for (const k of [...this.leaders.keys()]) this.resign(k, ErrorCode.NOT_LEADER_OR_FOLLOWER);
    const fs = [...this.fetchers.values()];
    this.fetchers.clear();
    this.followed.clear();
    await Promise.all(fs.map((f) => f.close()));
  }
}
