import type { StreamsTopology } from './streams-group.js';
import type { TopicView } from './consumer-target.js';
import { hashMetadata } from './consumer-records.js';

/**
 * A streams topology configured against the topic metadata, after Kafka's
 * InternalTopicManager.configureTopics: every source topic must exist; repartition topics take
 * the partition count the topology gives, or else the largest of the source topics of the
 * subtopologies writing to them; topics of one copartition group must have one partition count;
 * a changelog topic has one partition per task of its subtopology. A subtopology has as many
 * tasks as its largest source or repartition source topic has partitions. Internal topics that
 * do not exist yet are returned for the broker to create (KIP-1071: the group coordinator creates
 * them, and answers MISSING_INTERNAL_TOPICS meanwhile).
 */

/** The heartbeat status codes (StreamsGroupHeartbeatResponse.Status). */
export const StreamsStatus = {
  STALE_TOPOLOGY: 0,
  MISSING_SOURCE_TOPICS: 1,
  INCORRECTLY_PARTITIONED_TOPICS: 2,
  MISSING_INTERNAL_TOPICS: 3,
  SHUTDOWN_APPLICATION: 4,
} as const;

export interface StreamsStatusEntry {
  readonly statusCode: number;
  readonly statusDetail: string;
}

export interface InternalTopicToCreate {
  readonly name: string;
  readonly partitions: number;
  readonly replicationFactor: number;
  readonly configs: ReadonlyMap<string, string>;
}

interface ConfiguredTopology {
  /** Every topic exists with the right partition count: tasks can be assigned. */
  readonly ready: boolean;
  /** subtopology id → number of tasks (only when ready). */
  readonly tasks: ReadonlyMap<string, number>;
  readonly status: readonly StreamsStatusEntry[];
  readonly toCreate: readonly InternalTopicToCreate[];
  /** Hash of the ids and partition counts of every topic the topology names. */
  readonly metadataHash: bigint;
}

/** Kafka's topology validation (StreamsGroupHeartbeatRequest STREAMS_INVALID_TOPOLOGY cases); null when valid. */
export function topologyError(t: StreamsTopology): string | null {
  const ids = new Set<string>();
  const internal = new Set<string>();
  for (const s of t.subtopologies) {
    if (ids.has(s.subtopologyId)) return `Duplicate subtopology id ${s.subtopologyId}.`;
    ids.add(s.subtopologyId);
    for (const c of s.stateChangelogTopics) internal.add(c.name);
    for (const r of s.repartitionSourceTopics) internal.add(r.name);
  }
  for (const s of t.subtopologies) {
    for (const src of s.sourceTopics) if (internal.has(src)) return `Source topic ${src} is also an internal topic.`;
    for (const sink of s.repartitionSinkTopics) {
      if (!t.subtopologies.some((o) => o.repartitionSourceTopics.some((r) => r.name === sink))) return `Repartition sink topic ${sink} is not a repartition source topic of any subtopology.`;
    }
    for (const g of s.copartitionGroups) {
      for (const i of g.sourceTopics) if (i < 0 || i >= s.sourceTopics.length) return `Copartition group of subtopology ${s.subtopologyId} names source topic index ${i}, which does not exist.`;
      for (const i of g.repartitionSourceTopics) if (i < 0 || i >= s.repartitionSourceTopics.length) return `Copartition group of subtopology ${s.subtopologyId} names repartition source topic index ${i}, which does not exist.`;
    }
  }
  return null;
}

export function configureTopology(t: StreamsTopology, topics: TopicView): ConfiguredTopology {
  const count = (name: string): number | undefined => topics.partitionCount(name);
  const status: StreamsStatusEntry[] = [];
  const names = new Set<string>();
  const missingSources: string[] = [];
  for (const s of t.subtopologies) {
    for (const src of s.sourceTopics) {
      names.add(src);
      if (count(src) === undefined) missingSources.push(src);
    }
  }
  const hash = (): bigint =>
    hashMetadata(
      [...names]
        .sort()
        .map((n) => `${n}:${topics.topicId(n) ?? ''}:${count(n) ?? -1}`)
        .join(','),
    );
  for (const s of t.subtopologies) {
    for (const r of s.repartitionSourceTopics) names.add(r.name);
    for (const c of s.stateChangelogTopics) names.add(c.name);
  }
  if (missingSources.length > 0) {
    status.push({ statusCode: StreamsStatus.MISSING_SOURCE_TOPICS, statusDetail: `Source topics ${[...new Set(missingSources)].sort().join(', ')} are missing.` });
    return { ready: false, tasks: new Map(), status, toCreate: [], metadataHash: hash() };
  }

  // Repartition topics: fixed counts first, then derived from the writers' source topics.
  const repartition = new Map<string, number>();
  for (const s of t.subtopologies) for (const r of s.repartitionSourceTopics) if (r.partitions > 0) repartition.set(r.name, r.partitions);
  const sourceMax = (subtopologyIndex: number): number | undefined => {
    const s = t.subtopologies[subtopologyIndex]!;
    let max: number | undefined;
    for (const src of s.sourceTopics) max = Math.max(max ?? 0, count(src) ?? 0);
    for (const r of s.repartitionSourceTopics) {
      const n = repartition.get(r.name);
      if (n === undefined) return undefined;
      max = Math.max(max ?? 0, n);
    }
    return max;
  };
  for (let progress = true; progress; ) {
    progress = false;
    for (const s of t.subtopologies) {
      for (const r of s.repartitionSourceTopics) {
        if (repartition.has(r.name)) continue;
        let max: number | undefined;
        let known = true;
        t.subtopologies.forEach((w, i) => {
          if (!w.repartitionSinkTopics.includes(r.name)) return;
          const n = sourceMax(i);
          if (n === undefined) known = false;
          else max = Math.max(max ?? 0, n);
        });
        if (known && max !== undefined) {
          repartition.set(r.name, max);
          progress = true;
        }
      }
    }
  }
  const partitionsOf = (name: string): number | undefined => repartition.get(name) ?? count(name);

  // Copartition groups: one partition count per group.
  const wrong: string[] = [];
  for (const s of t.subtopologies) {
    for (const g of s.copartitionGroups) {
      const members = [...g.sourceTopics.map((i) => s.sourceTopics[i]!), ...g.repartitionSourceTopics.map((i) => s.repartitionSourceTopics[i]!.name)];
      const counts = new Set(members.map((n) => partitionsOf(n)));
      if (counts.size > 1) wrong.push(...members);
    }
  }

  const tasks = new Map<string, number>();
  const toCreate: InternalTopicToCreate[] = [];
  const missingInternal: string[] = [];
  const want = (name: string, partitions: number, rf: number, configs: readonly { key: string; value: string }[]): void => {
    const have = count(name);
    if (have === undefined) {
      missingInternal.push(name);
      if (!toCreate.some((c) => c.name === name)) toCreate.push({ name, partitions, replicationFactor: rf, configs: new Map(configs.map((c) => [c.key, c.value])) });
    } else if (have !== partitions) wrong.push(name);
  };
  t.subtopologies.forEach((s, i) => {
    const n = sourceMax(i) ?? 0;
    tasks.set(s.subtopologyId, n);
    for (const r of s.repartitionSourceTopics) want(r.name, repartition.get(r.name) ?? n, r.replicationFactor, r.topicConfigs);
    for (const c of s.stateChangelogTopics) want(c.name, n, c.replicationFactor, c.topicConfigs);
  });
  if (wrong.length > 0) {
    status.push({ statusCode: StreamsStatus.INCORRECTLY_PARTITIONED_TOPICS, statusDetail: `Following topics are incorrectly partitioned: ${[...new Set(wrong)].sort().join(', ')}` });
  }
  if (missingInternal.length > 0) {
    status.push({ statusCode: StreamsStatus.MISSING_INTERNAL_TOPICS, statusDetail: `Internal topics are missing: [${[...new Set(missingInternal)].sort().join(', ')}]` });
  }
  const ready = status.length === 0;
  return { ready, tasks: ready ? tasks : new Map(), status, toCreate: wrong.length > 0 ? [] : toCreate, metadataHash: hash() };
}
