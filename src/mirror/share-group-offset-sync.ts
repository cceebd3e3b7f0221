/**
 * Share group offset sync (KIP-1279 spec §10.2, share groups of KIP-932): the share-partition
 * start offsets (SPSO) of source share groups, for the partitions of this mirror's active
 * (MIRRORING) topics, are set on the same groups here, so a share group that fails over goes on
 * delivering from where it was on the source. Like consumer offsets they are clamped to what this
 * cluster holds: synced = max(local log start, min(source start offset, local high watermark)).
 *
 * Listed apart from consumer groups (ListGroups with the "share" type filter, KIP-848's v5), so
 * a consumer group and a share group never take each other's offsets. A share group with members
 * here is owned by its consumers and left alone (logged as a warning, as the reference does). A
 * source that serves no DescribeShareGroupOffsets (before Kafka 4.1, or share groups off) is
 * skipped without a word.
 *
 * Source side: ListGroups on every source broker, FindCoordinator, DescribeShareGroupOffsets.
 * Destination side: ShareGroupDescribe and AlterShareGroupOffsets to this node over its own
 * listener, as the reference's destination Admin does (alterShareGroupOffsets), so the share
 * group coordinator's rules apply unchanged (AlterShareGroupOffsets refuses a non-empty group).
 */
import { Apis } from '../client/apis.js';
import type { KafkaClient } from '../client/kafka-client.js';
import { ErrorCode } from '../protocol/generated/errors.js';
import type { MirrorHost } from './mirror-host.js';
import { clampedOffset, coordinatorOf, offsetSyncScope, sourceGroups, stillOurs } from './offset-sync-steps.js';
import { throwIfRefusedHere } from './sync-refusal.js';

interface ShareGroupSyncResult {
  readonly groups: number;
  readonly committed: number;
  /** Share groups with members here, left alone. */
  readonly skippedActive: readonly string[];
}

const NONE: ShareGroupSyncResult = { groups: 0, committed: 0, skippedActive: [] };

const SHARE_PROTOCOL_TYPES: ReadonlySet<string> = new Set(['share']);

/**
 * One share group sync round for one mirror. `topics` restricts it to those topic names (the
 * final sync while stopping); otherwise every MIRRORING topic of the mirror is considered.
 */
export async function syncShareGroupOffsets(
  mirrorName: string,
  host: MirrorHost,
  source: KafkaClient,
  self: KafkaClient,
  topics?: ReadonlySet<string>,
): Promise<ShareGroupSyncResult> {
  const scope = offsetSyncScope(mirrorName, host, topics);
  if (scope === null) return NONE;
  const { active } = scope;
  const groupIds = await sourceGroups(source, scope, ['share'], SHARE_PROTOCOL_TYPES);
  let committed = 0;
  const skippedActive: string[] = [];
  if (groupIds.size > 0) await self.metadata([]); // learn our own broker list (coordinator addresses)
  for (const groupId of groupIds) {
    const srcCoord = await coordinatorOf(source, groupId);
    if (srcCoord === null) continue;
    const described = await source.sendIfSupported(Apis.DescribeShareGroupOffsets, { groups: [{ groupId, topics: null }] }, srcCoord);
    if (described === null) return { groups: 0, committed: 0, skippedActive: [] }; // the source has no share groups to sync
    const g = described.groups[0];
    if (g === undefined || g.errorCode !== ErrorCode.NONE) continue;
    const alters: { topicName: string; partitions: { partitionIndex: number; startOffset: bigint }[] }[] = [];
    for (const t of g.topics) {
      if (!active.has(t.topicName)) continue;
      const parts: { partitionIndex: number; startOffset: bigint }[] = [];
      for (const p of t.partitions) {
        // -1: the group has no state for the partition yet (it never fetched it).
        if (p.errorCode !== ErrorCode.NONE || p.startOffset < 0n) continue;
        // The same clamp as consumer offsets: a share group here can be given no record that is
        // not mirrored yet, and none below the log start.
        const synced = clampedOffset(host, t.topicName, p.partitionIndex, Number(p.startOffset));
        if (synced === undefined) continue;
        parts.push({ partitionIndex: p.partitionIndex, startOffset: BigInt(synced) });
      }
      if (parts.length > 0) alters.push({ topicName: t.topicName, partitions: parts });
    }
    if (alters.length === 0) continue;
    const ours = await stillOurs(mirrorName, host, source, alters, (a) => a.topicName);
    if (ours.length === 0) continue;
    const destCoord = await coordinatorOf(self, groupId, true);
    if (destCoord === null) continue;
    const here = await self.sendIfSupported(Apis.ShareGroupDescribe, { groupIds: [groupId], includeAuthorizedOperations: false }, destCoord);
    const state = here?.groups[0];
    if (state !== undefined && state.errorCode === ErrorCode.NONE && state.members.length > 0) {
      skippedActive.push(groupId);
      continue;
    }
    // Only what differs: an alter drops the partition's delivery state and writes it anew.
    const current = await self.sendIfSupported(Apis.DescribeShareGroupOffsets, { groups: [{ groupId, topics: ours.map((a) => ({ topicName: a.topicName, partitions: a.partitions.map((p) => p.partitionIndex) })) }] }, destCoord);
    const now = new Map<string, bigint>();
    for (const t of current?.groups[0]?.topics ?? []) for (const p of t.partitions) if (p.errorCode === ErrorCode.NONE) now.set(`${t.topicName}:${p.partitionIndex}`, p.startOffset);
    const changed = ours
      .map((a) => ({ topicName: a.topicName, partitions: a.partitions.filter((p) => now.get(`${a.topicName}:${p.partitionIndex}`) !== p.startOffset) }))
      .filter((a) => a.partitions.length > 0);
    if (changed.length === 0) continue;
    const res = await self.sendIfSupported(Apis.AlterShareGroupOffsets, { groupId, topics: changed }, destCoord);
    if (res === null) continue;
    throwIfRefusedHere(res.errorCode, `READ on share group ${groupId}`);
    // Members joined between the describe and the alter: the group refuses it whole.
    if (res.errorCode === ErrorCode.NON_EMPTY_GROUP) {
      skippedActive.push(groupId);
      continue;
    }
    for (const t of res.responses) {
      for (const p of t.partitions) {
        throwIfRefusedHere(p.errorCode, `READ on share group ${groupId} and topic ${t.topicName}`);
        if (p.errorCode === ErrorCode.NONE) committed++;
      }
    }
  }
  return { groups: groupIds.size, committed, skippedActive };
}
