/**
 * What cluster mirroring (KIP-1279) needs from the node it runs in. The broker implements this
 * once and passes it to `createMirrorApiHandlers(host)` (./mirror-api-handlers.ts).
 *
 * It extends the coordinator seam because the cluster-mirror coordinator keeps its state in the
 * internal compacted topic `__mirror_state`, opened through `openInternalPartition` exactly like
 * `__consumer_offsets`.
 *
 * Concurrency contract: every method is called on the node's event loop. A promise returned by a
 * controller write resolves once the records are in the metadata log AND applied to the image the
 * other getters read (so a getter called right after sees the change).
 */
import type { ApiHandler } from '../server/api-handler.js';
import type { CoordinatorHost } from '../coordinator/coordinator-host.js';
import type { MirrorAppendResult, MirrorLog } from '../fetcher/mirror-log.js';
import type { InterBrokerSecurity } from '../client/inter-broker-security.js';
import type { MirrorPartitionStateValue } from './mirror-partition-state.js';
import type { DesiredStateGuard } from './desired-state-rules.js';

/** A producer whose transaction is open in a partition (STOPPING aborts it, spec §8.5 d). */
export interface OpenTransaction {
  readonly producerId: number;
  readonly producerEpoch: number;
  /** Coordinator epoch of the last marker seen, 0 when unknown (as Kafka writes it). */
  readonly coordinatorEpoch: number;
}

/** A topic's mirror binding as replayed from MirrorTopicStateChangeRecord into the image. */
export interface MirrorTopicBinding {
  readonly topicName: string;
  readonly topicId: string;
  readonly mirrorName: string;
  /** Desired state for every partition, a `MirrorPartitionState` byte (MIRRORING, PAUSED, STOPPED). */
  readonly desiredState: MirrorPartitionStateValue;
  /** Metadata-log offset of the last MirrorTopicStateChangeRecord for this topic (optimistic locking). */
  readonly lastStateChangeOffset: number;
}

/**
 * One controller write. The broker turns a list of these into metadata records appended as one
 * atomic batch (all or nothing):
 * - createTopic → TopicRecord with the given (source) topic id + PartitionRecords + ConfigRecords,
 *   replication factor = the node's default (CreateTopics v8 MirrorInfo semantics).
 * - mirrorTopicState → MirrorTopicStateChangeRecord { TopicId, MirrorName (null = unbind), DesiredState }.
 *   The whole list first passes `validateMirrorOps` (./desired-state-rules.ts) against the image
 *   the batch lands on, again on every compare-and-swap retry; a refusal is the write's result.
 * - mirrorConfig → ConfigRecord { ResourceType 64, ResourceName = mirror, Name, Value (null = delete) }.
 * - bumpLeaderEpoch → PartitionChangeRecord v3 with LeaderEpoch set, leader and ISR unchanged.
 *   With `whileMirrored`, the batch is refused with MIRROR_TOPIC_BEING_STOPPED when the topic is,
 *   as the records are applied, bound with desired state STOPPED: from then on the node writes a
 *   bump into the epoch cache, while the fetcher may still be appending source batches until
 *   STOPPING has removed it (only STOPPING's own bump, after that, may land).
 */
export type MirrorControllerOp =
  | {
      readonly type: 'createTopic';
      readonly name: string;
      readonly topicId: string;
      readonly numPartitions: number;
      readonly configs: ReadonlyMap<string, string>;
    }
  | {
      readonly type: 'mirrorTopicState';
      readonly topicId: string;
      readonly mirrorName: string | null;
      readonly desiredState: MirrorPartitionStateValue;
      /** The request's rules, decided again against the image the write lands on (./desired-state-rules.ts). */
      readonly guard?: DesiredStateGuard;
    }
  | {
      /**
       * Moves patterns between `mirror.topics.include` and `mirror.topics.exclude`
       * (`movePatterns` in ./desired-state-rules.ts), on the lists as the batch finds them: two
       * ConfigRecords. `base` is what the requesting node read.
       */
      readonly type: 'mirrorTopicLists';
      readonly mirrorName: string;
      readonly include: readonly string[];
      readonly exclude: readonly string[];
      readonly base: ReadonlyMap<string, string>;
    }
  | {
      /** Writes nothing; refuses the batch unless exactly these topics are bound to the mirror (a delete's check). */
      readonly type: 'mirrorEmptiedOf';
      readonly mirrorName: string;
      readonly topicIds: readonly string[];
    }
  | {
      readonly type: 'mirrorConfig';
      readonly mirrorName: string;
      readonly name: string;
      readonly value: string | null;
    }
  | {
      readonly type: 'bumpLeaderEpoch';
      readonly topicId: string;
      readonly partition: number;
      readonly leaderEpoch: number;
      readonly whileMirrored?: boolean;
    };

export interface MirrorControllerResult {
  /** 0 on success; otherwise a Kafka error code (e.g. TOPIC_ALREADY_EXISTS, INVALID_REPLICATION_FACTOR). */
  readonly errorCode: number;
  readonly errorMessage?: string;
  /** Metadata-log offset of the last record written (the image offset after applying). */
  readonly metadataOffset: number;
}

/**
 * Where the replicas of a partition led here stand (Kafka's Partition on the leader): the ISR and
 * assigned replicas from the image, each follower's log end as its last fetch showed it (-1 not
 * heard from since this node became leader), and the topic's min.insync.replicas.
 */
export interface ReplicaProgress {
  readonly replicas: readonly number[];
  readonly isr: readonly number[];
  readonly minInsyncReplicas: number;
  readonly followerLogEnds: ReadonlyMap<number, number>;
  /** The topic's `mirror.support.unclean.leader.election`. */
  readonly supportUncleanLeaderElection: boolean;
}

export interface MirrorHost extends CoordinatorHost {
  /** This cluster's id (sent as ClusterId in DescribeClusterMirrors LME lookups, compared for loops). */
  readonly clusterId: string;

  /** How this node connects to the inter-broker listeners, its own included (mirror state RPCs, syncs written through itself). */
  readonly interBrokerSecurity: InterBrokerSecurity;

  /** Offset of the last metadata record applied to the image (StateValidationOffset). */
  metadataOffset(): number;

  /** Every topic name in the image. */
  topicNames(): string[];

  /** Current leader epoch of a partition in the image, undefined when the partition does not exist. */
  leaderEpoch(topic: string, partition: number): number | undefined;

  /** True when this node leads the partition (always, for a single-node cluster). */
  isLocalLeader(topic: string, partition: number): boolean;

  /** The partition's log when led here, undefined otherwise. */
  partitionLog(topic: string, partition: number): MirrorLog | undefined;

  /**
   * The partition's log once it is open, opening it when the image places it here; undefined at
   * once when the image does not. Without it, a log not yet open is polled for.
   */
  openPartitionLog?(topic: string, partition: number): Promise<MirrorLog | undefined>;

  /**
   * The replicas of a partition led here, for LOG_TRUNCATION's wait on the ISR (spec §9.3);
   * undefined when the partition has one replica (or the node is alone): nothing to wait for.
   */
  replicaProgress?(topic: string, partition: number): ReplicaProgress | undefined;

  /** Open transactions of a partition's producer state (for STOPPING's ABORT markers). */
  openTransactions(topic: string, partition: number): readonly OpenTransaction[];

  /**
   * Appends a control batch built by the mirror coordinator (ABORT markers, MIRROR_PID_RESET) as
   * the partition leader at the current leader epoch; the log assigns offsets. Resolves once the
   * batch is committed (acks=all: on a replicated partition the ISR holds it). The read-only guard
   * must let it through: it is called only while the partition is STOPPING.
   */
  appendCoordinatorBatch(topic: string, partition: number, batch: Buffer): Promise<MirrorAppendResult>;

  /** Mirror bindings of all topics (replayed MirrorTopicStateChangeRecords with a non-null mirror). */
  mirrorTopicBindings(): readonly MirrorTopicBinding[];

  /**
   * One topic's mirror binding, undefined when the topic is not bound. The produce path asks this
   * for every partition it appends to, so it reads the image's entry for the name and lists nothing.
   */
  mirrorTopicBinding(topic: string): MirrorTopicBinding | undefined;

  /** CLUSTER_MIRROR config resources: mirror name → key → value (only keys set explicitly). */
  mirrorConfigs(): ReadonlyMap<string, ReadonlyMap<string, string>>;

  /**
   * Grows a mirror topic to `newTotal` partitions (partition growth on the source, spec §10.7),
   * past the CreatePartitions API, which refuses a mirror topic that is not stopped. Without it
   * the mirror sends CreatePartitions to this node's own listener.
   */
  createMirrorPartitions?(topic: string, newTotal: number): Promise<{ errorCode: number; errorMessage: string | null }>;

  /**
   * Sets a mirror topic's synced configs (topic config sync, spec §10.1), past the config APIs,
   * which refuse synced keys on a mirror topic that is not stopped. Without it the mirror sends
   * IncrementalAlterConfigs to this node's own listener.
   */
  alterMirrorTopicConfigs?(topic: string, changes: ReadonlyArray<readonly [string, string]>): Promise<{ errorCode: number; errorMessage: string | null }>;

  /** Applies controller writes atomically (see MirrorControllerOp). */
  controllerWrite(ops: readonly MirrorControllerOp[]): Promise<MirrorControllerResult>;
}

/** A DescribeConfigs entry for a CLUSTER_MIRROR resource. */
export interface MirrorConfigEntry {
  readonly name: string;
  readonly value: string | null;
  readonly isDefault: boolean;
  readonly isSensitive: boolean;
}

/** One IncrementalAlterConfigs operation (op: 0 SET, 1 DELETE, 2 APPEND, 3 SUBTRACT). */
export interface MirrorConfigAlteration {
  readonly name: string;
  readonly op: number;
  readonly value: string | null;
}

/**
 * What `createMirrorApiHandlers(host)` returns to the broker. The broker registers `handlers`
 * (API keys 94-96, 98-105), routes DescribeConfigs / IncrementalAlterConfigs for resource type 64
 * to `describeMirrorConfig` / `alterMirrorConfig`, and asks `isProduceAllowed` for every Produce
 * partition (false → READ_ONLY_TOPIC, error 134).
 */
export interface MirrorApiHandlers {
  readonly handlers: ApiHandler[];
  /**
   * Client produce to `topic` is allowed: the topic is not bound to a mirror, or its partition is
   * STOPPED (spec §2 read-only guard). The coordinator's own ABORT / MIRROR_PID_RESET appends go
   * through `appendCoordinatorBatch`, not Produce.
   */
  isProduceAllowed(topic: string, partition: number): boolean;
  /**
   * The error a client write to the partition gets, 0 when allowed: READ_ONLY_TOPIC while its
   * topic is mirrored, NOT_LEADER_OR_FOLLOWER (retriable) once it is being stopped until this
   * leader holds its persisted STOPPED.
   */
  produceError(topic: string, partition: number): number;
  /** null when the mirror does not exist (→ UNKNOWN_CLUSTER_MIRROR / resource not found). */
  describeMirrorConfig(mirrorName: string): readonly MirrorConfigEntry[] | null;
  /** Returns a Kafka error code (0 ok; INVALID_CONFIG 40, UNKNOWN_CLUSTER_MIRROR 137, ...) and message. */
  alterMirrorConfig(
    mirrorName: string,
    alterations: readonly MirrorConfigAlteration[],
    validateOnly: boolean,
  ): Promise<{ errorCode: number; errorMessage: string | null }>;
  /** Stops fetchers and timers; leaves state persisted. */
  close(): Promise<void>;
}
