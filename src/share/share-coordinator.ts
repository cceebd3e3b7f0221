/**
 * The share coordinator (KIP-932, Kafka's ShareCoordinatorShard/ShareCoordinatorService): the
 * durable delivery state of share-partitions, on the internal topic `__share_group_state` through
 * the coordinator runtime. Each share-partition (group, topic id, partition) is keyed to one
 * partition of the topic; its state is a ShareSnapshot record (start offset and the state batches
 * of the in-flight records), replayed when the shard loads, so a node restart keeps the SPSO,
 * the acknowledged and archived records and the delivery counts.
 *
 * Every write is a whole snapshot (Kafka writes ShareUpdate deltas between snapshots; a snapshot
 * alone replays to the same state). A deleted share-partition is a tombstone.
 */
import { Reader } from '../protocol/reader.js';
import { Writer } from '../protocol/writer.js';
import { decodeShareSnapshotKey, encodeShareSnapshotKey } from '../protocol/generated/messages/share-snapshot-key.js';
import { decodeShareSnapshotValue, encodeShareSnapshotValue } from '../protocol/generated/messages/share-snapshot-value.js';
import { decodeShareUpdateKey } from '../protocol/generated/messages/share-update-key.js';
import { decodeShareUpdateValue } from '../protocol/generated/messages/share-update-value.js';
import type { CoordinatorHost } from '../coordinator/coordinator-host.js';
import type { CoordinatorRecord, ReplayedRecord } from '../coordinator/coordinator-batch.js';
import { CoordinatorRuntime, type CoordinatorShard, type ShardContext } from '../coordinator/coordinator-runtime.js';
import { SnapshotMap, SnapshotRegistry } from '../coordinator/snapshot-registry.js';

export const SHARE_GROUP_STATE = '__share_group_state';

/** Coordinator record types of __share_group_state (the key's version prefix). */
const SHARE_SNAPSHOT = 0;
const SHARE_UPDATE = 1;

export interface StateBatch {
  readonly firstOffset: number;
  readonly lastOffset: number;
  readonly deliveryState: number;
  readonly deliveryCount: number;
}

interface ShareState {
  readonly stateEpoch: number;
  readonly snapshotEpoch: number;
  readonly leaderEpoch: number;
  readonly startOffset: number;
  readonly stateBatches: readonly StateBatch[];
}

export const shareStateKey = (groupId: string, topicId: string, partition: number): string => `${groupId}:${topicId}:${partition}`;

function keyBytes(groupId: string, topicId: string, partition: number): Buffer {
  const w = new Writer(64).int16(SHARE_SNAPSHOT);
  encodeShareSnapshotKey(w, { groupId, topicId, partition }, 0);
  return w.toBuffer();
}

function shareSnapshotRecord(groupId: string, topicId: string, partition: number, s: ShareState | null, now: number): CoordinatorRecord {
  if (s === null) return { key: keyBytes(groupId, topicId, partition), value: null };
  const v = new Writer(128).int16(0);
  encodeShareSnapshotValue(
    v,
    {
      snapshotEpoch: s.snapshotEpoch,
      stateEpoch: s.stateEpoch,
      leaderEpoch: s.leaderEpoch,
      startOffset: BigInt(s.startOffset),
      createTimestamp: BigInt(now),
      writeTimestamp: BigInt(now),
      stateBatches: s.stateBatches.map((b) => ({ firstOffset: BigInt(b.firstOffset), lastOffset: BigInt(b.lastOffset), deliveryState: b.deliveryState, deliveryCount: b.deliveryCount })),
    },
    0,
  );
  return { key: keyBytes(groupId, topicId, partition), value: v.toBuffer() };
}

export class ShareCoordinatorShard implements CoordinatorShard {
  readonly snapshots = new SnapshotRegistry();
  readonly states = new SnapshotMap<string, ShareState>(this.snapshots);

  constructor(readonly ctx: ShardContext<ShareCoordinatorShard>) {}

  replay(record: ReplayedRecord): void {
    const r = new Reader(record.key);
    const type = r.int16();
    if (type !== SHARE_SNAPSHOT && type !== SHARE_UPDATE) return;
    const k = type === SHARE_SNAPSHOT ? decodeShareSnapshotKey(r, 0) : decodeShareUpdateKey(r, 0);
    const key = shareStateKey(k.groupId, k.topicId, k.partition);
    if (record.value === null) {
      this.states.delete(key);
      return;
    }
    const vr = new Reader(record.value);
    vr.int16();
    const toBatches = (bs: readonly { firstOffset: bigint; lastOffset: bigint; deliveryState: number; deliveryCount: number }[]): StateBatch[] =>
      bs.map((b) => ({ firstOffset: Number(b.firstOffset), lastOffset: Number(b.lastOffset), deliveryState: b.deliveryState, deliveryCount: b.deliveryCount }));
    if (type === SHARE_SNAPSHOT) {
      const v = decodeShareSnapshotValue(vr, 0);
      this.states.set(key, { stateEpoch: v.stateEpoch, snapshotEpoch: v.snapshotEpoch, leaderEpoch: v.leaderEpoch, startOffset: Number(v.startOffset), stateBatches: toBatches(v.stateBatches) });
      return;
    }
    // A ShareUpdate (written by Kafka between snapshots) merges its batches over the snapshot's.
    const v = decodeShareUpdateValue(vr, 0);
    const prev = this.states.get(key);
    const start = Number(v.startOffset) >= 0 ? Number(v.startOffset) : (prev?.startOffset ?? 0);
    const updates = toBatches(v.stateBatches);
    const kept = (prev?.stateBatches ?? []).filter((b) => b.lastOffset >= start && !updates.some((u) => u.firstOffset <= b.lastOffset && u.lastOffset >= b.firstOffset));
    this.states.set(key, { stateEpoch: prev?.stateEpoch ?? 0, snapshotEpoch: v.snapshotEpoch, leaderEpoch: v.leaderEpoch, startOffset: start, stateBatches: [...kept, ...updates].sort((a, b) => a.firstOffset - b.firstOffset) });
  }
}

/** Read/Write/Initialize/Delete of share-partition state, as the share coordinator serves them. */
export class ShareCoordinator {
  readonly runtime: CoordinatorRuntime<ShareCoordinatorShard>;

  constructor(host: CoordinatorHost, partitions: number) {
    this.runtime = new CoordinatorRuntime<ShareCoordinatorShard>({ host, topic: SHARE_GROUP_STATE, partitions, newShard: (ctx) => new ShareCoordinatorShard(ctx) });
  }

  async readState(groupId: string, topicId: string, partition: number): Promise<ShareState | null> {
    const key = shareStateKey(groupId, topicId, partition);
    return this.runtime.read(key, (s) => s.states.get(key) ?? null);
  }

  /**
   * ReadShareGroupStateSummary: the start offset, state epoch and leader epoch of a
   * share-partition, and how many of its in-flight records are complete (acknowledged or
   * archived); null when it has no state.
   */
  async readSummary(groupId: string, topicId: string, partition: number): Promise<{ stateEpoch: number; leaderEpoch: number; startOffset: number; deliveryCompleteCount: number } | null> {
    const s = await this.readState(groupId, topicId, partition);
    if (s === null) return null;
    let complete = 0;
    for (const b of s.stateBatches) if (b.deliveryState === 2 /* ACKNOWLEDGED */ || b.deliveryState === 4 /* ARCHIVED */) complete += Math.max(0, b.lastOffset - Math.max(b.firstOffset, s.startOffset) + 1);
    return { stateEpoch: s.stateEpoch, leaderEpoch: s.leaderEpoch, startOffset: s.startOffset, deliveryCompleteCount: complete };
  }

  /**
   * WriteShareGroupState as the share coordinator serves it: a write with an older state epoch
   * is FENCED_STATE_EPOCH and one from an older partition leader FENCED_LEADER_EPOCH
   * (ShareCoordinatorShard's checks). Returns a Kafka error code.
   */
  async writeStateFenced(groupId: string, topicId: string, partition: number, state: ShareState): Promise<number> {
    const key = shareStateKey(groupId, topicId, partition);
    return this.runtime.write(key, (s) => {
      const prev = s.states.get(key);
      if (prev !== undefined && state.stateEpoch < prev.stateEpoch) return { records: [], response: 124 /* FENCED_STATE_EPOCH */ };
      if (prev !== undefined && state.leaderEpoch < prev.leaderEpoch) return { records: [], response: 74 /* FENCED_LEADER_EPOCH */ };
      const next: ShareState = { ...state, snapshotEpoch: (prev?.snapshotEpoch ?? -1) + 1 };
      return { records: [shareSnapshotRecord(groupId, topicId, partition, next, s.ctx.now())], response: 0 };
    });
  }

  /**
   * InitializeShareGroupState: the state epoch at `startOffset` (-1: uninitialized), with no
   * batches. As Kafka's ShareCoordinatorShard: a stored state epoch above the request's is
   * FENCED_STATE_EPOCH; the same epoch and start offset again changes nothing.
   */
  async initializeState(groupId: string, topicId: string, partition: number, stateEpoch: number, startOffset: number): Promise<number> {
    const key = shareStateKey(groupId, topicId, partition);
    return this.runtime.write(key, (s) => {
      const prev = s.states.get(key);
      if (prev !== undefined && prev.stateEpoch > stateEpoch) return { records: [], response: 124 /* FENCED_STATE_EPOCH */ };
      if (prev !== undefined && prev.stateEpoch === stateEpoch && prev.startOffset === startOffset && prev.stateBatches.length === 0) return { records: [], response: 0 };
      const next: ShareState = { stateEpoch, snapshotEpoch: (prev?.snapshotEpoch ?? -1) + 1, leaderEpoch: prev?.leaderEpoch ?? -1, startOffset, stateBatches: [] };
      return { records: [shareSnapshotRecord(groupId, topicId, partition, next, s.ctx.now())], response: 0 };
    });
  }

  async deleteState(groupId: string, topicId: string, partition: number): Promise<void> {
    const key = shareStateKey(groupId, topicId, partition);
    await this.runtime.write(key, (s) => ({ records: s.states.has(key) ? [shareSnapshotRecord(groupId, topicId, partition, null, s.ctx.now())] : [], response: undefined }));
  }

  close(): Promise<void> {
    return this.runtime.close();
  }
}
