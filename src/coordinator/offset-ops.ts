import type { WriteResult } from './coordinator-runtime.js';
import { ClassicState } from './classic-group.js';
import { groupEpochRecord, targetEpochRecord } from './consumer-records.js';
import { ErrorCode } from '../protocol/generated/errors.js';
import { groupMetadataRecord, offsetCommitRecord, subscribedTopics } from './group-records.js';
import type { ClassicOps } from './classic-ops.js';
import type { GroupWriteContext } from './group-context.js';
import type { CommitRequest, FetchedOffset, FetchGroupResult, TopicPartitionErrors } from './group-shard.js';
import { streamsGroupDeletion } from './streams-group-records.js';

/**
 * Offsets of a group shard (OffsetCommit, TxnOffsetCommit, OffsetFetch, OffsetDelete), group
 * deletion and offset expiry. Offsets change only through replayed records, so every method
 * here either reads committed state or emits records.
 */
export class OffsetOps {
  constructor(
    private readonly s: GroupWriteContext,
    private readonly classicOps: ClassicOps,
  ) {}

  /** Validates a commit's member fields against the group (Kafka's validateOffsetCommit). */
  private validateCommit(req: CommitRequest): number {
    // A streams group validates as a consumer group does (Kafka's StreamsGroup.validateOffsetCommit).
    const cg = this.s.consumer.get(req.groupId) ?? this.s.streams.get(req.groupId);
    if (cg) {
      // A negative epoch commits to an empty group whatever member id it names (Kafka's
      // ConsumerGroup.validateOffsetCommit); otherwise the member must be the group's.
      if (req.generationIdOrMemberEpoch < 0 && cg.members.size === 0) return ErrorCode.NONE;
      const m = cg.members.get(req.memberId);
      if (!m) return ErrorCode.UNKNOWN_MEMBER_ID;
      return req.generationIdOrMemberEpoch === m.memberEpoch ? ErrorCode.NONE : ErrorCode.STALE_MEMBER_EPOCH;
    }
    const g = this.s.classic.get(req.groupId);
    // A commit with a negative generation to a group that does not exist yet is an admin or
    // simple-consumer commit, whatever member id it names (Kafka creates the group, empty, and
    // ClassicGroup.validateOffsetCommit accepts a negative generation on an empty group); the
    // replay of its first offset record creates the empty group (GroupShard.applyOffset).
    if (!g) {
      if (req.generationIdOrMemberEpoch < 0) return ErrorCode.NONE;
      return (req.apiVersion ?? 0) >= 9 ? ErrorCode.GROUP_ID_NOT_FOUND : ErrorCode.ILLEGAL_GENERATION;
    }
    if (g.state === ClassicState.DEAD) return ErrorCode.COORDINATOR_NOT_AVAILABLE;
    if (req.generationIdOrMemberEpoch < 0 && g.state === ClassicState.EMPTY) return ErrorCode.NONE;
    if (req.generationIdOrMemberEpoch >= 0 || req.memberId !== '' || req.groupInstanceId !== null) {
      const v = this.classicOps.validateMember(g, req.memberId, req.groupInstanceId);
      if (v !== ErrorCode.NONE) return v;
      if (req.generationIdOrMemberEpoch !== g.generationId) return ErrorCode.ILLEGAL_GENERATION;
      if (g.state === ClassicState.COMPLETING_REBALANCE) return ErrorCode.REBALANCE_IN_PROGRESS;
      this.classicOps.touch(g, req.memberId);
      return ErrorCode.NONE;
    }
    return g.state === ClassicState.EMPTY ? ErrorCode.NONE : ErrorCode.UNKNOWN_MEMBER_ID;
  }

  commitOffsets(req: CommitRequest): WriteResult<TopicPartitionErrors[]> {
    const verdict = this.validateCommit(req);
    const now = this.s.timers.now();
    const out: TopicPartitionErrors[] = [];
    for (const t of req.topics) {
      const parts: { partitionIndex: number; errorCode: number }[] = [];
      for (const p of t.partitions) {
        let errorCode: number = verdict;
        const metadata = p.committedMetadata ?? '';
        if (errorCode === ErrorCode.NONE && Buffer.byteLength(metadata) > this.s.cfg.offsetMetadataMaxBytes) errorCode = ErrorCode.OFFSET_METADATA_TOO_LARGE;
        if (errorCode === ErrorCode.NONE) {
          this.s.emit(
            offsetCommitRecord(
              { group: req.groupId, topic: t.name, partition: p.partitionIndex },
              { offset: p.committedOffset, leaderEpoch: p.committedLeaderEpoch, metadata, commitTimestamp: now, expireTimestamp: -1 },
            ),
          );
        }
        parts.push({ partitionIndex: p.partitionIndex, errorCode });
      }
      out.push({ name: t.name, partitions: parts });
    }
    return {
      ...this.s.result(out),
      onAppendFailed: (code) =>
        out.map((t) => ({ name: t.name, partitions: t.partitions.map((p) => ({ partitionIndex: p.partitionIndex, errorCode: p.errorCode === ErrorCode.NONE ? code : p.errorCode })) })),
    };
  }

  /** TxnOffsetCommit: validates like OffsetCommit and keeps the offsets pending until EndTxn. */
  txnCommitOffsets(req: CommitRequest & { producerId: number; producerEpoch: number }): WriteResult<TopicPartitionErrors[]> {
    // Without member fields any group is accepted, as Kafka's validateTransactionalOffsetCommit;
    // the group itself comes from the replay of the offset records.
    const verdict = req.generationIdOrMemberEpoch < 0 && req.memberId === '' && req.groupInstanceId === null ? ErrorCode.NONE : this.validateCommit(req);
    const now = this.s.timers.now();
    const out = req.topics.map((t) => ({
      name: t.name,
      partitions: t.partitions.map((p) => {
        const metadata = p.committedMetadata ?? '';
        let errorCode: number = verdict;
        if (errorCode === ErrorCode.NONE && Buffer.byteLength(metadata) > this.s.cfg.offsetMetadataMaxBytes) errorCode = ErrorCode.OFFSET_METADATA_TOO_LARGE;
        if (errorCode === ErrorCode.NONE) {
          this.s.emit(
            offsetCommitRecord(
              { group: req.groupId, topic: t.name, partition: p.partitionIndex },
              { offset: p.committedOffset, leaderEpoch: p.committedLeaderEpoch, metadata, commitTimestamp: now, expireTimestamp: -1 },
            ),
          );
        }
        return { partitionIndex: p.partitionIndex, errorCode };
      }),
    }));
    return {
      ...this.s.result(out),
      transactional: { producerId: req.producerId, producerEpoch: req.producerEpoch },
      onAppendFailed: (code) => out.map((t) => ({ name: t.name, partitions: t.partitions.map((p) => ({ partitionIndex: p.partitionIndex, errorCode: p.errorCode === ErrorCode.NONE ? code : p.errorCode })) })),
    };
  }

  /** Writes the transaction's COMMIT or ABORT marker to this partition; its replay applies it. */
  completeTransaction(producerId: number, producerEpoch: number, commit: boolean): WriteResult<number> {
    return { ...this.s.result(ErrorCode.NONE), marker: { producerId, producerEpoch, commit, coordinatorEpoch: 0 }, onAppendFailed: (code) => code };
  }

  private hasPendingTxnOffset(groupId: string, topic: string, partition: number): boolean {
    for (const byGroup of this.s.pendingTxnOffsets.values()) if (byGroup.get(groupId)?.has(`${topic}\0${partition}`)) return true;
    return false;
  }

  /** Committed offsets; topics null = every topic with an offset. Unknown partitions get offset -1. */
  fetchOffsets(groupId: string, topics: readonly { name: string; partitionIndexes: readonly number[] }[] | null, memberId: string | null, memberEpoch: number, requireStable = false): FetchGroupResult {
    const cg = this.s.consumer.get(groupId) ?? this.s.streams.get(groupId);
    if (cg && memberId !== null && memberEpoch >= 0) {
      const m = cg.members.get(memberId);
      if (!m) return { errorCode: ErrorCode.UNKNOWN_MEMBER_ID, topics: [] };
      if (m.memberEpoch !== memberEpoch) return { errorCode: ErrorCode.STALE_MEMBER_EPOCH, topics: [] };
    }
    const byGroup = this.s.offsets.get(groupId);
    const entry = (topic: string, partition: number): FetchedOffset => {
      if (requireStable && this.hasPendingTxnOffset(groupId, topic, partition)) {
        return { partitionIndex: partition, committedOffset: -1n, committedLeaderEpoch: -1, metadata: '', errorCode: ErrorCode.UNSTABLE_OFFSET_COMMIT };
      }
      const v = byGroup?.get(topic)?.get(partition);
      return v
        ? { partitionIndex: partition, committedOffset: v.offset, committedLeaderEpoch: v.leaderEpoch, metadata: v.metadata, errorCode: ErrorCode.NONE }
        : { partitionIndex: partition, committedOffset: -1n, committedLeaderEpoch: -1, metadata: '', errorCode: ErrorCode.NONE };
    };
    if (topics === null) {
      const out: FetchGroupResult['topics'] = [];
      for (const [name, parts] of byGroup ?? []) out.push({ name, partitions: [...parts.keys()].sort((a, b) => a - b).map((p) => entry(name, p)) });
      return { errorCode: ErrorCode.NONE, topics: out };
    }
    return { errorCode: ErrorCode.NONE, topics: topics.map((t) => ({ name: t.name, partitions: t.partitionIndexes.map((p) => entry(t.name, p)) })) };
  }

  /** OffsetDelete: refused for topics an active consumer group still subscribes to. */
  deleteOffsets(groupId: string, topics: readonly { name: string; partitions: readonly number[] }[]): WriteResult<{ errorCode: number; topics: TopicPartitionErrors[] }> {
    const g = this.s.classic.get(groupId);
    const cg = this.s.consumer.get(groupId);
    if (!g && !cg) return this.s.result({ errorCode: ErrorCode.GROUP_ID_NOT_FOUND, topics: [] });
    const subscribed = new Set<string>();
    if (g && g.state !== ClassicState.EMPTY) {
      if (g.protocolType !== 'consumer') return this.s.result({ errorCode: ErrorCode.NON_EMPTY_GROUP, topics: [] });
      for (const m of g.members.values()) for (const t of subscribedTopics(g.metadataFor(m, g.protocolName))) subscribed.add(t);
    }
    if (cg) for (const m of cg.members.values()) for (const t of m.subscribedTopicNames) subscribed.add(t);
    const out: TopicPartitionErrors[] = [];
    for (const t of topics) {
      const parts = t.partitions.map((p) => {
        if (subscribed.has(t.name)) return { partitionIndex: p, errorCode: ErrorCode.GROUP_SUBSCRIBED_TO_TOPIC };
        if (this.s.offsets.get(groupId)?.get(t.name)?.has(p)) this.s.emit(offsetCommitRecord({ group: groupId, topic: t.name, partition: p }, null));
        return { partitionIndex: p, errorCode: ErrorCode.NONE };
      });
      out.push({ name: t.name, partitions: parts });
    }
    return { ...this.s.result({ errorCode: ErrorCode.NONE, topics: out }), onAppendFailed: (code) => ({ errorCode: code, topics: [] }) };
  }

  /** Tombstones every offset of a group, and the group itself (DeleteGroups, expiry). */
  private emitGroupDeletion(groupId: string): void {
    for (const [topic, parts] of this.s.offsets.get(groupId) ?? []) {
      for (const p of parts.keys()) this.s.emit(offsetCommitRecord({ group: groupId, topic, partition: p }, null));
    }
    const sg = this.s.streams.get(groupId);
    if (sg) for (const r of streamsGroupDeletion(sg)) this.s.emit(r);
    else if (this.s.consumer.has(groupId)) {
      this.s.emit(targetEpochRecord(groupId, null));
      this.s.emit(groupEpochRecord(groupId, null));
    } else this.s.emit(groupMetadataRecord(groupId, null));
  }

  deleteGroups(groupIds: readonly string[]): WriteResult<{ groupId: string; errorCode: number }[]> {
    const out: { groupId: string; errorCode: number }[] = [];
    for (const id of groupIds) {
      const g = this.s.classic.get(id);
      const cg = this.s.consumer.get(id) ?? this.s.streams.get(id);
      let errorCode: number = ErrorCode.NONE;
      if (!g && !cg) errorCode = ErrorCode.GROUP_ID_NOT_FOUND;
      else if ((g && g.state !== ClassicState.EMPTY) || (cg && cg.members.size > 0)) errorCode = ErrorCode.NON_EMPTY_GROUP;
      else {
        this.emitGroupDeletion(id);
      }
      out.push({ groupId: id, errorCode });
    }
    // The replay of the tombstones removes the groups and their offsets.
    return {
      ...this.s.result(out),
      onAppendFailed: (code) => out.map((o) => ({ groupId: o.groupId, errorCode: o.errorCode === ErrorCode.NONE ? code : o.errorCode })),
    };
  }

  /**
   * A group with members keeps the offsets of the topics it subscribes to; offsets of other
   * topics expire by their commit time (KIP-211). Only consumer-protocol groups are understood
   * (a regex subscription keeps everything).
   */
  private expireUnsubscribed(groupId: string, byTopic: ReadonlyMap<string, ReadonlyMap<number, { commitTimestamp: number }>>, now: number): void {
    const g = this.s.classic.get(groupId);
    const cg = this.s.consumer.get(groupId);
    const subscribed = new Set<string>();
    if (g) {
      if (g.protocolType !== 'consumer') return;
      for (const m of g.members.values()) for (const t of subscribedTopics(g.metadataFor(m, g.protocolName))) subscribed.add(t);
    }
    if (cg) {
      for (const m of cg.members.values()) {
        if (m.subscribedTopicRegex !== null) return;
        for (const t of m.subscribedTopicNames) subscribed.add(t);
      }
    }
    if (subscribed.size === 0) return;
    for (const [topic, parts] of byTopic) {
      if (subscribed.has(topic)) continue;
      for (const [p, v] of parts) {
        if (now - v.commitTimestamp >= this.s.cfg.offsetsRetentionMs) this.s.emit(offsetCommitRecord({ group: groupId, topic, partition: p }, null));
      }
    }
  }

  /**
   * offsets.retention.minutes: offsets of a group without members expire once the retention has
   * passed since the later of their commit and the moment the group became empty; an empty group
   * left without offsets is deleted (Kafka's cleanupGroupMetadata).
   */
  expireOffsets(): WriteResult<void> {
    const now = this.s.timers.now();
    const emptyGroups: string[] = [];
    for (const [groupId, byTopic] of this.s.offsets) {
      const g = this.s.classic.get(groupId);
      const cg = this.s.consumer.get(groupId);
      const sg = this.s.streams.get(groupId);
      // A streams group with members keeps its offsets (its topology's topics are all in use).
      if (sg && sg.members.size > 0) continue;
      if ((g && g.state !== ClassicState.EMPTY) || (cg && cg.members.size > 0)) {
        this.expireUnsubscribed(groupId, byTopic, now);
        continue;
      }
      const emptySince = g ? g.currentStateTimestamp : (cg?.emptySince ?? sg?.emptySince ?? 0);
      let remaining = 0;
      for (const [topic, parts] of byTopic) {
        for (const [p, v] of parts) {
          const base = v.expireTimestamp >= 0 ? v.expireTimestamp - this.s.cfg.offsetsRetentionMs : Math.max(v.commitTimestamp, emptySince);
          if (now - base >= this.s.cfg.offsetsRetentionMs) this.s.emit(offsetCommitRecord({ group: groupId, topic, partition: p }, null));
          else remaining++;
        }
      }
      if (remaining === 0) emptyGroups.push(groupId);
    }
    for (const [groupId, g] of this.s.classic) {
      if (g.state === ClassicState.EMPTY && !this.s.offsets.has(groupId) && now - g.currentStateTimestamp >= this.s.cfg.offsetsRetentionMs) emptyGroups.push(groupId);
    }
    for (const [groupId, cg] of this.s.consumer) {
      if (cg.members.size === 0 && !this.s.offsets.has(groupId) && now - cg.emptySince >= this.s.cfg.offsetsRetentionMs) emptyGroups.push(groupId);
    }
    for (const [groupId, sg] of this.s.streams) {
      if (sg.members.size === 0 && !this.s.offsets.has(groupId) && now - sg.emptySince >= this.s.cfg.offsetsRetentionMs) emptyGroups.push(groupId);
    }
    for (const id of emptyGroups) {
      const sg = this.s.streams.get(id);
      if (sg) for (const r of streamsGroupDeletion(sg)) this.s.emit(r);
      if (this.s.classic.has(id)) this.s.emit(groupMetadataRecord(id, null));
      if (this.s.consumer.has(id)) {
        this.s.emit(targetEpochRecord(id, null));
        this.s.emit(groupEpochRecord(id, null));
      }
    }
    return { ...this.s.result(undefined), onAppendFailed: () => undefined };
  }

  /** Offsets of deleted topics go with them (Kafka's onPartitionsDeleted). */
  deleteTopicOffsets(topics: ReadonlySet<string>): WriteResult<void> {
    for (const [group, byTopic] of this.s.offsets) {
      for (const [topic, parts] of byTopic) {
        if (!topics.has(topic)) continue;
        for (const p of parts.keys()) this.s.emit(offsetCommitRecord({ group, topic, partition: p }, null));
      }
    }
    return { ...this.s.result(undefined), onAppendFailed: () => undefined };
  }
}
