/**
 * The steps consumer group and share group offset sync (KIP-1279 spec §10.2) take alike: which
 * topics and groups a round covers, where a group is coordinated, the clamp of a source offset
 * to what this cluster holds, and the re-check that the topics read by name are still ours.
 * What each sync reads from the source and how it applies it here stays in its own module
 * (group-offset-sync.ts, share-group-offset-sync.ts).
 */
import { Apis } from '../client/apis.js';
import type { KafkaClient } from '../client/kafka-client.js';
import { matchesAny, mirrorConfigValue, splitList } from './mirror-config.js';
import type { MirrorHost } from './mirror-host.js';
import { stillBound } from './partition-growth.js';
import { throwIfRefusedHere } from './sync-refusal.js';

interface OffsetSyncScope {
  /** The topics whose offsets this round syncs. */
  readonly active: ReadonlySet<string>;
  readonly include: readonly string[];
  readonly exclude: readonly string[];
}

/**
 * What one round covers: `topics` (the final sync while stopping) or else every MIRRORING topic
 * of the mirror, and the mirror's group filters. Null when there is nothing to do: no such
 * mirror, no topic, or `mirror.groups.sync.enabled=false` (which pauses the sync on its own, the
 * final one of a stop included: during a switchover the consumers already moved here own their
 * offsets).
 */
export function offsetSyncScope(mirrorName: string, host: MirrorHost, topics?: ReadonlySet<string>): OffsetSyncScope | null {
  const cfg = host.mirrorConfigs().get(mirrorName);
  if (cfg === undefined || mirrorConfigValue(cfg, 'mirror.groups.sync.enabled') === 'false') return null;
  const active = new Set(
    host
      .mirrorTopicBindings()
      .filter((b) => b.mirrorName === mirrorName && (topics !== undefined ? topics.has(b.topicName) : b.desiredState === 2))
      .map((b) => b.topicName),
  );
  if (active.size === 0) return null;
  return { active, include: splitList(mirrorConfigValue(cfg, 'mirror.groups.include')), exclude: splitList(mirrorConfigValue(cfg, 'mirror.groups.exclude')) };
}

/**
 * The source's groups of the wanted protocol types that pass the mirror's group filters, from
 * every source broker (each lists the groups it coordinates). `typesFilter` goes in the request
 * (ListGroups v5, KIP-848); `protocolTypes` is checked on the answer too, as a broker answering
 * below v5 ignores the type filter.
 */
export async function sourceGroups(
  source: KafkaClient,
  scope: OffsetSyncScope,
  typesFilter: readonly string[],
  protocolTypes: ReadonlySet<string>,
): Promise<Set<string>> {
  const md = await source.metadata([]);
  const ids = new Set<string>();
  for (const b of md.brokers) {
    const res = await source.sendIfSupported(Apis.ListGroups, { statesFilter: [], typesFilter }, b.nodeId);
    for (const g of res?.groups ?? []) {
      if (protocolTypes.has(g.protocolType) && matchesAny(g.groupId, scope.include) && !matchesAny(g.groupId, scope.exclude)) ids.add(g.groupId);
    }
  }
  return ids;
}

/**
 * The coordinator of a group (share groups are coordinated like every group: key type GROUP).
 * `here`: the client is this node's own, so an authorization refusal is thrown, not skipped.
 */
export async function coordinatorOf(client: KafkaClient, groupId: string, here = false): Promise<number | null> {
  const res = await client.sendIfSupported(Apis.FindCoordinator, { keyType: 0, coordinatorKeys: [groupId] });
  const c = res?.coordinators[0];
  if (here && c !== undefined) throwIfRefusedHere(c.errorCode, `DESCRIBE on group ${groupId}`);
  if (c === undefined || c.errorCode !== 0) return null;
  return c.nodeId;
}

/**
 * A source offset clamped to what this cluster holds:
 * max(local log start, min(source offset, local high watermark)). The high watermark, not the
 * log end: a consumer here can read no further, and an offset above it would skip records once
 * they are mirrored (spec §10.2, VK12). Undefined when the partition has no log here.
 */
export function clampedOffset(host: MirrorHost, topic: string, partition: number, sourceOffset: number): number | undefined {
  const log = host.partitionLog(topic, partition);
  if (log === undefined) return undefined;
  return Math.max(log.logStartOffset, Math.min(sourceOffset, log.highWatermark));
}

/** Of `topics` (read from the source by name), those still bound here: a topic recreated on the source since the round began is not ours. */
export async function stillOurs<T>(mirrorName: string, host: MirrorHost, source: KafkaClient, topics: readonly T[], nameOf: (t: T) => string): Promise<T[]> {
  const bound = await stillBound(mirrorName, host, source, topics.map(nameOf));
  return topics.filter((t) => bound.has(nameOf(t)));
}
