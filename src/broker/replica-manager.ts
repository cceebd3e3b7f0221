/**
 * The partitions this node leads (all of them, in a one-node cluster), mapped from the metadata
 * image to their logs (Kafka's ReplicaManager over its LogManager): logs opened at start for
 * every partition in the image that this node replicates, created when topics or partitions
 * appear or a reassignment adds this node, deleted when topics are removed or a reassignment
 * takes this node out of a partition's replicas (also at start, for changes made while the node
 * was down), reconfigured when topic configs change, and a new leader epoch started at the
 * log end when the image bumps it. Log dirs, checkpoints, retention, the cleaner, flush and the
 * clean-shutdown marker belong to the LogManager.
 *
 * Mirrored partitions keep the source's leader epochs: whether a topic does is the
 * `holdsSourceEpochs` policy given by the node, so this file needs nothing of mirroring.
 *
 * Handlers reach a partition's log through the one leader check here (`leaderLog`): this node
 * must be the unfenced leader, at the epoch the request names, before it answers for the log.
 * The few requests any replica answers (DescribeProducers) go through `replicaLog`, its last step.
 *
 * Concurrency contract: opens of one partition are shared (one PartitionLog per partition);
 * the LogManager runs the lifecycle operations of one partition one after another. Appends and
 * reads go straight to the PartitionLog, which serialises its own mutations.
 */
import type { Logger } from '../common/logger.js';
import type { MetadataImage, PartitionImage, TopicImage } from '../controller/metadata-image.js';
import type { MetadataRecord } from '../controller/metadata-records.js';
import { ErrorCode } from '../protocol/generated/errors.js';
import { logConfigFromProps, type LogConfig } from '../storage/log-config.js';
import type { LogManager } from '../storage/log-manager.js';
import type { PartitionLog } from '../storage/partition-log.js';
import type { ReplicationSeam } from '../replication/replication-seam.js';
import { isReplicated, ReplicationManager } from '../replication/replication-manager.js';
import type { PartitionLeader } from '../replication/partition-leader.js';
import type { ConfigResolver } from './config-resolver.js';

export interface Partition {
  readonly topic: TopicImage;
  readonly partition: number;
  readonly log: PartitionLog;
}

/** A partition this node leads unfenced. */
export interface Leadership {
  readonly topic: TopicImage;
  readonly part: PartitionImage;
  /** The leader role of a replicated partition, taken at the image's epoch; undefined when the partition is led here alone. */
  readonly leader: PartitionLeader | undefined;
}

/** A partition this node leads unfenced, its log, and the leader epoch it leads at. */
export interface LeaderLog extends Leadership {
  readonly log: PartitionLog;
  readonly leaderEpoch: number;
}

/** What a leader check refuses with: a Kafka error code, and the log when it was found (Fetch answers its offsets). */
export interface LeaderRefusal {
  readonly errorCode: number;
  readonly log?: PartitionLog;
}

export interface LeaderCheck {
  /** The current leader epoch the request names (KIP-320), null when it names none. */
  readonly currentLeaderEpoch?: number | null;
  /**
   * An append: a replicated partition is written only once this node has taken the leader role
   * at the image's epoch (Kafka's Partition.appendRecordsToLeader), and its writes wait on that role.
   */
  readonly forAppend?: boolean;
}

/**
 * True when the topic's epoch cache must hold only the epochs its batches arrive with (a mirror
 * topic still mirroring): destination epoch bumps then only guard writes and never start an
 * epoch in the log.
 */
type SourceEpochPolicy = (topic: TopicImage) => boolean;

/** The leader check's last step, the epoch the request names against the partition's (Kafka's Partition.checkCurrentLeaderEpoch). */
function checkCurrentLeaderEpoch(led: Leadership, log: PartitionLog, check: LeaderCheck): LeaderLog | LeaderRefusal {
  const epoch = led.part.leaderEpoch;
  const asked = check.currentLeaderEpoch ?? null;
  if (asked !== null && asked < epoch) return { errorCode: ErrorCode.FENCED_LEADER_EPOCH, log };
  if (asked !== null && asked > epoch) return { errorCode: ErrorCode.UNKNOWN_LEADER_EPOCH, log };
  return { ...led, log, leaderEpoch: led.leader?.leaderEpoch ?? epoch };
}

const key = (topic: string, partition: number): string => `${topic}-${partition}`;
/** How long a removed replica's log waits for replication to stop using it before it is deleted. */
const REPLICA_RELEASE_TIMEOUT_MS = 10_000;

export class ReplicaManager {
  private readonly opening = new Map<string, Promise<PartitionLog | undefined>>();
  private closed = false;
  /** Followers, ISR and acks=all of partitions with several replicas; null on a node alone. */
  replication: ReplicationManager | null = null;

  constructor(
    readonly logManager: LogManager,
    private readonly image: MetadataImage,
    private readonly configs: ConfigResolver,
    private readonly log: Logger,
    private readonly holdsSourceEpochs: SourceEpochPolicy,
  ) {}

  /**
   * Hosts only the partitions whose replicas include this node, and hands those with several
   * replicas (or led elsewhere) to replication. Called before `start`.
   */
  enableReplication(view: ReplicationSeam, opts: Omit<ConstructorParameters<typeof ReplicationManager>[2], 'minInsyncReplicas' | 'quotaSource' | 'log'>): ReplicationManager {
    this.replication = new ReplicationManager(view, this, {
      ...opts,
      minInsyncReplicas: (topic) => this.configs.minInsyncReplicas(topic),
      quotaSource: { topicConfig: (topic, key) => this.image.topic(topic)?.configs.get(key), brokerValue: (key) => this.configs.brokerValue(key) },
      log: this.log.child({ component: 'replication' }),
    });
    return this.replication;
  }

  /** True when this node holds a replica of the partition (every partition, on a node alone). */
  private hosts(topic: string, partition: number): boolean {
    const p = this.image.topic(topic)?.partitions[partition];
    if (p === undefined) return false;
    return this.replication === null || p.replicas.includes(this.replication.nodeId);
  }

  /** True when a new leader epoch starts in the log here (single-node partitions; replication does its own). */
  private startsEpochsHere(t: TopicImage, partition: number): boolean {
    const p = t.partitions[partition];
    return p !== undefined && (this.replication === null || !isReplicated(p, this.replication.nodeId)) && !this.holdsSourceEpochs(t);
  }

  /** Opens every partition in the image, removes logs of topics that no longer exist, starts the log tasks. */
  async start(): Promise<void> {
    const opens: Promise<unknown>[] = [];
    for (const t of this.image.topicsByName.values()) for (const p of t.partitions) opens.push(this.ensureLog(t.name, p.partition));
    await Promise.all(opens);
    await this.logManager.deleteStrays((topic, partition) => this.hosts(topic, partition));
    await this.logManager.checkpoint();
    this.logManager.startTasks();
    await this.replication?.start();
  }

  /** Writes the offset checkpoint files now (after DeleteRecords moved a log start). */
  checkpoint(): Promise<void> {
    return this.logManager.checkpoint();
  }

  logConfigOf(topic: string): LogConfig {
    return logConfigFromProps(this.configs.topicProps(topic));
  }

  /** The open log of a partition in the image, undefined when it is not (yet) open or does not exist. */
  getLog(topic: string, partition: number): PartitionLog | undefined {
    const l = this.logManager.get(topic, partition);
    return l !== undefined && this.opening.has(key(topic, partition)) ? undefined : l;
  }

  /** The log, opening it when the image has the partition; undefined when the image does not. */
  ensureLog(topic: string, partition: number): Promise<PartitionLog | undefined> {
    const k = key(topic, partition);
    const pending = this.opening.get(k);
    if (pending) return pending;
    const t = this.image.topic(topic);
    if (!t || !t.partitions[partition] || this.closed || !this.hosts(topic, partition)) return Promise.resolve(undefined);
    const open = this.logManager.get(topic, partition);
    if (open && open.topicId === t.topicId) return Promise.resolve(open);
    const p = (async (): Promise<PartitionLog | undefined> => {
      const l = await this.logManager.getOrCreate(topic, partition, t.topicId, this.logConfigOf(topic));
      const epoch = t.partitions[partition]!.leaderEpoch;
      if (l.latestEpoch < epoch && this.startsEpochsHere(t, partition)) await l.assignEpochStartOffset(epoch, l.logEndOffset);
      // The topic may have been deleted while the log was opening.
      if (this.image.topic(topic) !== t) {
        await this.logManager.delete(topic, partition, t.topicId);
        return undefined;
      }
      return l;
    })().finally(() => this.opening.delete(k));
    this.opening.set(k, p);
    return p;
  }

  /** Keeps logs in step with applied metadata records. */
  onMetadata(records: readonly MetadataRecord[], removed: ReadonlyMap<string, TopicImage>): void {
    for (const rec of records) {
      switch (rec.type) {
        case 'partition': {
          const t = this.image.topicsById.get(rec.topicId);
          // A PartitionRecord of a partition already hosted comes from a reloaded snapshot,
          // which may no longer list this node.
          if (t && !this.hosts(t.name, rec.partition)) void this.removeReplica(t, rec.partition);
          else if (t) void this.ensureLog(t.name, rec.partition);
          break;
        }
        case 'removeTopic': {
          const t = removed.get(rec.topicId);
          if (!t) break;
          for (const p of t.partitions) {
            void this.logManager
              .delete(t.name, p.partition, t.topicId)
              .catch((err: unknown) => this.log.warn('deleting partition log failed', { partition: key(t.name, p.partition), err: String(err) }));
          }
          break;
        }
        case 'config':
          this.reconfigure(rec.resourceType === 2 ? rec.resourceName : null);
          break;
        case 'partitionChange': {
          const t = this.image.topicsById.get(rec.topicId);
          if (t && rec.replicas && !this.hosts(t.name, rec.partition)) {
            void this.removeReplica(t, rec.partition);
            break;
          }
          const l = t ? this.getLog(t.name, rec.partition) : undefined;
          if (t && l && rec.leaderEpoch > l.latestEpoch && this.startsEpochsHere(t, rec.partition)) void l.assignEpochStartOffset(rec.leaderEpoch, l.logEndOffset);
          break;
        }
        default:
          break;
      }
    }
  }

  /**
   * A reassignment took this node out of the partition's replicas: its log is deleted (KRaft's
   * ReplicaManager.applyDelta stops a replica that is no longer assigned and deletes its log, as
   * StopReplica with deletePartition=true did). Replication lets go of the log first (it resigns
   * leadership and removes the partition from its fetcher), so no fetch appends to a deleted log.
   */
  private async removeReplica(t: TopicImage, partition: number): Promise<void> {
    const deadline = Date.now() + REPLICA_RELEASE_TIMEOUT_MS;
    while (this.replication !== null && this.replication.role(t.topicId, partition) !== 'none' && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 20));
    }
    // Assigned here again meanwhile (a cancelled or new reassignment): the log stays.
    if (this.closed || this.hosts(t.name, partition) || this.image.topicsById.get(t.topicId) !== t) return;
    await this.opening.get(key(t.name, partition));
    if (this.logManager.get(t.name, partition) === undefined && !this.logManager.hasUnopened(t.name, partition)) return;
    this.log.info('deleting the log of a replica no longer assigned here', { partition: key(t.name, partition) });
    await this.logManager
      .delete(t.name, partition, t.topicId)
      .catch((err: unknown) => this.log.warn('deleting partition log failed', { partition: key(t.name, partition), err: String(err) }));
  }

  /** Recomputes LogConfig for one topic, or for all (a broker default changed). */
  private reconfigure(topic: string | null): void {
    for (const t of topic === null ? [...this.image.topicsByName.values()] : [this.image.topic(topic)].filter((x): x is TopicImage => !!x)) {
      let cfg: LogConfig;
      try {
        cfg = this.logConfigOf(t.name);
      } catch (err) {
        this.log.warn('invalid topic config ignored', { topic: t.name, err: String(err) });
        continue;
      }
      this.logManager.updateConfig(t.name, cfg);
    }
  }

  /**
   * Whether this node may act as the partition's leader now, checked as Kafka's
   * ReplicaManager.getPartitionOrError and Partition.appendRecordsToLeader do: a partition the
   * image does not have is UNKNOWN_TOPIC_OR_PARTITION; on a cluster one this node does not lead,
   * or leads while fenced (no live registration), NOT_LEADER_OR_FOLLOWER, and for an append so is
   * a replicated one whose leader role has not yet been taken at the image's epoch. A node alone
   * leads every partition.
   */
  leadership(topic: TopicImage | undefined, partition: number, forAppend = false): Leadership | number {
    const part = topic?.partitions[partition];
    if (topic === undefined || part === undefined) return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION;
    const replication = this.replication;
    if (replication === null) return { topic, part, leader: undefined };
    if (part.leader !== replication.nodeId || replication.fenced) return ErrorCode.NOT_LEADER_OR_FOLLOWER;
    if (!forAppend || !isReplicated(part, replication.nodeId)) return { topic, part, leader: undefined };
    const leader = replication.leaderOf(topic.topicId, partition);
    return leader !== undefined && leader.leaderEpoch === part.leaderEpoch ? { topic, part, leader } : ErrorCode.NOT_LEADER_OR_FOLLOWER;
  }

  /**
   * The log of a partition for a request only its leader answers: `leadership`, then the log
   * (opened when it is not yet), then the current leader epoch the request names (Kafka's
   * Partition.checkCurrentLeaderEpoch): older than the partition's is FENCED_LEADER_EPOCH, newer
   * UNKNOWN_LEADER_EPOCH, both with the log. A partition with no log here is answered as
   * `replicaLog` answers it.
   */
  async leaderLog(topic: TopicImage | undefined, partition: number, check: LeaderCheck = {}): Promise<LeaderLog | LeaderRefusal> {
    const led = this.leadership(topic, partition, check.forAppend);
    if (typeof led === 'number') return { errorCode: led };
    const log = await this.replicaLog(led.topic, partition);
    return typeof log === 'number' ? { errorCode: log } : checkCurrentLeaderEpoch(led, log, check);
  }

  /**
   * The log of a partition this node holds a replica of, leader or follower, for a request any
   * replica answers (Kafka's ReplicaManager.getPartitionOrError): a partition the image does not
   * have is UNKNOWN_TOPIC_OR_PARTITION; one the image has but with no log here (this node is not
   * among its replicas, or the log is being closed) NOT_LEADER_OR_FOLLOWER, which sends clients
   * to fresh metadata; UNKNOWN_TOPIC_OR_PARTITION again once the topic was deleted meanwhile.
   */
  async replicaLog(topic: TopicImage | undefined, partition: number): Promise<PartitionLog | number> {
    if (topic === undefined || topic.partitions[partition] === undefined) return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION;
    const { name, topicId } = topic;
    const log = this.getLog(name, partition) ?? (await this.ensureLog(name, partition));
    if (log !== undefined) return log;
    const now = this.image.topic(name);
    return now?.topicId === topicId && now.partitions[partition] !== undefined ? ErrorCode.NOT_LEADER_OR_FOLLOWER : ErrorCode.UNKNOWN_TOPIC_OR_PARTITION;
  }

  /**
   * `leaderLog` with no wait, for the produce path, which appends a request's batches in the
   * order sent only while it does not yield: undefined when the log is not open yet (then
   * `leaderLog` opens it).
   */
  openLeaderLog(topic: TopicImage | undefined, partition: number, check: LeaderCheck = {}): LeaderLog | LeaderRefusal | undefined {
    const led = this.leadership(topic, partition, check.forAppend);
    if (typeof led === 'number') return { errorCode: led };
    const log = this.getLog(led.topic.name, partition);
    return log === undefined ? undefined : checkCurrentLeaderEpoch(led, log, check);
  }

  /** Every open log with its topic and partition. */
  *partitions(): IterableIterator<Partition> {
    for (const t of this.image.topicsByName.values()) {
      for (const p of t.partitions) {
        const l = this.getLog(t.name, p.partition);
        if (l && l.topicId === t.topicId) yield { topic: t, partition: p.partition, log: l };
      }
    }
  }

  /**
   * Flushes and closes every log. Resolves true when all closed cleanly; the node then has the
   * LogManager write the clean-shutdown markers once the metadata log is closed too.
   */
  async close(): Promise<boolean> {
    this.closed = true;
    await this.replication?.close();
    await Promise.allSettled([...this.opening.values()]);
    return this.logManager.close();
  }
}
