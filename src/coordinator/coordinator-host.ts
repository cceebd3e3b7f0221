/**
 * What a coordinator needs from the node it runs in. The broker implements this once and hands
 * it to `createGroupApiHandlers` (and later the transaction and mirror coordinators). Kept narrow
 * on purpose: a coordinator never sees sockets, the controller or other partitions' logs.
 */
import type { Clock, Timers } from '../common/time.js';


export interface CoordinatorAppendResult {
  /** 0 when the batch is durable per the log's flush policy; a Kafka error code otherwise. */
  readonly errorCode: number;
  readonly baseOffset: number;
  readonly lastOffset: number;
}

/**
 * The slice of a partition log a coordinator uses: append one batch as leader, read batches back
 * for replay. `PartitionLog` (src/storage/partition-log.ts) provides this through
 * `coordinatorLogOf(log, opts)` in `./partition-log-adapter.ts`, for the node (with its replication) and for tests.
 */
export interface CoordinatorLog {
  readonly logStartOffset: number;
  readonly logEndOffset: number;
  /** Appends one record batch (offsets are assigned by the log); resolves once committed. */
  append(batch: Buffer): Promise<CoordinatorAppendResult>;
  /** Whole record batches starting at or before `fetchOffset`, at most about `maxBytes` (at least one batch). */
  readFrom(fetchOffset: number, maxBytes: number): Promise<Buffer>;
}

export interface TxnMarker {
  readonly producerId: number;
  readonly producerEpoch: number;
  readonly coordinatorEpoch: number;
  readonly commit: boolean;
  /** The client's transaction version (2: transactions V2, KIP-890 part 2), WriteTxnMarkers v2's TransactionVersion. */
  readonly transactionVersion?: number;
}

/** Where a client reaches a coordinator (FindCoordinator's answer). */
export interface CoordinatorEndpoint {
  readonly nodeId: number;
  readonly host: string;
  readonly port: number;
}

/**
 * Leadership of internal-topic partitions on a cluster: a node serves a coordinator shard only
 * while it leads that partition, as Kafka's GroupCoordinator/TransactionCoordinator do through
 * onElection / onResignation. Absent on a node alone, which leads every partition.
 */
export interface CoordinatorLeadership {
  /** True while this node leads the partition and may append to it (unfenced, leader role taken at the image's epoch). */
  leads(topic: string, partition: number): boolean;
  /**
   * The partition's leader as a client on listener `listenerName` reaches it; null when the
   * partition has no live leader (or the topic does not exist yet).
   */
  leaderEndpoint(topic: string, partition: number, listenerName?: string): CoordinatorEndpoint | null;
  /** The partition's leader epoch in the metadata image; -1 when the partition does not exist. */
  leaderEpoch(topic: string, partition: number): number;
  /** Creates the internal topic when it does not exist yet (FindCoordinator creates it, as Kafka does). */
  ensureTopic(topic: string, partitions: number): void;
  /** Called when leaderships or this node's fencing may have changed. Returns an unsubscribe. */
  onChange(cb: () => void): () => void;
}

export interface CoordinatorHost {
  readonly nodeId: number;
  /** Set on a cluster: which internal partitions this node serves. */
  readonly leadership?: CoordinatorLeadership;
  /** Advertised address answered by FindCoordinator. */
  readonly host: string;
  readonly port: number;
  readonly clock: Clock;
  readonly timers: Timers;
  /**
   * Broker config by Kafka key (offsets.topic.num.partitions, group.initial.rebalance.delay.ms,
   * group.min.session.timeout.ms, group.max.session.timeout.ms, offsets.retention.minutes,
   * group.consumer.heartbeat.interval.ms, group.consumer.session.timeout.ms, ...); undefined means
   * the coordinator uses Kafka's default.
   */
  config(key: string): string | undefined;
  /**
   * Opens (creating on first use, with cleanup.policy=compact and `partitions` partitions in the
   * metadata) one partition of an internal topic such as __consumer_offsets.
   */
  openInternalPartition(topic: string, partition: number, partitions: number): Promise<CoordinatorLog>;
  topicIdByName(name: string): string | undefined;
  topicNameById(id: string): string | undefined;
  partitionCount(topic: string): number | undefined;
  /** Every topic name (for KIP-848 regex subscriptions); without it regex subscriptions match nothing. */
  topicNames?(): string[];
  /**
   * Transactions (optional until the node provides them). A fresh producer id from the node's
   * persisted id blocks (InitProducerId).
   */
  allocateProducerId?(): Promise<number>;
  /**
   * Appends a COMMIT or ABORT end-transaction marker for (producerId, producerEpoch) to a data
   * partition led here, as the transaction coordinator (a control batch, origin 'coordinator';
   * `buildEndTxnMarkerBatch` in src/protocol/control-records.ts builds it). Resolves to a Kafka
   * error code (0 when the marker is durable, on the ISR of a replicated partition). On a cluster
   * a partition led by another node is sent WriteTxnMarkers to its leader, unless
   * `forward: false` (a WriteTxnMarkers being served here), which answers NOT_LEADER_OR_FOLLOWER.
   */
  writeTxnMarker?(topic: string, partition: number, marker: TxnMarker, opts?: { readonly forward?: boolean }): Promise<number>;
  /**
   * False when client writes to the partition are refused (a mirror topic that is not STOPPED,
   * KIP-1279): it is not added to a transaction and takes no transactional offset commit
   * (READ_ONLY_TOPIC). Without it every partition accepts them.
   */
  acceptsClientWrites?(topic: string, partition: number): boolean;
  /**
   * A GROUP config (KIP-848 dynamic group configs) of `groupId`: its override, else the default
   * (for the streams.* keys, the group.streams.* broker keys). Without it the coordinator reads the
   * broker keys.
   */
  groupConfig?(groupId: string, key: string): string | undefined;
  /**
   * Creates a topic as a CreateTopics request would (the streams group coordinator creates a
   * topology's repartition and changelog topics, KIP-1071). A replication factor of 0 or less
   * takes the broker default. Resolves to a Kafka error code (TOPIC_ALREADY_EXISTS when it does).
   */
  createStreamsTopic?(name: string, partitions: number, replicationFactor: number, configs: ReadonlyMap<string, string>): Promise<{ errorCode: number; errorMessage: string | null }>;
  /** Called after every metadata change (topics created, deleted, partitions added). Returns an unsubscribe. */
  onMetadataChange(cb: () => void): () => void;
}

