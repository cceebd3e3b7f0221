/**
 * Partition growth (KIP-1279 spec §8.2 step 7, §10.7): partitions added to a source topic are
 * added here too, through the host (the CreatePartitions API refuses a mirror topic; a host
 * without that seam gets CreatePartitions on its own listener), so the mirror manager sees
 * the new partitions in the image and drives each through LOG_TRUNCATION into MIRRORING like a
 * freshly started partition. Only topics this mirror is actively mirroring are grown, and only
 * when the source topic still has the topic id bound here: a recreated topic is another topic
 * (the fetcher fails it, non-retryable) and must not reshape ours.
 */
import { Apis } from '../client/apis.js';
import type { KafkaClient } from '../client/kafka-client.js';
import { ErrorCode } from '../protocol/generated/errors.js';
import type { MirrorHost } from './mirror-host.js';
import { MirrorPartitionState as S } from './mirror-partition-state.js';

interface PartitionGrowth {
  readonly topic: string;
  readonly from: number;
  readonly to: number;
  readonly errorCode: number;
  readonly errorMessage: string | null;
}

interface SourceTopicsRound {
  /**
   * The mirror's MIRRORING topics whose source topic still has the topic id bound here. Config
   * and group offset sync work by topic name, so they are limited to these: a deleted or
   * recreated source topic is another topic, whose configs and offsets are not ours.
   */
  readonly live: ReadonlySet<string>;
  readonly grown: readonly PartitionGrowth[];
}

/** One round for one mirror: the live topics, and the topics it tried to grow and how that went. */
export async function followSourceTopics(mirrorName: string, host: MirrorHost, source: KafkaClient, self: KafkaClient): Promise<SourceTopicsRound> {
  const bound = host.mirrorTopicBindings().filter((b) => b.mirrorName === mirrorName && b.desiredState === S.MIRRORING);
  const live = new Set<string>();
  if (bound.length === 0) return { live, grown: [] };
  const md = await source.metadata(bound.map((b) => b.topicName));
  const grow: { name: string; from: number; to: number }[] = [];
  for (const b of bound) {
    const t = md.topics.find((x) => x.name === b.topicName);
    if (t === undefined || t.errorCode !== ErrorCode.NONE || t.topicId !== b.topicId) continue;
    live.add(b.topicName);
    const have = host.partitionCount(b.topicName) ?? 0;
    if (have > 0 && t.partitions.length > have) grow.push({ name: b.topicName, from: have, to: t.partitions.length });
  }
  if (grow.length === 0) return { live, grown: [] };
  if (host.createMirrorPartitions !== undefined) {
    const grown: PartitionGrowth[] = [];
    for (const g of grow) {
      const r = await host.createMirrorPartitions(g.name, g.to);
      grown.push({ topic: g.name, from: g.from, to: g.to, errorCode: r.errorCode, errorMessage: r.errorMessage });
    }
    return { live, grown };
  }
  const res = await self.sendIfSupported(Apis.CreatePartitions, {
    topics: grow.map((g) => ({ name: g.name, count: g.to, assignments: null })),
    timeoutMs: 30_000,
    validateOnly: false,
  });
  const grown = grow.map((g) => {
    const r = res?.results.find((x) => x.name === g.name);
    return { topic: g.name, from: g.from, to: g.to, errorCode: r?.errorCode ?? ErrorCode.UNSUPPORTED_VERSION, errorMessage: r?.errorMessage ?? null };
  });
  return { live, grown };
}

/**
 * Of `topics`, those whose source topic still has the topic id bound here, asked of the source
 * now. Config and group offset sync read the source by topic name, so they check again after
 * reading: a topic deleted and recreated between the round's first look and the read is then
 * seen with its new id and left out, and nothing of the new topic is copied onto ours.
 */
export async function stillBound(mirrorName: string, host: MirrorHost, source: KafkaClient, topics: readonly string[]): Promise<Set<string>> {
  const out = new Set<string>();
  if (topics.length === 0) return out;
  const ids = new Map(host.mirrorTopicBindings().filter((b) => b.mirrorName === mirrorName).map((b) => [b.topicName, b.topicId]));
  const md = await source.metadata([...topics]);
  for (const t of md.topics) if (t.name !== null && t.errorCode === ErrorCode.NONE && ids.get(t.name) === t.topicId) out.add(t.name);
  return out;
}
