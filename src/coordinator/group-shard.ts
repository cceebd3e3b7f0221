import type { CoordinatorRecord, ReplayedBatch, ReplayedRecord } from './coordinator-batch.js';
import { ControlRecordType, parseControlRecordKey } from '../protocol/control-records.js';
import type { CoordinatorShard, ShardContext } from './coordinator-runtime.js';
import { ClassicGroup, ClassicState } from './classic-group.js';
import { ClassicOps } from './classic-ops.js';
import { ConsumerGroup } from './consumer-group.js';
import { ConsumerOps } from './consumer-ops.js';
import { OffsetOps } from './offset-ops.js';
import type { TopicView } from './consumer-ops.js';
import { replayConsumerRecord } from './consumer-records.js';
import { clonePersistedShareGroup, replayShareGroupRecord, type PersistedShareGroup } from './share-group-records.js';
import { StreamsGroup } from './streams-group.js';
import { StreamsOps } from './streams-group-ops.js';
import type { StreamsGroupConfig } from './streams-group-ops.js';
import { isStreamsRecordType, replayStreamsRecord } from './streams-group-records.js';
import type { GroupConfig } from './group-config.js';
import type { GroupWriteContext } from './group-context.js';
import { SnapshotMap, SnapshotRegistry } from './snapshot-registry.js';
import { ErrorCode } from '../protocol/generated/errors.js';
import { decodeGroupMetadataValue, decodeGroupRecordKey, decodeOffsetCommitValue } from './group-records.js';
import type { OffsetCommitValue } from './group-records.js';

/**
 * One __consumer_offsets partition's worth of groups: classic groups, KIP-848 consumer groups
 * and committed offsets. Every record a write emits is replayed here exactly as at load, and
 * `replay` is the only writer of committed and pending offsets, of the empty groups offsets
 * create, and of KIP-848 groups (OffsetOps and ConsumerOps only read and emit). A classic
 * group's rebalance protocol (its phase, waiting joins and syncs, pending members, each member's
 * full protocol list) is in-memory only, as in Kafka's ClassicGroup, and so are the members and
 * generation a join in progress changes before its GroupMetadata snapshot is written; replaying
 * that snapshot sets what the record holds (see ClassicGroup.applyRecord).
 */

interface CommitPartition {
  readonly partitionIndex: number;
  readonly committedOffset: bigint;
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
  /**
   * The OffsetCommit version: from v9 a commit with a generation of 0 or more to a group that does
   * not exist is GROUP_ID_NOT_FOUND, before it ILLEGAL_GENERATION (Kafka's OffsetMetadataManager).
   */
  readonly apiVersion?: number;
}

export interface TopicPartitionErrors {
  readonly name: string;
  readonly partitions: { partitionIndex: number; errorCode: number }[];
}

export interface FetchedOffset {
  readonly partitionIndex: number;
  readonly committedOffset: bigint;
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
  readonly groupType: 'classic' | 'consumer' | 'streams' | 'share';
}

interface DescribedMember {
  readonly memberId: string;
  readonly groupInstanceId: string | null;
  readonly clientId: string;
  readonly clientHost: string;
  readonly memberMetadata: Buffer;
  readonly memberAssignment: Buffer;
}

export interface DescribedGroup {
  readonly errorCode: number;
  /** Why the group is not described, when it exists but is not classic-compatible. */
  readonly errorMessage?: string;
  readonly groupId: string;
  readonly groupState: string;
  readonly protocolType: string;
  readonly protocolData: string;
  readonly members: DescribedMember[];
}

const EMPTY = Buffer.alloc(0);

/** A copy of topic → partition → value maps (the values themselves are never changed in place). */
function cloneNested<A, B, V>(outer: Map<A, Map<B, V>>): Map<A, Map<B, V>> {
  return new Map([...outer].map(([k, inner]) => [k, new Map(inner)]));
}

export class GroupShard implements CoordinatorShard {
  readonly snapshots = new SnapshotRegistry();
  /** A group put back by a revert gets its members' timers again (the failed write may have cancelled them). */
  readonly classic = new SnapshotMap<string, ClassicGroup>(this.snapshots, (g) => g.clone(), (_, g) => {
    if (g) this.classicOps.resumeGroupTimers(g);
  });
  readonly consumer = new SnapshotMap<string, ConsumerGroup>(this.snapshots, (g) => g.clone(), (_, g) => {
    if (g) this.consumerOps.resumeGroupTimers(g);
  });
  /** KIP-932 share groups as their records hold them (share-group-records.ts); served by src/share. */
  readonly share = new SnapshotMap<string, PersistedShareGroup>(this.snapshots, clonePersistedShareGroup);
  readonly streams = new SnapshotMap<string, StreamsGroup>(this.snapshots, (g) => g.clone(), (_, g) => {
    if (g) this.streamsOps.resumeGroupTimers(g);
  });
  /** group → topic → partition → committed offset. */
  readonly offsets = new SnapshotMap<string, Map<string, Map<number, OffsetCommitValue>>>(this.snapshots, cloneNested);
  /**
   * TxnOffsetCommit offsets waiting for their transaction's end, by producer id, then group,
   * then "topic\0partition": the replay of the producer's transactional batches not yet
   * followed by its COMMIT or ABORT marker.
   */
  readonly pendingTxnOffsets = new SnapshotMap<number, Map<string, Map<string, OffsetCommitValue>>>(this.snapshots, cloneNested);
  readonly classicOps: ClassicOps;
  readonly consumerOps: ConsumerOps;
  readonly streamsOps: StreamsOps;
  readonly offsetOps: OffsetOps;
  private pending: CoordinatorRecord[] = [];

  constructor(
    readonly ctx: ShardContext<GroupShard>,
    readonly cfg: GroupConfig,
    topics: TopicView,
    streamsConfig: StreamsGroupConfig,
  ) {
    const write: GroupWriteContext = {
      classic: this.classic,
      consumer: this.consumer,
      streams: this.streams,
      share: this.share,
      offsets: this.offsets,
      pendingTxnOffsets: this.pendingTxnOffsets,
      cfg,
      timers: {
        now: () => ctx.now(),
        schedule: (key, delayMs, op) => ctx.scheduleTimer(key, delayMs, op),
        cancel: (key) => ctx.cancelTimer(key),
      },
      emit: (record) => {
        this.pending.push(record);
      },
      result: (response) => {
        const records = this.pending;
        this.pending = [];
        return { records, response };
      },
    };
    this.classicOps = new ClassicOps(write);
    this.consumerOps = new ConsumerOps(write, topics);
    this.streamsOps = new StreamsOps(write, topics, streamsConfig);
    this.offsetOps = new OffsetOps(write, this.classicOps);
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
      this.ensureOffsetGroup(group);
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
    if (key.type === 'group') {
      if (record.value === null) {
        this.classic.delete(key.group);
        return;
      }
      const value = decodeGroupMetadataValue(record.value);
      const live = this.classic.get(key.group);
      if (live) live.applyRecord(value);
      else this.classic.set(key.group, ClassicGroup.fromRecord(key.group, value, this.ctx.now()));
      return;
    }
    if (replayShareGroupRecord(this.share, key.recordType, record.key, record.value)) return;
    if (isStreamsRecordType(key.recordType)) replayStreamsRecord(this.streams, key.recordType, record.key, record.value);
    else replayConsumerRecord(this.consumer, key.recordType, record.key, record.value);
  }

  private applyOffset(group: string, topic: string, partition: number, value: OffsetCommitValue): void {
    let byGroup = this.offsets.get(group);
    if (!byGroup) this.offsets.set(group, (byGroup = new Map()));
    let byTopic = byGroup.get(topic);
    if (!byTopic) byGroup.set(topic, (byTopic = new Map()));
    byTopic.set(partition, value);
    this.ensureOffsetGroup(group);
  }

  /**
   * Offsets committed without a group (admin, simple consumers, a transactional producer) belong
   * to an empty classic group, created here by replay as Kafka's OffsetMetadataManager.replay
   * does (getOrMaybeCreateClassicGroup); the operations never create it themselves.
   */
  private ensureOffsetGroup(group: string): void {
    if (!this.classic.has(group) && !this.consumer.has(group) && !this.streams.has(group)) {
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
    this.classicOps.resumeTimers();
    this.consumerOps.resumeTimers();
    this.streamsOps.resumeTimers();
    for (const g of this.streams.values()) {
      this.classic.delete(g.groupId);
      if (g.members.size === 0) g.emptySince = this.ctx.now();
    }
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
        j?.({ errorCode: ErrorCode.NOT_COORDINATOR, generationId: -1, protocolType: null, protocolName: null, leader: '', skipAssignment: false, memberId: m.memberId, members: [] });
        sy?.({ errorCode: ErrorCode.NOT_COORDINATOR, protocolType: null, protocolName: null, assignment: EMPTY });
      }
    }
  }

  private scheduleExpiry(): void {
    this.ctx.scheduleTimer('offset-expiry', this.cfg.offsetsRetentionCheckIntervalMs, () => {
      const r = this.offsetOps.expireOffsets();
      this.scheduleExpiry();
      return r;
    });
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
    for (const g of this.streams.values()) push({ groupId: g.groupId, protocolType: 'streams', groupState: g.state, groupType: 'streams' });
    // Share groups as their records hold them, so a group no request has touched since the shard
    // loaded is listed too (Kafka lists every group replayed from __consumer_offsets).
    for (const [groupId, g] of this.share) push({ groupId, protocolType: 'share', groupState: g.members.size > 0 ? 'Stable' : 'Empty', groupType: 'share' });
    return out;
  }

  describeClassic(groupId: string): DescribedGroup {
    // A streams or share group has no classic form: Kafka answers GROUP_ID_NOT_FOUND (DescribeGroups v6) or Dead.
    if (this.streams.has(groupId) || this.share.has(groupId)) {
      return { errorCode: ErrorCode.GROUP_ID_NOT_FOUND, errorMessage: `Group ${groupId} is not a classic group.`, groupId, groupState: ClassicState.DEAD, protocolType: '', protocolData: '', members: [] };
    }
    const cg = this.consumer.get(groupId);
    if (cg) {
      return {
        errorCode: ErrorCode.NONE,
        groupId,
        groupState: cg.state,
        protocolType: 'consumer',
        protocolData: this.consumerOps.assignorOf(cg),
        members: [...cg.members.values()].map((m) => ({ memberId: m.memberId, groupInstanceId: m.instanceId, clientId: m.clientId, clientHost: m.clientHost, memberMetadata: EMPTY, memberAssignment: EMPTY })),
      };
    }
    const g = this.classic.get(groupId);
    if (!g) return { errorCode: ErrorCode.GROUP_ID_NOT_FOUND, groupId, groupState: ClassicState.DEAD, protocolType: '', protocolData: '', members: [] };
    const stable = g.state === ClassicState.STABLE;
    return {
      errorCode: ErrorCode.NONE,
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
