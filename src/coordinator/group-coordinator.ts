import type { CoordinatorHost } from './coordinator-host.js';
import { CoordinatorRuntime } from './coordinator-runtime.js';
import { errorCodeOf } from '../protocol/kafka-error.js';
import { groupConfigFrom } from './group-config.js';
import type { GroupConfig } from './group-config.js';
import { GroupShard } from './group-shard.js';
import type { CommitRequest, DescribedGroup, FetchGroupResult, ListedGroup, TopicPartitionErrors } from './group-shard.js';
import type { JoinResult, SyncResult } from './classic-group.js';
import type { HeartbeatRequest, JoinRequest, LeaveMember, LeaveResult, SyncRequest } from './classic-ops.js';
import { ErrorCode } from '../protocol/generated/errors.js';
import type { ConsumerHeartbeatRequest, ConsumerHeartbeatResult, TopicView } from './consumer-ops.js';
import type { ConsumerGroupDescription } from './consumer-group.js';
import type { StreamsGroupDescription, StreamsHeartbeatRequest, StreamsHeartbeatResult } from './streams-group-ops.js';
import type { InternalTopicToCreate } from './streams-group-topology.js';
import { brokerDefaultNumber } from '../config/broker-config-defs.js';

export const CONSUMER_OFFSETS = '__consumer_offsets';

export interface GroupCoordinatorOptions {
  /** The runtime's cap on one append (RuntimeOptions.maxBatchBytes); the benchmark sets 1 for one fsync per write. */
  readonly maxBatchBytes?: number;
}

/**
 * The group coordinator: the API-level operations over the runtime's shards of
 * __consumer_offsets. Every group id maps to one shard (Kafka's partitionFor); operations that
 * cover many groups fan out per shard.
 */
export class GroupCoordinator {
  readonly runtime: CoordinatorRuntime<GroupShard>;

  private constructor(
    readonly host: CoordinatorHost,
    readonly cfg: GroupConfig,
    opts: GroupCoordinatorOptions,
  ) {
    const topics: TopicView = {
      topicId: (name) => host.topicIdByName(name),
      topicName: (id) => host.topicNameById(id),
      partitionCount: (name) => host.partitionCount(name),
      topicNames: () => host.topicNames?.() ?? [],
    };
    this.runtime = new CoordinatorRuntime<GroupShard>({
      host,
      topic: CONSUMER_OFFSETS,
      partitions: cfg.offsetsTopicPartitions,
      newShard: (ctx) => new GroupShard(ctx, cfg, topics, (groupId, key) => this.streamsConfig(groupId, key)),
      ...(opts.maxBatchBytes !== undefined ? { maxBatchBytes: opts.maxBatchBytes } : {}),
    });
  }

  /**
   * Starts the coordinator. Shards holding data are loaded now (so groups come back and offsets
   * expire after a restart); others load on first use.
   */
  static async start(host: CoordinatorHost, opts: GroupCoordinatorOptions = {}): Promise<GroupCoordinator> {
    const c = new GroupCoordinator(host, groupConfigFrom(host), opts);
    if (host.partitionCount(CONSUMER_OFFSETS) !== undefined) await c.runtime.loadAll();
    c.watchTopicDeletions();
    return c;
  }

  private unwatch: (() => void) | null = null;

  /** When topics disappear from the metadata, their committed offsets are deleted in every shard. */
  private watchTopicDeletions(): void {
    const names = this.host.topicNames;
    if (!names) return;
    let known = new Set(names.call(this.host));
    this.unwatch = this.host.onMetadataChange(() => {
      const now = new Set(names.call(this.host));
      const deleted = new Set([...known].filter((t) => !now.has(t)));
      known = now;
      if (deleted.size === 0) return;
      for (const p of this.runtime.loadedShards().keys()) {
        this.runtime.writeTo(p, (s) => s.offsetOps.deleteTopicOffsets(deleted)).catch(() => undefined);
      }
    });
  }

  close(): Promise<void> {
    this.unwatch?.();
    return this.runtime.close();
  }

  partitionFor(groupId: string): number {
    return this.runtime.partitionFor(groupId);
  }

  /** Warms the shard of a group (FindCoordinator), so the first JoinGroup does not wait on replay. */
  preload(groupId: string): void {
    this.runtime.load(this.partitionFor(groupId)).catch(() => undefined);
  }

  async join(req: JoinRequest): Promise<JoinResult> {
    return this.runtime.write(req.groupId, (s) => s.classicOps.join(req));
  }

  async sync(req: SyncRequest): Promise<SyncResult> {
    return this.runtime.write(req.groupId, (s) => s.classicOps.sync(req));
  }

  async heartbeat(req: HeartbeatRequest): Promise<number> {
    return this.runtime.write(req.groupId, (s) => s.classicOps.heartbeat(req));
  }

  async leave(groupId: string, members: readonly LeaveMember[]): Promise<LeaveResult> {
    return this.runtime.write(groupId, (s) => s.classicOps.leave(groupId, members));
  }

  /** A streams group config: the group's override, else the group.streams.* broker key. */
  private streamsConfig(groupId: string, key: string): number {
    const brokerKey = `group.${key}`;
    const raw = this.host.groupConfig?.(groupId, key) ?? this.host.config(brokerKey);
    const v = raw === undefined || raw.trim() === '' ? NaN : Number(raw);
    return Number.isFinite(v) ? v : brokerDefaultNumber(brokerKey);
  }

  private readonly creating = new Set<string>();

  /**
   * StreamsGroupHeartbeat. The internal topics the topology needs and that do not exist yet are
   * created after the write, as Kafka's coordinator does through its auto-topic-creation path;
   * the member hears MISSING_INTERNAL_TOPICS until they exist.
   */
  async streamsHeartbeat(req: StreamsHeartbeatRequest): Promise<StreamsHeartbeatResult> {
    const r = await this.runtime.write(req.groupId, (s) => s.streamsOps.heartbeat(req));
    if (r.toCreate.length > 0) this.createInternalTopics(r.toCreate);
    return r;
  }

  private createInternalTopics(topics: readonly InternalTopicToCreate[]): void {
    const create = this.host.createStreamsTopic;
    if (!create) return;
    for (const t of topics) {
      if (this.creating.has(t.name)) continue;
      this.creating.add(t.name);
      create
        .call(this.host, t.name, t.partitions, t.replicationFactor, t.configs)
        .catch(() => undefined)
        .finally(() => this.creating.delete(t.name));
    }
  }

  /** A streams group, or null when no streams group has the id. */
  async describeStreamsGroup(groupId: string): Promise<StreamsGroupDescription | null> {
    return this.runtime.read(groupId, (s) => s.streamsOps.describe(groupId));
  }

  async consumerHeartbeat(req: ConsumerHeartbeatRequest): Promise<ConsumerHeartbeatResult> {
    return this.runtime.write(req.groupId, (s) => s.consumerOps.heartbeat(req));
  }

  /**
   * A KIP-848 group, or null when the id is unknown or names a classic or streams group
   * (`isClassic`: the id is held by a group of another type).
   */
  async describeConsumerGroup(groupId: string): Promise<{ description: ConsumerGroupDescription | null; isClassic: boolean }> {
    return this.runtime.read(groupId, (s) => ({ description: s.consumerOps.describe(groupId), isClassic: s.classic.has(groupId) || s.streams.has(groupId) || s.share.has(groupId) }));
  }

  /**
   * The type of the group holding `groupId` in its __consumer_offsets shard (null: none). Group
   * ids are one namespace across types, as in Kafka's GroupMetadataManager; a share group counts
   * once its records are written.
   */
  async groupType(groupId: string): Promise<'classic' | 'consumer' | 'streams' | 'share' | null> {
    return this.runtime.read(groupId, (s) =>
      s.consumer.has(groupId) ? 'consumer' : s.streams.has(groupId) ? 'streams' : s.share.has(groupId) ? 'share' : s.classic.has(groupId) ? 'classic' : null,
    );
  }

  async commitOffsets(req: CommitRequest): Promise<TopicPartitionErrors[]> {
    return this.runtime.write(req.groupId, (s) => s.offsetOps.commitOffsets(req));
  }

  async fetchOffsets(
    groupId: string,
    topics: readonly { name: string; partitionIndexes: readonly number[] }[] | null,
    memberId: string | null = null,
    memberEpoch = -1,
    requireStable = false,
  ): Promise<FetchGroupResult> {
    return this.runtime.read(groupId, (s) => s.offsetOps.fetchOffsets(groupId, topics, memberId, memberEpoch, requireStable));
  }

  /** TxnOffsetCommit: offsets held until the producer's transaction ends. */
  async txnCommitOffsets(req: CommitRequest & { producerId: number; producerEpoch: number }): Promise<TopicPartitionErrors[]> {
    return this.runtime.write(req.groupId, (s) => s.offsetOps.txnCommitOffsets(req));
  }

  /** The end-transaction marker for `producerId` on __consumer_offsets partition `partition`. */
  async completeTransaction(partition: number, producerId: number, producerEpoch: number, commit: boolean): Promise<number> {
    return this.runtime.writeTo(partition, (s) => s.offsetOps.completeTransaction(producerId, producerEpoch, commit));
  }

  async deleteOffsets(groupId: string, topics: readonly { name: string; partitions: readonly number[] }[]): Promise<{ errorCode: number; topics: TopicPartitionErrors[] }> {
    return this.runtime.write(groupId, (s) => s.offsetOps.deleteOffsets(groupId, topics));
  }

  async listGroups(states: readonly string[] = [], types: readonly string[] = []): Promise<ListedGroup[]> {
    await this.loadKnownShards();
    const out = (await this.runtime.readAll((shard) => shard.listGroups(states, types))).flat();
    return out.sort((a, b) => (a.groupId < b.groupId ? -1 : a.groupId > b.groupId ? 1 : 0));
  }

  async describeGroup(groupId: string): Promise<DescribedGroup> {
    return this.runtime.read(groupId, (s) => s.describeClassic(groupId));
  }

  async deleteGroups(groupIds: readonly string[]): Promise<{ groupId: string; errorCode: number }[]> {
    const byShard = new Map<number, string[]>();
    for (const id of groupIds) {
      const p = this.partitionFor(id);
      byShard.set(p, [...(byShard.get(p) ?? []), id]);
    }
    const results = await Promise.all(
      [...byShard].map(([p, ids]) =>
        this.runtime.writeTo(p, (s) => s.offsetOps.deleteGroups(ids)).catch((e: unknown) => ids.map((groupId) => ({ groupId, errorCode: errorCodeOf(e) }))),
      ),
    );
    const found = new Map(results.flat().map((r) => [r.groupId, r] as const));
    return groupIds.map((id) => found.get(id) ?? { groupId: id, errorCode: ErrorCode.UNKNOWN_SERVER_ERROR });
  }

  /** Runs offset expiry on every loaded shard now (the periodic check does the same). */
  async expireOffsetsNow(): Promise<void> {
    await Promise.all([...this.runtime.loadedShards().keys()].map((p) => this.runtime.writeTo(p, (s) => s.offsetOps.expireOffsets())));
  }

  /** ListGroups must see groups of shards not touched since start: load the topic's shards when it exists. */
  private async loadKnownShards(): Promise<void> {
    if (this.host.partitionCount(CONSUMER_OFFSETS) !== undefined) await this.runtime.loadAll();
  }
}
