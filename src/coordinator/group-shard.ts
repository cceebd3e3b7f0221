import type { CoordinatorRecord, ReplayedBatch, ReplayedRecord } from './coordinator-batch.js';
import { ControlRecordType, parseControlRecordKey } from '../protocol/control-records.js';
import type { CoordinatorShard, ShardContext, WriteResult } from './coordinator-runtime.js';
import { ClassicGroup, ClassicState } from './classic-group.js';
import { ClassicOps } from './classic-ops.js';
import { ConsumerGroup } from './consumer-group.js';
import { ConsumerOps } from './consumer-ops.js';
import type { TopicView } from './consumer-ops.js';
import { groupEpochRecord, replayConsumerRecord, targetEpochRecord } from './consumer-records.js';
import type { GroupConfig } from './group-config.js';
import { GroupError } from './group-errors.js';
import {
  decodeGroupMetadataValue,
  decodeGroupRecordKey,
  decodeOffsetCommitValue,
  groupMetadataRecord,
  offsetCommitRecord,
  subscribedTopics,
} from './group-records.js';
import type { OffsetCommitValue } from './group-records.js';

/**
 * One __consumer_offsets partition's worth of groups: classic groups, KIP-848 consumer groups
 * and committed offsets. Offsets change only through replayed records (committed state); classic
 * group membership is in-memory and persisted as snapshots (see ClassicGroup).
 */

export interface CommitPartition {
  readonly partitionIndex: number;
  readonly committedOffset: number;
  readonly committedLeaderEpoch: number;
  readonly committedMetadata: string | null;
}

export interface CommitRequest {
  readonly groupId: string;
  /** Generation (classic) or member epoch (consumer); -1 for an admin / simple-consumer commit. */
  readonly generationIdOrMemberEpoch: number;
  readonly memberId: string;
  readonly groupInstanceId: string | null;
  readonly topics: readonly { name: string; partitions: readonly CommitPartition[] }[];
}

export interface TopicPartitionErrors {
  readonly name: string;
  readonly partitions: { partitionIndex: number; errorCode: number }[];
}

export interface FetchedOffset {
  readonly partitionIndex: number;
  readonly committedOffset: number;
  readonly committedLeaderEpoch: number;
  readonly metadata: string | null;
  readonly errorCode: number;
}

export interface FetchGroupResult {
  readonly errorCode: number;
  readonly topics: { name: string; partitions: FetchedOffset[] }[];
}

export interface ListedGroup {
  readonly groupId: string;
  readonly protocolType: string;
  readonly groupState: string;
  readonly groupType: 'classic' | 'consumer';
}

export interface DescribedMember {
  readonly memberId: string;
  readonly groupInstanceId: string | null;
  readonly clientId: string;
  readonly clientHost: string;
  readonly memberMetadata: Buffer;
  readonly memberAssignment: Buffer;
}

export interface DescribedGroup {
  readonly errorCode: number;
  readonly groupId: string;
  readonly groupState: string;
  readonly protocolType: string;
  readonly protocolData: string;
  readonly members: DescribedMember[];
}

const EMPTY = Buffer.alloc(0);

export class GroupShard implements CoordinatorShard {
  readonly classic = new Map<string, ClassicGroup>();
  readonly consumer = new Map<string, ConsumerGroup>();
  /** group → topic → partition → committed offset. */
  readonly offsets = new Map<string, Map<string, Map<number, OffsetCommitValue>>>();
  readonly initialDelayPending = new Set<string>();
  /**
   * TxnOffsetCommit offsets waiting for their transaction's end, by producer id, then group,
   * then "topic\0partition": the replay of the producer's transactional batches not yet
   * followed by its COMMIT or ABORT marker.
   */
  readonly pendingTxnOffsets = new Map<number, Map<string, Map<string, OffsetCommitValue>>>();
  readonly classicOps: ClassicOps;
  readonly consumerOps: ConsumerOps;
  private loaded = false;
  private pending: CoordinatorRecord[] = [];

  constructor(
    readonly ctx: ShardContext<GroupShard>,
    readonly cfg: GroupConfig,
    topics: TopicView,
  ) {
    this.classicOps = new ClassicOps(this);
    this.consumerOps = new ConsumerOps(this, topics);
  }

  /** Queues a record for the running write operation. */
  emit(record: CoordinatorRecord): void {
    this.pending.push(record);
  }

  /** Ends a write operation: the records it emitted plus its response. */
  result<T>(response: T): WriteResult<T> {
    const records = this.pending;
    this.pending = [];
    return { records, response };
  }

  replay(record: ReplayedRecord, batch: ReplayedBatch): void {
    if (batch.isControl) {
      const type = parseControlRecordKey(record.key).type;
      if (type === ControlRecordType.COMMIT || type === ControlRecordType.ABORT) this.endTransaction(batch.producerId, type === ControlRecordType.COMMIT);
      return;
    }
    const key = decodeGroupRecordKey(record.key);
    if (key.type === 'offset' && batch.isTransactional && record.value !== null) {
      const { group, topic, partition } = key.key;
      let byGroup = this.pendingTxnOffsets.get(batch.producerId);
      if (!byGroup) this.pendingTxnOffsets.set(batch.producerId, (byGroup = new Map()));
      let parts = byGroup.get(group);
      if (!parts) byGroup.set(group, (parts = new Map()));
      parts.set(`${topic}\0${partition}`, decodeOffsetCommitValue(record.value));
      return;
    }
    if (key.type === 'offset') {
      const { group, topic, partition } = key.key;
      if (record.value === null) {
        const byTopic = this.offsets.get(group)?.get(topic);
        byTopic?.delete(partition);
        if (byTopic?.size === 0) this.offsets.get(group)!.delete(topic);
        if (this.offsets.get(group)?.size === 0) this.offsets.delete(group);
        return;
      }
      this.applyOffset(group, topic, partition, decodeOffsetCommitValue(record.value));
      return;
    }
    // While live, the operation that wrote a group record already holds the group in memory.
    if (this.loaded) return;
    if (key.type === 'group') {
      if (record.value === null) this.classic.delete(key.group);
      else this.classic.set(key.group, ClassicGroup.fromRecord(key.group, decodeGroupMetadataValue(record.value), this.ctx.now()));
      return;
    }
    replayConsumerRecord(this.consumer, key.recordType, record.key, record.value);
  }

  private applyOffset(group: string, topic: string, partition: number, value: OffsetCommitValue): void {
    let byGroup = this.offsets.get(group);
    if (!byGroup) this.offsets.set(group, (byGroup = new Map()));
    let byTopic = byGroup.get(topic);
    if (!byTopic) byGroup.set(topic, (byTopic = new Map()));
    byTopic.set(partition, value);
    // Offsets committed without a group (admin, simple consumers) belong to an empty classic group.
    if (!this.classic.has(group) && !this.consumer.has(group)) {
      const g = new ClassicGroup(group, this.ctx.now());
      g.protocolType = '';
      this.classic.set(group, g);
    }
  }

  /** A COMMIT marker makes the producer's pending offsets committed offsets; ABORT drops them. */
  private endTransaction(producerId: number, commit: boolean): void {
    const byGroup = this.pendingTxnOffsets.get(producerId);
    this.pendingTxnOffsets.delete(producerId);
    if (!commit || !byGroup) return;
    for (const [group, parts] of byGroup) {
      for (const [tp, v] of parts) {
        const at = tp.lastIndexOf('\0');
        this.applyOffset(group, tp.slice(0, at), Number(tp.slice(at + 1)), v);
      }
    }
  }

  onLoaded(): void {
    this.loaded = true;
    this.classicOps.resumeTimers();
    this.consumerOps.restoreDerived();
    this.consumerOps.resumeTimers();
    for (const g of this.consumer.values()) {
      this.classic.delete(g.groupId);
      if (g.members.size === 0) g.emptySince = this.ctx.now();
    }
    this.scheduleExpiry();
  }

  onUnloaded(): void {
    for (const g of this.classic.values()) {
      for (const m of g.members.values()) {
        const j = m.awaitingJoin;
        const sy = m.awaitingSync;
        m.awaitingJoin = null;
        m.awaitingSync = null;
        j?.({ errorCode: GroupError.NOT_COORDINATOR, generationId: -1, protocolType: null, protocolName: null, leader: '', skipAssignment: false, memberId: m.memberId, members: [] });
        sy?.({ errorCode: GroupError.NOT_COORDINATOR, protocolType: null, protocolName: null, assignment: EMPTY });
      }
    }
  }

  private scheduleExpiry(): void {
    this.ctx.scheduleTimer('offset-expiry', this.cfg.offsetsRetentionCheckIntervalMs, () => {
      const r = this.expireOffsets();
      this.scheduleExpiry();
      return r;
    });
  }

  // ---- offsets ----

  /** Validates a commit's member fields against the group (Kafka's validateOffsetCommit). */
  private validateCommit(req: CommitRequest): number {
    const cg = this.consumer.get(req.groupId);
    if (cg) {
      if (req.generationIdOrMemberEpoch < 0 && req.memberId === '') return cg.members.size === 0 ? GroupError.NONE : GroupError.UNKNOWN_MEMBER_ID;
      const m = cg.members.get(req.memberId);
      if (!m) return GroupError.UNKNOWN_MEMBER_ID;
      return req.generationIdOrMemberEpoch === m.memberEpoch ? GroupError.NONE : GroupError.STALE_MEMBER_EPOCH;
    }
    const g = this.classic.get(req.groupId);
    if (!g) {
      if (req.generationIdOrMemberEpoch >= 0 || req.memberId !== '') return GroupError.ILLEGAL_GENERATION;
      const created = new ClassicGroup(req.groupId, this.ctx.now());
      created.protocolType = '';
      this.classic.set(req.groupId, created);
      return GroupError.NONE;
    }
    if (g.state === ClassicState.DEAD) return GroupError.COORDINATOR_NOT_AVAILABLE;
    if (req.generationIdOrMemberEpoch >= 0 || req.memberId !== '' || req.groupInstanceId !== null) {
      const v = this.classicOps.validateMember(g, req.memberId, req.groupInstanceId);
      if (v !== GroupError.NONE) return v;
      if (req.generationIdOrMemberEpoch !== g.generationId) return GroupError.ILLEGAL_GENERATION;
      if (g.state === ClassicState.COMPLETING_REBALANCE) return GroupError.REBALANCE_IN_PROGRESS;
      this.classicOps.touch(g, req.memberId);
      return GroupError.NONE;
    }
    return g.state === ClassicState.EMPTY ? GroupError.NONE : GroupError.UNKNOWN_MEMBER_ID;
  }

  commitOffsets(req: CommitRequest): WriteResult<TopicPartitionErrors[]> {
    const verdict = this.validateCommit(req);
    const now = this.ctx.now();
    const out: TopicPartitionErrors[] = [];
    for (const t of req.topics) {
      const parts: { partitionIndex: number; errorCode: number }[] = [];
      for (const p of t.partitions) {
        let errorCode: number = verdict;
        const metadata = p.committedMetadata ?? '';
        if (errorCode === GroupError.NONE && Buffer.byteLength(metadata) > this.cfg.offsetMetadataMaxBytes) errorCode = GroupError.OFFSET_METADATA_TOO_LARGE;
        if (errorCode === GroupError.NONE) {
          this.emit(
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
      ...this.result(out),
      onAppendFailed: (code) =>
        out.map((t) => ({ name: t.name, partitions: t.partitions.map((p) => ({ partitionIndex: p.partitionIndex, errorCode: p.errorCode === GroupError.NONE ? code : p.errorCode })) })),
    };
  }

  /** TxnOffsetCommit: validates like OffsetCommit and keeps the offsets pending until EndTxn. */
  txnCommitOffsets(req: CommitRequest & { producerId: number; producerEpoch: number }): WriteResult<TopicPartitionErrors[]> {
    const verdict = req.generationIdOrMemberEpoch < 0 && req.memberId === '' && req.groupInstanceId === null ? this.validateTxnGroup(req.groupId) : this.validateCommit(req);
    const now = this.ctx.now();
    const out = req.topics.map((t) => ({
      name: t.name,
      partitions: t.partitions.map((p) => {
        const metadata = p.committedMetadata ?? '';
        let errorCode: number = verdict;
        if (errorCode === GroupError.NONE && Buffer.byteLength(metadata) > this.cfg.offsetMetadataMaxBytes) errorCode = GroupError.OFFSET_METADATA_TOO_LARGE;
        if (errorCode === GroupError.NONE) {
          this.emit(
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
      ...this.result(out),
      transactional: { producerId: req.producerId, producerEpoch: req.producerEpoch },
      onAppendFailed: (code) => out.map((t) => ({ name: t.name, partitions: t.partitions.map((p) => ({ partitionIndex: p.partitionIndex, errorCode: p.errorCode === GroupError.NONE ? code : p.errorCode })) })),
    };
  }

  private validateTxnGroup(groupId: string): number {
    if (!this.classic.has(groupId) && !this.consumer.has(groupId)) {
      const created = new ClassicGroup(groupId, this.ctx.now());
      created.protocolType = '';
      this.classic.set(groupId, created);
    }
    return GroupError.NONE;
  }

  /** Writes the transaction's COMMIT or ABORT marker to this partition; its replay applies it. */
  completeTransaction(producerId: number, producerEpoch: number, commit: boolean): WriteResult<number> {
    return { ...this.result(GroupError.NONE), marker: { producerId, producerEpoch, commit, coordinatorEpoch: 0 }, onAppendFailed: (code) => code };
  }

  private hasPendingTxnOffset(groupId: string, topic: string, partition: number): boolean {
    for (const byGroup of this.pendingTxnOffsets.values()) if (byGroup.get(groupId)?.has(`${topic}\0${partition}`)) return true;
    return false;
  }

  /** Committed offsets; topics null = every topic with an offset. Unknown partitions get offset -1. */
  fetchOffsets(groupId: string, topics: readonly { name: string; partitionIndexes: readonly number[] }[] | null, memberId: string | null, memberEpoch: number, requireStable = false): FetchGroupResult {
    const cg = this.consumer.get(groupId);
    if (cg && memberId !== null && memberEpoch >= 0) {
      const m = cg.members.get(memberId);
      if (!m) return { errorCode: GroupError.UNKNOWN_MEMBER_ID, topics: [] };
      if (m.memberEpoch !== memberEpoch) return { errorCode: GroupError.STALE_MEMBER_EPOCH, topics: [] };
    }
    const byGroup = this.offsets.get(groupId);
    const entry = (topic: string, partition: number): FetchedOffset => {
      if (requireStable && this.hasPendingTxnOffset(groupId, topic, partition)) {
        return { partitionIndex: partition, committedOffset: -1, committedLeaderEpoch: -1, metadata: '', errorCode: GroupError.UNSTABLE_OFFSET_COMMIT };
      }
      const v = byGroup?.get(topic)?.get(partition);
      return v
        ? { partitionIndex: partition, committedOffset: v.offset, committedLeaderEpoch: v.leaderEpoch, metadata: v.metadata, errorCode: GroupError.NONE }
        : { partitionIndex: partition, committedOffset: -1, committedLeaderEpoch: -1, metadata: '', errorCode: GroupError.NONE };
    };
    if (topics === null) {
      const out: FetchGroupResult['topics'] = [];
      for (const [name, parts] of byGroup ?? []) out.push({ name, partitions: [...parts.keys()].sort((a, b) => a - b).map((p) => entry(name, p)) });
      return { errorCode: GroupError.NONE, topics: out };
    }
    return { errorCode: GroupError.NONE, topics: topics.map((t) => ({ name: t.name, partitions: t.partitionIndexes.map((p) => entry(t.name, p)) })) };
  }

  /** OffsetDelete: refused for topics an active consumer group still subscribes to. */
  deleteOffsets(groupId: string, topics: readonly { name: string; partitions: readonly number[] }[]): WriteResult<{ errorCode: number; topics: TopicPartitionErrors[] }> {
    const g = this.classic.get(groupId);
    const cg = this.consumer.get(groupId);
    if (!g && !cg) return this.result({ errorCode: GroupError.GROUP_ID_NOT_FOUND, topics: [] });
    const subscribed = new Set<string>();
    if (g && g.state !== ClassicState.EMPTY) {
      if (g.protocolType !== 'consumer') return this.result({ errorCode: GroupError.NON_EMPTY_GROUP, topics: [] });
      for (const m of g.members.values()) for (const t of subscribedTopics(g.metadataFor(m, g.protocolName))) subscribed.add(t);
    }
    if (cg) for (const m of cg.members.values()) for (const t of m.subscribedTopicNames) subscribed.add(t);
    const out: TopicPartitionErrors[] = [];
    for (const t of topics) {
      const parts = t.partitions.map((p) => {
        if (subscribed.has(t.name)) return { partitionIndex: p, errorCode: GroupError.GROUP_SUBSCRIBED_TO_TOPIC };
        if (this.offsets.get(groupId)?.get(t.name)?.has(p)) this.emit(offsetCommitRecord({ group: groupId, topic: t.name, partition: p }, null));
        return { partitionIndex: p, errorCode: GroupError.NONE };
      });
      out.push({ name: t.name, partitions: parts });
    }
    return { ...this.result({ errorCode: GroupError.NONE, topics: out }), onAppendFailed: (code) => ({ errorCode: code, topics: [] }) };
  }

  /** Tombstones every offset of a group, and the group itself (DeleteGroups, expiry). */
  private emitGroupDeletion(groupId: string): void {
    for (const [topic, parts] of this.offsets.get(groupId) ?? []) {
      for (const p of parts.keys()) this.emit(offsetCommitRecord({ group: groupId, topic, partition: p }, null));
    }
    if (this.consumer.has(groupId)) {
      this.emit(targetEpochRecord(groupId, null));
      this.emit(groupEpochRecord(groupId, null));
    } else this.emit(groupMetadataRecord(groupId, null));
  }

  deleteGroups(groupIds: readonly string[]): WriteResult<{ groupId: string; errorCode: number }[]> {
    const out: { groupId: string; errorCode: number }[] = [];
    const deleting: string[] = [];
    for (const id of groupIds) {
      const g = this.classic.get(id);
      const cg = this.consumer.get(id);
      let errorCode: number = GroupError.NONE;
      if (!g && !cg) errorCode = GroupError.GROUP_ID_NOT_FOUND;
      else if ((g && g.state !== ClassicState.EMPTY) || (cg && cg.members.size > 0)) errorCode = GroupError.NON_EMPTY_GROUP;
      else {
        this.emitGroupDeletion(id);
        deleting.push(id);
      }
      out.push({ groupId: id, errorCode });
    }
    return {
      ...this.result(out),
      onCommitted: () => {
        for (const id of deleting) {
          this.classic.delete(id);
          this.consumer.delete(id);
          this.offsets.delete(id);
        }
      },
      onAppendFailed: (code) => out.map((o) => ({ groupId: o.groupId, errorCode: o.errorCode === GroupError.NONE ? code : o.errorCode })),
    };
  }

  /**
   * offsets.retention.minutes: offsets of a group without members expire once the retention has
   * passed since the later of their commit and the moment the group became empty; an empty group
   * left without offsets is deleted (Kafka's cleanupGroupMetadata).
   */
  expireOffsets(): WriteResult<void> {
    const now = this.ctx.now();
    const emptyGroups: string[] = [];
    for (const [groupId, byTopic] of this.offsets) {
      const g = this.classic.get(groupId);
      const cg = this.consumer.get(groupId);
      if ((g && g.state !== ClassicState.EMPTY) || (cg && cg.members.size > 0)) continue;
      const emptySince = g ? g.currentStateTimestamp : (cg?.emptySince ?? 0);
      let remaining = 0;
      for (const [topic, parts] of byTopic) {
        for (const [p, v] of parts) {
          const base = v.expireTimestamp >= 0 ? v.expireTimestamp - this.cfg.offsetsRetentionMs : Math.max(v.commitTimestamp, emptySince);
          if (now - base >= this.cfg.offsetsRetentionMs) this.emit(offsetCommitRecord({ group: groupId, topic, partition: p }, null));
          else remaining++;
        }
      }
      if (remaining === 0) emptyGroups.push(groupId);
    }
    for (const [groupId, g] of this.classic) {
      if (g.state === ClassicState.EMPTY && !this.offsets.has(groupId) && now - g.currentStateTimestamp >= this.cfg.offsetsRetentionMs) emptyGroups.push(groupId);
    }
    for (const [groupId, cg] of this.consumer) {
      if (cg.members.size === 0 && !this.offsets.has(groupId) && now - cg.emptySince >= this.cfg.offsetsRetentionMs) emptyGroups.push(groupId);
    }
    for (const id of emptyGroups) {
      if (this.classic.has(id)) this.emit(groupMetadataRecord(id, null));
      if (this.consumer.has(id)) {
        this.emit(targetEpochRecord(id, null));
        this.emit(groupEpochRecord(id, null));
      }
    }
    return {
      ...this.result(undefined),
      onCommitted: () => {
        for (const id of emptyGroups) {
          const g = this.classic.get(id);
          if (g && g.state === ClassicState.EMPTY && !this.offsets.has(id)) this.classic.delete(id);
          const cg = this.consumer.get(id);
          if (cg && cg.members.size === 0 && !this.offsets.has(id)) this.consumer.delete(id);
        }
      },
      onAppendFailed: () => undefined,
    };
  }

  // ---- listing ----

  listGroups(states: readonly string[], types: readonly string[]): ListedGroup[] {
    const wantState = new Set(states.map((s) => s.toLowerCase()));
    const wantType = new Set(types.map((s) => s.toLowerCase()));
    const out: ListedGroup[] = [];
    const push = (l: ListedGroup): void => {
      if (wantState.size > 0 && !wantState.has(l.groupState.toLowerCase())) return;
      if (wantType.size > 0 && !wantType.has(l.groupType)) return;
      out.push(l);
    };
    for (const g of this.classic.values()) push({ groupId: g.groupId, protocolType: g.protocolType ?? '', groupState: g.state, groupType: 'classic' });
    for (const g of this.consumer.values()) push({ groupId: g.groupId, protocolType: 'consumer', groupState: g.state, groupType: 'consumer' });
    return out;
  }

  describeClassic(groupId: string): DescribedGroup {
    const cg = this.consumer.get(groupId);
    if (cg) {
      return {
        errorCode: GroupError.NONE,
        groupId,
        groupState: cg.state,
        protocolType: 'consumer',
        protocolData: cg.assignorName,
        members: [...cg.members.values()].map((m) => ({ memberId: m.memberId, groupInstanceId: m.instanceId, clientId: m.clientId, clientHost: m.clientHost, memberMetadata: EMPTY, memberAssignment: EMPTY })),
      };
    }
    const g = this.classic.get(groupId);
    if (!g) return { errorCode: GroupError.GROUP_ID_NOT_FOUND, groupId, groupState: ClassicState.DEAD, protocolType: '', protocolData: '', members: [] };
    const stable = g.state === ClassicState.STABLE;
    return {
      errorCode: GroupError.NONE,
      groupId,
      groupState: g.state,
      protocolType: g.protocolType ?? '',
      protocolData: stable ? (g.protocolName ?? '') : '',
      members: [...g.members.values()].map((m) => ({
        memberId: m.memberId,
        groupInstanceId: m.groupInstanceId,
        clientId: m.clientId,
        clientHost: m.clientHost,
        memberMetadata: stable ? g.metadataFor(m, g.protocolName) : EMPTY,
        memberAssignment: stable ? m.assignment : EMPTY,
      })),
    };
  }
}
