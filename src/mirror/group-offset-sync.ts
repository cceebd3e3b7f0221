/**
 * Consumer group offset sync (KIP-1279 spec §10.2): committed offsets of source groups, for the
 * partitions of this mirror's active (MIRRORING) topics, are committed to the same groups here,
 * so consumers fail over without re-reading or skipping (the offsets are the same: the log is a
 * byte copy). Offsets are clamped to what this cluster holds:
 * synced = max(local log start, min(source committed, local high watermark)) — a consumer must not skip
 * data not mirrored yet. Groups active here are left alone; stopped topics are never touched.
 *
 * Source side: ListGroups on every source broker, FindCoordinator, OffsetFetch (v8 batched
 * form). Destination side: the same calls to this node over its own listener, as the reference's
 * internal destination Admin does, so the group coordinator's rules apply unchanged.
 */
import { Apis } from '../client/apis.js';
import type { KafkaClient } from '../client/kafka-client.js';
import { ErrorCode } from '../protocol/generated/errors.js';
import { matchesAny, mirrorConfigValue, splitList } from './mirror-config.js';
import type { MirrorHost } from './mirror-host.js';
import { stillBound } from './partition-growth.js';
import { throwIfRefusedHere } from './sync-refusal.js';

const ACTIVE_GROUP_STATES: ReadonlySet<string> = new Set(['Stable', 'PreparingRebalance', 'CompletingRebalance', 'Assigning', 'Reconciling']);

export interface GroupSyncResult {
  readonly groups: number;
  readonly committed: number;
  readonly skippedActive: number;
}

async function coordinatorOf(client: KafkaClient, groupId: string, here = false): Promise<number | null> {
  const res = await client.sendIfSupported(Apis.FindCoordinator, { keyType: 0, coordinatorKeys: [groupId] });
  const c = res?.coordinators[0];
  if (here && c !== undefined) throwIfRefusedHere(c.errorCode, `DESCRIBE on group ${groupId}`);
  if (c === undefined || c.errorCode !== 0) return null;
  return c.nodeId;
}

/**
 * One sync round for one mirror. `topics` restricts the sync to those topic names (a final sync
 * while stopping); otherwise every MIRRORING topic of the mirror is considered.
 */
export async function syncGroupOffsets(
  mirrorName: string,
  host: MirrorHost,
  source: KafkaClient,
  self: KafkaClient,
  topics?: ReadonlySet<string>,
): Promise<GroupSyncResult> {
  const cfg = host.mirrorConfigs().get(mirrorName);
  if (cfg === undefined) return { groups: 0, committed: 0, skippedActive: 0 };
  // `mirror.groups.sync.enabled=false` pauses this sync on its own, the final one of a stop
  // included: during a switchover the consumers already moved here own their offsets.
  if (mirrorConfigValue(cfg, 'mirror.groups.sync.enabled') === 'false') return { groups: 0, committed: 0, skippedActive: 0 };
  const active = new Set(
    host
      .mirrorTopicBindings()
      .filter((b) => b.mirrorName === mirrorName && (topics !== undefined ? topics.has(b.topicName) : b.desiredState === 2))
      .map((b) => b.topicName),
  );
  if (active.size === 0) return { groups: 0, committed: 0, skippedActive: 0 };
  const include = splitList(mirrorConfigValue(cfg, 'mirror.groups.include'));
  const exclude = splitList(mirrorConfigValue(cfg, 'mirror.groups.exclude'));

  // Source groups, from every broker (each lists the groups it coordinates).
  const md = await source.metadata([]);
  const groupIds = new Set<string>();
  for (const b of md.brokers) {
    const res = await source.sendIfSupported(Apis.ListGroups, { statesFilter: [] }, b.nodeId);
    for (const g of res?.groups ?? []) {
      if ((g.protocolType === 'consumer' || g.protocolType === '') && matchesAny(g.groupId, include) && !matchesAny(g.groupId, exclude)) groupIds.add(g.groupId);
    }
  }
  let committed = 0;
  let skippedActive = 0;
  if (groupIds.size > 0) await self.metadata([]); // learn our own broker list (coordinator addresses)
  for (const groupId of groupIds) {
    const srcCoord = await coordinatorOf(source, groupId);
    if (srcCoord === null) continue;
    const fetched = await source.sendIfSupported(Apis.OffsetFetch, { groups: [{ groupId, topics: null }], requireStable: false }, srcCoord);
    const g = fetched?.groups[0];
    if (g === undefined || g.errorCode !== 0) continue;
    const commits: { name: string; partitions: { partitionIndex: number; committedOffset: bigint; committedLeaderEpoch: number; committedMetadata: string | null }[] }[] = [];
    for (const t of g.topics) {
      if (!active.has(t.name)) continue;
      const parts = [];
      for (const p of t.partitions) {
        if (p.errorCode !== 0 || p.committedOffset < 0n) continue;
        const log = host.partitionLog(t.name, p.partitionIndex);
        if (log === undefined) continue;
        const src = Number(p.committedOffset);
        // Clamped to the high watermark, not the log end: a consumer here can read no further,
        // and an offset above it would skip records once they are mirrored (spec §10.2, VK12).
        const synced = Math.max(log.logStartOffset, Math.min(src, log.highWatermark));
        parts.push({ partitionIndex: p.partitionIndex, committedOffset: BigInt(synced), committedLeaderEpoch: synced === src ? p.committedLeaderEpoch : -1, committedMetadata: p.metadata });
      }
      if (parts.length > 0) commits.push({ name: t.name, partitions: parts });
    }
    if (commits.length === 0) continue;
    // Read by topic name: a topic recreated on the source since the round began is not ours.
    const bound = await stillBound(mirrorName, host, source, commits.map((c) => c.name));
    const ours = commits.filter((c) => bound.has(c.name));
    if (ours.length === 0) continue;
    const destCoord = await coordinatorOf(self, groupId, true);
    if (destCoord === null) continue;
    // A group with live members here is owned by its consumers: never overwrite it.
    const described = await self.sendIfSupported(Apis.DescribeGroups, { groups: [groupId], includeAuthorizedOperations: false }, destCoord);
    const state = described?.groups[0];
    if (state !== undefined) throwIfRefusedHere(state.errorCode, `DESCRIBE on group ${groupId}`);
    if (state !== undefined && state.errorCode === ErrorCode.NONE && ACTIVE_GROUP_STATES.has(state.groupState)) {
      skippedActive++;
      continue;
    }
    const res = await self.sendIfSupported(
      Apis.OffsetCommit,
      { groupId, generationIdOrMemberEpoch: -1, memberId: '', groupInstanceId: null, retentionTimeMs: -1n, topics: ours },
      destCoord,
    );
    for (const t of res?.topics ?? []) {
      for (const p of t.partitions) {
        throwIfRefusedHere(p.errorCode, `READ on group ${groupId} and topic ${t.name}`);
        if (p.errorCode === 0) committed++;
      }
    }
  }
  return { groups: groupIds.size, committed, skippedActive };
}
