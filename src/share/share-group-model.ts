/**
 * The share group model (KIP-932) as the coordinator (./share-group-coordinator.ts) keeps it,
 * and the seams it is given: topic names and ids, its configs, the share-state initializer and
 * the durable store.
 */
import type { CoordinatorRecord } from '../coordinator/coordinator-batch.js';
import type { PersistedShareGroup } from '../coordinator/share-group-records.js';

export interface ShareTopics {
  topicId(name: string): string | undefined;
  topicName(id: string): string | undefined;
  partitionCount(name: string): number | undefined;
}

export interface ShareCoordinatorConfig {
  sessionTimeoutMs(groupId: string): number;
  heartbeatIntervalMs(groupId: string): number;
  /** group.share.max.size */
  readonly maxSize: number;
}

/** InitializeShareGroupState at the share coordinator (Kafka's Persister.initializeState). */
export interface ShareStateInitializer {
  /** Initializes the share-partitions at `stateEpoch`; resolves with those now initialized (never rejects). */
  initialize(groupId: string, stateEpoch: number, partitions: readonly { topicId: string; partition: number }[]): Promise<{ topicId: string; partition: number }[]>;
}

/** Where share groups are kept durably: the group coordinator's shard of the group id. */
export interface ShareGroupStore {
  /** The group as its records hold it; undefined when it has none. Rejects with NOT_COORDINATOR etc. */
  load(groupId: string): Promise<PersistedShareGroup | undefined>;
  /** Appends the records; resolves once they are committed. */
  write(groupId: string, records: CoordinatorRecord[]): Promise<void>;
  /** The leader epoch of the group's __consumer_offsets partition: a new one means the group may have changed elsewhere. */
  epoch(groupId: string): number;
}

export interface ShareMember {
  readonly memberId: string;
  memberEpoch: number;
  previousMemberEpoch: number;
  rackId: string | null;
  clientId: string;
  clientHost: string;
  subscribedTopicNames: string[];
  /** topic id → partitions */
  assignment: Map<string, number[]>;
  sentAssignment: string | null;
  timer: ReturnType<typeof setTimeout> | null;
}

export interface ShareGroup {
  readonly groupId: string;
  groupEpoch: number;
  assignmentEpoch: number;
  readonly members: Map<string, ShareMember>;
  /** The subscribed topics' partition counts (and initialized partitions) the assignment was computed for. */
  metadataKey: string;
  /** topic id → the partitions whose share-partition state is initialized. */
  readonly initialized: Map<string, Set<number>>;
}

export interface ShareHeartbeatRequest {
  readonly groupId: string;
  readonly memberId: string;
  readonly memberEpoch: number;
  readonly rackId: string | null;
  readonly subscribedTopicNames: readonly string[] | null;
  readonly clientId: string;
  readonly clientHost: string;
}

export interface ShareHeartbeatResult {
  errorCode: number;
  errorMessage: string | null;
  memberId: string | null;
  memberEpoch: number;
  heartbeatIntervalMs: number;
  assignment: { topicId: string; partitions: number[] }[] | null;
}
