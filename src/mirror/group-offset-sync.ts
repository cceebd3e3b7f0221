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
import type { MirrorHost } from './mirror-host.js';
import { clampedOffset, coordinatorOf, offsetSyncScope, sourceGroups, stillOurs } from './offset-sync-steps.js';
import { throwIfRefusedHere } from './sync-refusal.js';

const CONSUMER_PROTOCOL_TYPES: ReadonlySet<string> = new Set(['consumer', '']);
const ACTIVE_GROUP_STATES: ReadonlySet<string> = new Set(['Stable', 'PreparingRebalance', 'CompletingRebalance', 'Assigning', 'Reconciling']);

interface GroupSyncResult {
  readonly groups: number;
  readonly committed: number;
  readonly skippedActive: number;
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
  const scope = offsetSyncScope(mirrorName, host, topics);
  if (scope === null) return { groups: 0, committed: 0, skippedActive: 0 };
  const { active } = scope;
  // Consumer groups (and classic groups of the empty protocol type); no type filter is sent.
  const groupIds = await sourceGroups(source, scope, [], CONSUMER_PROTOCOL_TYPES);
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
        const src = Number(p.committedOffset);
        const synced = clampedOffset(host, t.name, p.partitionIndex, src);
        if (synced === undefined) continue;
        parts.push({ partitionIndex: p.partitionIndex, committedOffset: BigInt(synced), committedLeaderEpoch: synced === src ? p.committedLeaderEpoch : -1, committedMetadata: p.metadata });
      }
      if (parts.length > 0) commits.push({ name: t.name, partitions: parts });
    }
    if (commits.length === 0) continue;
    const ours = await stillOurs(mirrorName, host, source, commits, (c) => c.name);
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
